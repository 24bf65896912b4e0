"""Cache faults tried for real: a kill mid-write, racing pytest runs, read-only folders, foreign,
malformed and wrongly shaped entries of the real experiments.

engine/tests/test_cache.py has the basics (truncated entry, flipped byte, another key's entry, wrong
shapes, a folder under a regular file, racing scripts, a kill during the computation).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from claim_audit import cache
from fault_tools import (
    TIMEOUT_S,
    child_env,
    permission_honouring_prefix,
    pytest_command,
    run_python,
    tiny_pytest_env,
    write_test_folder,
)

from uncertainty_claims import cache as project_cache
from uncertainty_claims.calibration import experiment as calibration_experiment
from uncertainty_claims.calibration.training import TrainConfig
from uncertainty_claims.orders import uncertainty as uncertainty_results
from uncertainty_claims.uncertainty.config import UncertaintyConfig

pytestmark = pytest.mark.fault

X = np.arange(6.0).reshape(2, 3)


@pytest.fixture(autouse=True)
def said(monkeypatch) -> list[str]:
    """What the cache tells the user, captured instead of written to the terminal (and its
    events kept out of the run's report)."""
    lines: list[str] = []
    monkeypatch.setattr(cache, "progress_writer", lines.append)
    monkeypatch.setattr(cache, "EVENTS", [])
    return lines


def entries(folder: Path) -> dict[str, bytes]:
    """Every cache entry in `folder`, by name, with its bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.glob("*.npz"))}


def test_kill_between_temp_write_and_rename_loses_nothing(tmp_path, monkeypatch):
    """SIGKILL after the temp file is written, before the rename: no entry appears, other
    entries survive, a stale lock file does not block, and the re-run recomputes. Bug fixed:
    the dead writer's temp file stayed forever; the next writer of the entry, holding its
    lock, removes it (lib/cache.py `_write`)."""
    other = cache.cached("other", {"k": 0}, lambda: {"x": -X}, cache_dir=tmp_path)
    # Test-only hook, in the child only: os.replace (the rename) kills the process instead.
    child = run_python(
        f"""
        import os, signal, numpy as np
        from claim_audit import cache
        os.replace = lambda *args, **kwargs: os.kill(os.getpid(), signal.SIGKILL)
        cache.cached("entry", {{"k": 1}}, lambda: {{"x": np.zeros(3)}}, cache_dir={str(tmp_path)!r})
        """
    )
    assert child.returncode == -9, child.stderr
    assert len(list(tmp_path.glob(".entry-*.npz.*.tmp"))) == 1  # died holding a written temp file
    assert list(tmp_path.glob("entry-*.npz.lock"))  # and left its lock file behind
    assert set(entries(tmp_path)) == {other.path.name}

    monkeypatch.setattr(cache, "lock_timeout_s", 10)  # a stale lock would show as a Timeout
    again = cache.cached("entry", {"k": 1}, lambda: {"x": X}, cache_dir=tmp_path)
    assert again.status == "computed"
    np.testing.assert_array_equal(again.arrays["x"], X)
    assert not list(tmp_path.glob(".*.tmp"))
    kept = cache.cached("other", {"k": 0}, lambda: {"x": X}, cache_dir=tmp_path)
    assert kept.status == "hit"
    np.testing.assert_array_equal(kept.arrays["x"], -X)


RACE_MODULE = """
    import os, time
    from pathlib import Path

    import numpy as np
    import pytest

    from claim_audit import cache

    SHARED = Path(os.environ["RACE_DIR"])


    def compute():
        with open(SHARED / "computed.log", "a") as log:
            log.write("computed\\n")
        # Hold the lock until all three callers have arrived, so they really race.
        deadline = time.monotonic() + 60
        while len(list(SHARED.glob("arrived-*"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        return {"x": np.arange(3.0)}


    @pytest.mark.parametrize("caller", [0, 1])
    def test_entry(caller):
        (SHARED / f"arrived-{os.getpid()}-{caller}").touch()
        result = cache.cached("race", {"k": 1}, compute, cache_dir=SHARED / "cache")
        with open(SHARED / "status.log", "a") as log:
            log.write(result.status + "\\n")
        np.testing.assert_array_equal(result.arrays["x"], np.arange(3.0))
"""


def test_xdist_workers_and_a_second_pytest_run_compute_an_entry_once(tmp_path):
    """Two pytest-xdist workers and a second pytest process race for one entry: it is computed
    once, the other two callers read it, every run passes."""
    folder = write_test_folder(tmp_path / "tests", RACE_MODULE)
    env = tiny_pytest_env(RACE_DIR=str(tmp_path))
    runs = [
        # The xdist run takes both of its tests; the plain run only the first.
        subprocess.Popen(
            pytest_command("-q", "-p", "xdist.plugin", "-n", "2"),
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        ),
        subprocess.Popen(
            pytest_command("-q", "-k", "entry[0]"),
            cwd=folder,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        ),
    ]
    try:
        outputs = [run.communicate(timeout=120)[0] for run in runs]
    finally:
        for run in runs:
            run.kill()
            run.wait()
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert (tmp_path / "computed.log").read_text().splitlines() == ["computed"]
    assert sorted((tmp_path / "status.log").read_text().split()) == ["computed", "hit", "hit"]


READ_ONLY_CHILD = """
    import numpy as np
    from claim_audit import cache
    result = cache.cached("entry", {{"k": 1}}, lambda: {{"x": np.ones(3)}}, cache_dir={folder!r})
    print(result.status, result.arrays["x"].sum())
"""


@pytest.mark.parametrize("lock_exists", [False, True], ids=["no-lock-file", "old-lock-file"])
def test_read_only_cache_folder_runs_uncached_and_says_so(tmp_path, lock_exists):
    """A cache folder the user may not write (chmod 555), with or without an old lock file: the
    run still computes, says it is not caching, and leaves the folder's entries byte for byte
    as they were (as root the child runs under `setpriv` without CAP_DAC_OVERRIDE)."""
    prefix = permission_honouring_prefix(tmp_path / "probe")
    folder = tmp_path / "cache"
    cache.cached("other", {"k": 0}, lambda: {"x": X}, cache_dir=folder)
    if lock_exists:  # an earlier run left the entry's lock file: locking works, writing does not
        cache.cached("entry", {"k": 1}, lambda: {"x": X}, cache_dir=folder).path.unlink()
    before = entries(folder)
    folder.chmod(0o555)
    try:
        child = run_python(READ_ONLY_CHILD.format(folder=str(folder)), prefix=prefix)
    finally:
        folder.chmod(0o755)
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == ["uncached", "3.0"]
    if lock_exists:
        assert "could not write cache entry" in child.stderr
        assert "result not cached" in child.stderr
    else:
        assert f"cache folder {folder} is not writable" in child.stderr
        assert "running without a cache" in child.stderr
    assert entries(folder) == before
    assert not list(folder.glob(".*.tmp"))


@pytest.mark.parametrize(
    "fields",
    [
        {"__key__": np.array(["name", "key"]), "__checksum__": np.array("0")},  # a list layout
        {"__key__": np.array(b"bytes key"), "__checksum__": np.array(b"0")},
        {"__key__": np.array(7)},  # no checksum
        {},  # a bare npz without either field
    ],
    ids=["key-as-list", "key-as-bytes", "key-as-number", "no-fields"],
)
def test_entry_in_another_layout_is_recomputed_not_a_crash(tmp_path, said, fields):
    """An .npz under the entry's name laid out by another version (the key stored as a list,
    bytes or a number, or no fields at all): "belongs to another configuration", recomputed.
    Bug fixed: a key field that was not a 0-d array crashed the read with a ValueError
    (lib/cache.py `_text_field`)."""
    path = cache.cached("entry", {"a": 1}, lambda: {"x": X}, cache_dir=tmp_path).path
    with open(path, "wb") as handle:
        np.savez(handle, x=X + 1, **fields)
    result = cache.cached("entry", {"a": 1}, lambda: {"x": X}, cache_dir=tmp_path)
    assert result.status == "computed"
    np.testing.assert_array_equal(result.arrays["x"], X)
    assert any("belongs to another configuration" in line for line in said)


def stored_key(path: Path) -> dict:
    """The key an entry file carries."""
    with np.load(path) as npz:
        return json.loads(str(npz[cache._KEY_FIELD]))


def test_every_key_carries_the_package_source_and_the_stack_versions(tmp_path):
    """Every entry the project caches is keyed by its caller's key plus a digest of the
    package's whole source, the versions of the numerical stack (scipy and jaxlib included),
    JAX's backend and settings, and XLA_FLAGS (lib/cache.py `project_key`). Bugs fixed: keys
    that named only lib, jax and numpy, or listed their sources by hand, served results of
    older code or of another scipy."""
    path = project_cache.cached("entry", {"k": 1}, lambda: {"x": X}, cache_dir=tmp_path).path
    key = stored_key(path)
    assert key["k"] == 1 and key["package_source"] == cache.package_digest("uncertainty_claims")
    assert set(key["versions"]) == {"uncertainty_claims", *project_cache.STACK}
    assert {"backend", "jax_settings", "xla_flags"} <= set(key)


def test_with_no_store_each_result_is_computed_each_time():
    """The library stands alone: with no store named (`keep_results_in(None)`), `cached`
    computes each result each time, checks it with `validate`, and keeps none."""
    calls = []

    def compute() -> dict:
        calls.append(1)
        return {"x": X}

    def expect_y(arrays: dict) -> None:
        if set(arrays) != {"y"}:
            raise ValueError(f"expected y; got {sorted(arrays)}")

    project_cache.keep_results_in(None)
    try:
        first = project_cache.cached("entry", {"k": 1}, compute)
        again = project_cache.cached("entry", {"k": 1}, compute)
        with pytest.raises(ValueError, match=r"expected y; got \['x'\]"):
            project_cache.cached("entry", {"k": 1}, compute, validate=expect_y)
    finally:
        project_cache.keep_results_in(cache.cached)  # as the root conftest.py names it
    assert len(calls) == 3 and first.status == again.status == "uncached"
    assert np.array_equal(first.arrays["x"], X)


# A child prints the key of the uncertainty recipe's entry (root key 0) under its settings.
KEY_CHILD = """
    import json
    from uncertainty_claims.cache import project_key
    print(json.dumps(project_key(), sort_keys=True))
"""


def test_a_child_with_the_same_jax_settings_gets_the_same_key():
    """This process (the plugin turned the compiled-program cache on, which is not keyed) and a
    plain child with the suite's settings agree on the key: they share entries."""
    child = run_python(KEY_CHILD)
    assert child.returncode == 0, child.stderr
    assert json.loads(child.stdout) == project_cache.project_key()


@pytest.mark.parametrize(
    "setting",
    [
        {"JAX_ENABLE_X64": "1"},
        {"JAX_THREEFRY_PARTITIONABLE": "0"},
        {"JAX_DEFAULT_MATMUL_PRECISION": "bfloat16"},
    ],
    ids=["x64", "threefry-not-partitionable", "bfloat16-matmuls"],
)
def test_jax_setting_that_changes_numbers_is_another_entry(setting):
    """A JAX setting that changes the numbers (JAX_ENABLE_X64=1, JAX_THREEFRY_PARTITIONABLE=0,
    bfloat16 matmuls) gives another key: such a run never reads the default run's entry, nor
    serves it. Bug fixed: the key named only versions, backend and XLA_FLAGS, so an x64 run's
    float64 entry was later served to a default run, and a claim was REFUTED on those numbers
    (lib/jax_facts.py `jax_settings`, lib/cache.py `runtime_key`: every `jax.config` option except where
    programs are kept and what is logged)."""
    changed = run_python(KEY_CHILD, env=child_env(**setting))
    assert changed.returncode == 0, changed.stderr
    assert json.loads(changed.stdout) != project_cache.project_key()


def test_entry_of_another_version_is_not_served(tmp_path, monkeypatch, said):
    """The entry of the same key under an older flax, copied into place: recomputed. Bug
    fixed: a result trained under another flax, optax or jaxlib was served (lib/cache.py
    `library_versions`)."""
    key = {"k": 1, **project_cache.project_key()}
    older = {**key, "versions": {**key["versions"], "flax": "0.0.1"}}
    stale = cache.cached("result", older, lambda: {"x": -X}, cache_dir=tmp_path).path
    current = cache.cached("result", key, lambda: {"x": X}, cache_dir=tmp_path).path
    assert stale != current
    current.write_bytes(stale.read_bytes())
    result = cache.cached("result", key, lambda: {"x": X}, cache_dir=tmp_path)
    assert result.status == "computed"
    np.testing.assert_array_equal(result.arrays["x"], X)


def fake_uncertainty_arrays(config: UncertaintyConfig) -> dict[str, np.ndarray]:
    """Arrays of a run's shapes (zeros; masks all True), as the real run would store them."""
    shapes = uncertainty_results._result_shapes(config)
    arrays = {name: np.zeros(shape, np.float32) for name, shape in shapes.items()}
    arrays |= {m: np.ones(shapes[m], bool) for m in ("in_cluster", "away", "gap", "tails")}
    return arrays | {"root_seed": np.array(0), "bootstrap_idx": np.zeros((5, 120), np.int32)}


class FakeRun:
    """Stands in for `run()`: counts the calls, returns well-shaped arrays."""

    def __init__(self, arrays: dict[str, np.ndarray]):
        self.arrays, self.calls = arrays, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self

    def as_arrays(self) -> dict[str, np.ndarray]:
        return dict(self.arrays)


@pytest.mark.parametrize(
    "damage",
    [
        lambda a: a | {"mc_loss": a["mc_loss"][:-1]},  # one step short
        lambda a: a | {"ens_grid_means": a["ens_grid_means"][:3]},  # three members, not five
        lambda a: {k: v for k, v in a.items() if k != "gap"},
    ],
    ids=["short-trace", "fewer-members", "missing-field"],
)
def test_uncertainty_entry_with_wrong_shapes_is_recomputed(tmp_path, monkeypatch, damage):
    """A stored uncertainty run with the right key but wrong shapes (a trace one step short,
    fewer ensemble members, a missing field): recomputed. Bug fixed: the validator checked
    only two fields, so such entries were served; every field's shape now follows from the
    config (lib/orders/uncertainty.py `_result_shapes`, `_check_shapes`)."""
    monkeypatch.setenv("CLAIMS_CACHE_DIR", str(tmp_path))
    config = UncertaintyConfig()
    good = fake_uncertainty_arrays(config)
    key = uncertainty_results._key(config, root_seed=0)
    cache.cached("uncertainty-seed0", key, lambda: damage(good))  # planted without validation
    fake = FakeRun(good)
    monkeypatch.setattr(uncertainty_results, "run", fake)
    result = uncertainty_results.uncertainty_result.__wrapped__(0)
    assert fake.calls == 1
    assert result.mc_loss.shape == (500,) and result.ens_grid_means.shape == (5, 200, 1)


def test_root_key_runs_entry_with_wrong_shapes_is_recomputed(tmp_path, monkeypatch):
    """A stored entry of the root-key reruns holding 5 runs instead of 20 (the typicality and
    the spread would be off): recomputed. Bug fixed: the spreads had no validator, and a
    short spread silently changes every tolerance (lib/orders/uncertainty.py
    `_check_shapes`)."""
    monkeypatch.setenv("CLAIMS_CACHE_DIR", str(tmp_path))
    config = UncertaintyConfig()
    good = fake_uncertainty_arrays(config)
    key = uncertainty_results.root_seed_spread_key(config)
    five = {name: np.stack([array] * 5) for name, array in good.items()}
    cache.cached("uncertainty-root-keys", key, lambda: five)  # planted without validation
    calls = []

    def compute(config):
        calls.append("root_keys")
        return [uncertainty_results.UncertaintyResult.from_arrays(good)] * len(
            uncertainty_results.SPREAD_ROOT_SEEDS
        )

    monkeypatch.setattr(uncertainty_results, "_run_root_keys", compute)
    runs = uncertainty_results.root_key_runs.__wrapped__(config)
    assert calls == ["root_keys"] and len(runs) == 20


@pytest.mark.parametrize(
    "damage",
    [
        lambda a: a | {"logits_test": np.full_like(a["logits_test"], np.nan)},
        lambda a: a | {"kmax_ood": np.full_like(a["kmax_ood"], np.inf)},
        lambda a: a | {"logits_heldout": a["logits_heldout"][:, :-1]},
        lambda a: {k: v for k, v in a.items() if k != "train_loss"},
    ],
    ids=["nan-logits", "inf-kernel-scores", "short-heldout", "missing-losses"],
)
def test_calibration_entry_with_nan_or_wrong_shapes_is_refused(damage):
    """A stored or fresh calibration result holding NaN or inf logits or kernel scores, or of
    the wrong shapes, fails its validator: a stored entry is recomputed, a fresh result is an
    error, never used."""
    split = SimpleNamespace(
        train_y=np.zeros(1000), heldout_y=np.zeros(50), test_y=np.zeros(40), ood_x=np.zeros(30)
    )
    config = TrainConfig(epochs=2, batch_size=100)  # 2 epochs x 9 batches
    validate = calibration_experiment.validator("yat", 1, split, config)
    good = {
        "train_loss": np.zeros((1, 18)),
        "logits_test": np.zeros((1, 40, 10)),
        "logits_heldout": np.zeros((1, 50, 10)),
        "logits_ood": np.zeros((1, 30, 10)),
        "kmax_test": np.zeros((1, 40)),
        "kmax_ood": np.zeros((1, 30)),
    }
    validate(good)
    with pytest.raises(ValueError, match=r"NaN or inf|expected arrays"):
        validate(damage(good))


def test_a_changed_scipy_version_misses_the_cache(tmp_path, monkeypatch):
    """An entry computed under another scipy (used by the calibration figures and the
    bootstrap) is another entry: scipy is in the stack every key names. Bug fixed: the keys
    named a hand list of packages without scipy, so such an entry was served."""
    first = project_cache.cached("figures", {"k": 1}, lambda: {"x": X}, cache_dir=tmp_path)
    again = project_cache.cached("figures", {"k": 1}, lambda: {"x": X}, cache_dir=tmp_path)
    assert again.status == "hit"
    real_version = project_cache.importlib.metadata.version
    monkeypatch.setattr(
        project_cache.importlib.metadata,
        "version",
        lambda name: "1.0.0" if name == "scipy" else real_version(name),
    )
    project_cache._library_versions.cache_clear()
    try:
        other = project_cache.cached("figures", {"k": 1}, lambda: {"x": X}, cache_dir=tmp_path)
    finally:
        monkeypatch.undo()
        project_cache._library_versions.cache_clear()
    assert other.status == "computed" and other.path != first.path


def test_the_package_source_is_digested_in_any_locale():
    """`LC_ALL=C PYTHONUTF8=0`: the package's source (UTF-8) is digested as bytes, the same
    digest as here. Bug fixed: 22 UnicodeDecodeError at collection, the sources read in the
    locale's encoding."""
    child = run_python(
        "from uncertainty_claims import cache; print(cache.PACKAGE_SOURCE)",
        env=child_env(LC_ALL="C", LANG="C", PYTHONUTF8="0", PYTHONIOENCODING=""),
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == project_cache.PACKAGE_SOURCE


def test_a_fifo_in_an_entrys_place_is_replaced_not_waited_on(tmp_path):
    """A FIFO where an entry's file belongs: the entry is recomputed and stored in its place,
    saying the file is not a regular one; nothing waits on the FIFO. Bug fixed: the read
    opened the FIFO and waited for a writer forever (till the test's budget, 1800 s)
    (lib/cache.py `_read`: opened without blocking, non-regular files refused)."""
    child = run_python(
        f"""
        import os
        import numpy as np
        from claim_audit import cache
        folder = {str(tmp_path)!r}
        first = cache.cached("entry", {{"k": 1}}, lambda: {{"x": np.zeros(3)}}, cache_dir=folder)
        os.unlink(first.path)
        os.mkfifo(first.path)
        again = cache.cached("entry", {{"k": 1}}, lambda: {{"x": np.ones(3)}}, cache_dir=folder)
        print(again.status, cache.cached("entry", {{"k": 1}}, None, cache_dir=folder).status)
        """
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.split() == ["computed", "hit"]
    assert "is not a regular file; recomputing" in child.stderr


HOLDER = """
    import sys, time
    from filelock import FileLock
    with FileLock(sys.argv[1]):
        print("held", flush=True)
        time.sleep(60)
"""


@pytest.fixture
def held_lock(tmp_path):
    """An entry's lock held by another live process: (the entry's lock path, its pid)."""
    first = cache.cached("entry", {"a": 1}, lambda: {"x": X}, cache_dir=tmp_path)
    lock = f"{first.path}.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(HOLDER), lock],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline() == "held\n"
        yield lock, holder.pid
    finally:
        holder.kill()
        holder.communicate()  # reaps it and closes its pipe


def test_a_held_lock_is_said_with_its_holder_and_waited_on_for_a_bounded_time(
    tmp_path, monkeypatch, said, held_lock
):
    """Another live process holds an entry's lock: after a short wait the cache says which
    lock it waits for and who holds it (pid and command line, from /proc/locks), and after
    `lock_timeout_s` it computes the entry itself, uncached, naming the holder again. Bug
    fixed: it waited silently for an hour (engine/claim_audit/cache.py `cached`, `lock_holder`)."""
    lock, pid = held_lock
    monkeypatch.setattr(cache, "lock_timeout_s", 1.0)
    result = cache.cached("entry", {"a": 1}, lambda: {"x": -X}, cache_dir=tmp_path)
    assert result.status == "uncached"
    np.testing.assert_array_equal(result.arrays["x"], -X)
    holder = f"process {pid} ({sys.executable} -c "
    assert any(
        line.startswith(f"[claims] waiting for entry: {lock} is held by {holder}") for line in said
    ), said
    assert any(f"{lock} has been held by {holder}" in line for line in said), said


LOCK_MODULE = """
    import numpy as np
    from claim_audit import cache

    def test_reads_the_entry():
        cache.cached("entry", {"a": 1}, lambda: {"x": np.ones(1)})
"""


def test_a_held_lock_is_bounded_by_the_test_budget(tmp_path, held_lock):
    """Under pytest with --timeout 2, a test whose cache entry's lock another process holds:
    the wait is said, naming the lock and its holder, and ends with the budget. Bug fixed: the
    lock was waited on silently (engine/claim_audit/report/plugin.py sets `cache.lock_timeout_s` to the
    budget)."""
    lock, pid = held_lock
    folder = write_test_folder(tmp_path / "project", LOCK_MODULE)
    result = subprocess.run(
        pytest_command("-p", "timeout", "-p", "claim_audit.report.plugin", "--timeout", "2"),
        cwd=folder,
        env=tiny_pytest_env(CLAIMS_CACHE_DIR=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert f"waiting for entry: {lock} is held by process {pid} (" in result.stderr, result.stderr
    assert "waiting at most 2 s" in result.stderr
