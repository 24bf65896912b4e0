"""Determinism: cold runs in fresh processes, each with its own empty result cache, store
bit-identical results (their compiled programs may come from the run's compilation cache,
lib/placement/_compile_cache.py: the machine code a fresh compile gives); a run killed during training leaves nothing behind and its re-run matches; the audit
JSON built twice from the same records is identical apart from its timing fields.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from claim_audit.engine.claim import ClaimRecord
from claim_audit.report import audit
from fault_tools import REPO_ROOT, TIMEOUT_S, child_env, run_python
from readings.calibration.document import DOCUMENT as calibration_doc
from readings.uncertainty.document import DOCUMENT as uncertainty_doc

UNCERTAINTY_CHILD = """
    from claim_audit import cache
    from uncertainty_claims.cache import keep_results_in
    from uncertainty_claims.placement._compile_cache import enable_compilation_cache
    from uncertainty_claims.orders.uncertainty import uncertainty_result
    keep_results_in(cache.cached)
    enable_compilation_cache(cache.default_cache_dir())
    uncertainty_result()
"""

# The calibration recipe's real cached path, on one seed and one epoch (a few seconds).
CALIBRATION_CHILD = """
    import sys
    from pathlib import Path
    from claim_audit import cache
    from uncertainty_claims.cache import keep_results_in
    from uncertainty_claims.orders.calibration import run_net
    from uncertainty_claims.calibration.training import TrainConfig
    from uncertainty_claims.placement._compile_cache import enable_compilation_cache

    keep_results_in(cache.cached)
    enable_compilation_cache(cache.default_cache_dir())

    def progress(line):
        print(line, file=sys.stderr, flush=True)
        if "computing" in line:  # training starts now: tell the test
            Path({marker!r}).touch()

    cache.progress_writer = progress
    print(run_net("yat", (0,), TrainConfig(epochs=1)).cache_status)
"""


def stored(folder: Path) -> dict[str, dict[str, tuple[str, tuple, bytes]]]:
    """Every entry in a cache folder: each array's dtype, shape and raw bytes (key included)."""
    out = {}
    for path in sorted(folder.glob("*.npz")):
        with np.load(path) as npz:
            out[path.name] = {n: (npz[n].dtype.str, npz[n].shape, npz[n].tobytes()) for n in npz}
    return out


def start(script: str, cache_dir: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(script)],
        cwd=REPO_ROOT,
        env=child_env(CLAIMS_CACHE_DIR=str(cache_dir)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


# A cold faithful uncertainty run (MC-Dropout loop, 1,000 replayed eager ensemble steps, all
# compiled afresh) takes about 60 s alone on 2 cores; two run side by side with the other
# xdist worker busy, so up to three times that, with room to spare: a harness limit, not a
# figure of the test.
COLD_RUN_TIMEOUT_S = 360


def finish(child: subprocess.Popen, timeout: float = TIMEOUT_S) -> str:
    """Wait for a child to succeed; return its stdout."""
    out, err = child.communicate(timeout=timeout)
    assert child.returncode == 0, err
    return out


@contextlib.contextmanager
def reaped(*children: subprocess.Popen):
    """Kill whichever of `children` still runs when the block ends (e.g. on a failure)."""
    try:
        yield
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
            child.communicate()


@pytest.mark.slow
@pytest.mark.gate
def test_uncertainty_cold_runs_are_bit_identical(tmp_path):
    """The uncertainty recipe (root key 0, full config) trained twice, in two fresh processes
    with empty caches: every stored array is bit-identical."""
    runs = [start(UNCERTAINTY_CHILD, tmp_path / name) for name in ("a", "b")]
    with reaped(*runs):
        for child in runs:
            finish(child, timeout=COLD_RUN_TIMEOUT_S)
    first, second = stored(tmp_path / "a"), stored(tmp_path / "b")
    assert len(first) == 1 and first.keys() == second.keys()
    assert first == second


@pytest.mark.slow
@pytest.mark.gate
@pytest.mark.fault
def test_training_killed_midway_then_rerun_matches_a_cold_run(tmp_path):
    """SIGKILL during calibration training (Yat net, one seed, one epoch): no entry is left, the
    re-run on the same cache trains from scratch, and its arrays are bit-identical to an
    independent cold run's."""
    marker = tmp_path / "training-started"
    reference = start(CALIBRATION_CHILD.format(marker=str(tmp_path / "unused")), tmp_path / "a")
    killed = start(CALIBRATION_CHILD.format(marker=str(marker)), tmp_path / "b")
    with reaped(reference, killed):
        deadline = time.monotonic() + TIMEOUT_S
        while not marker.exists() and killed.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), "the child never started training"
        time.sleep(1.0)
        killed.kill()
        killed.communicate()
        assert killed.returncode == -9
        assert stored(tmp_path / "b") == {}  # killed before anything was stored

        rerun = run_python(
            CALIBRATION_CHILD.format(marker=str(marker)),
            env=child_env(CLAIMS_CACHE_DIR=str(tmp_path / "b")),
        )
        assert rerun.returncode == 0, rerun.stderr
        assert rerun.stdout.split() == ["computed"]
        assert finish(reference).split() == ["computed"]
    first, second = stored(tmp_path / "a"), stored(tmp_path / "b")
    assert len(first) == 1 and first == second


def test_audit_json_is_identical_when_built_twice(calibration, uncertainty):
    """The audit JSON built twice from the same records and experiments is identical, once the
    creation time and wall time are set aside."""
    records = [
        ClaimRecord(f"{doc[:3]}-1", doc, "S", "a claim", "1.0", "1.0", "± 0.1", "holds", {})
        for doc in ("calibration", "uncertainty")
    ]

    def build(wall_s: float) -> str:
        built = audit.build(records, {}, [], wall_s, documents=[calibration_doc, uncertainty_doc])
        del built["metadata"]["created_unix"], built["metadata"]["wall_s"]
        return json.dumps(built, indent=2, allow_nan=False)

    assert build(1.0) == build(2.0)
