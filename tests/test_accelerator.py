"""One accelerator, several processes (lib/placement/_devices.py): which process of a run
holds the chip, how a machine with one is recognised without opening it, where the faithful
orders compute, and the start-up warnings of other packages that must not end a run. All of
it runs on a CPU: the accelerator is stood in for."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import tomllib
from pathlib import Path

import jax
import numpy as np
import pytest
from fault_tools import REPO_ROOT, TIMEOUT_S, child_env

from uncertainty_claims.cache import runtime_key
from uncertainty_claims.placement import _devices as accelerator


def machine(tmp_path: Path, *nodes: str) -> Path:
    """A fresh /dev holding `nodes`."""
    dev = tmp_path / f"dev{len(list(tmp_path.glob('dev*')))}"
    dev.mkdir()
    for node in nodes:
        (dev / node).parent.mkdir(parents=True, exist_ok=True)
        (dev / node).touch()
    return dev


def test_a_tpu_is_its_plugin_and_its_device_nodes(tmp_path):
    libtpu = {"libtpu"}.__contains__
    assert accelerator.accelerator_platform({}, machine(tmp_path, "vfio/0"), libtpu) == "tpu"
    assert accelerator.accelerator_platform({}, machine(tmp_path, "accel0"), libtpu) == "tpu"
    # libtpu installed on a machine without the chip; the chip without libtpu: no TPU.
    assert accelerator.accelerator_platform({}, machine(tmp_path), libtpu) is None
    none = set().__contains__
    assert accelerator.accelerator_platform({}, machine(tmp_path, "vfio/0"), none) is None
    # No device node, but a Google chip on the PCI bus, as JAX's start-up finds one.
    pci = tmp_path / "pci"
    for device, vendor in (("0000:00:04.0", "0x1ae0\n"), ("0000:00:05.0", "0x8086\n")):
        (pci / device).mkdir(parents=True)
        (pci / device / "vendor").write_text(vendor)
    assert accelerator.accelerator_platform({}, machine(tmp_path), libtpu, pci) == "tpu"
    assert accelerator.accelerator_platform({}, machine(tmp_path), none, pci) is None


def test_a_gpu_is_its_jax_plugin_and_its_device_nodes(tmp_path):
    cuda = {"jax_cuda12_plugin"}.__contains__
    assert accelerator.accelerator_platform({}, machine(tmp_path, "nvidia0"), cuda) == "gpu"
    assert accelerator.accelerator_platform({}, machine(tmp_path, "nvidiactl"), cuda) is None


@pytest.mark.parametrize(
    ("platforms", "expected"),
    [("cpu", None), ("tpu", "tpu"), ("cuda,cpu", "gpu"), ("cpu,tpu", None), ("TPU", "tpu")],
)
def test_jax_platforms_decides_when_set(tmp_path, platforms, expected):
    """JAX_PLATFORMS names the default platform first, whatever the machine holds."""
    dev = machine(tmp_path, "vfio/0", "nvidia0")
    everything = lambda module: True  # noqa: E731
    found = accelerator.accelerator_platform({"JAX_PLATFORMS": platforms}, dev, everything)
    assert found == expected


def test_this_cpu_machine_has_no_accelerator():
    """The check the suite makes on every run finds none here, so nothing changes on a CPU."""
    if jax.default_backend() != "cpu":
        pytest.skip("a machine with an accelerator")
    assert accelerator.accelerator_platform() is None


@pytest.mark.parametrize(
    ("worker", "workers", "holds"),
    [(None, 0, True), (None, 4, False), ("gw0", 4, True), ("gw1", 4, False), ("gw12", 13, False)],
)
def test_one_process_of_a_run_holds_the_accelerator(worker, workers, holds):
    """The controller of a run without workers (-n 0), else worker gw0 alone."""
    assert accelerator.holds_accelerator(worker, workers) is holds


PLACE = """
    import json, os, sys
    from uncertainty_claims.placement import _devices as accelerator
    accelerator.accelerator_platform = lambda: "tpu"  # a TPU machine, stood in for
    worker = None if sys.argv[1] == "-" else sys.argv[1]
    accelerator.place_processes(worker, int(sys.argv[2]))
    import jax
    print(json.dumps({"config": jax.config.jax_platforms, "env": os.environ.get("JAX_PLATFORMS")}))
"""


@pytest.mark.parametrize(
    ("worker", "workers", "config", "children"),
    [
        ("-", 0, None, "cpu"),  # holds it; its children (the timing claim's example) do not
        ("gw0", 3, None, "cpu"),
        ("gw1", 3, "cpu", "cpu"),
        ("-", 3, "cpu", None),  # the controller keeps off it, its workers decide for themselves
    ],
)
def test_placement_of_each_process_on_a_tpu_machine(worker, workers, config, children):
    """What each process of a run does with JAX_PLATFORMS and JAX's config, before JAX starts
    a backend: this process's config, and the variable its child processes inherit."""
    env = child_env()
    env.pop("JAX_PLATFORMS", None)
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PLACE), worker, str(workers)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"config": config, "env": children}


def test_the_host_placement_changes_nothing_on_a_cpu():
    if jax.default_backend() != "cpu":
        pytest.skip("a machine with an accelerator")
    with accelerator.host_placement():
        assert jax.config.jax_default_device is None


def test_cache_keys_record_where_the_entry_is_computed():
    """The key's backend is the platform of this thread's default device, so an order
    computed on the host's CPU beside an accelerator has the CPU's key."""
    cpu = jax.devices("cpu")[0]
    with jax.default_device(cpu):
        assert accelerator.computing_platform() == "cpu"
        assert runtime_key()["backend"] == "cpu"
    assert runtime_key()["backend"] == jax.default_backend()
    assert "jax_platforms" not in runtime_key()["jax_settings"]


def test_a_thread_computes_where_its_caller_placed_it():
    cpu = jax.devices("cpu")[0]
    seen = []
    with jax.default_device(cpu):
        placed = accelerator.carry_placement(lambda: seen.append(jax.config.jax_default_device))
    thread = threading.Thread(target=placed)
    thread.start()
    thread.join()
    assert seen == [cpu]


def test_side_by_side_keeps_the_faithful_order_first_on_a_cpu():
    if jax.default_backend() != "cpu":
        pytest.skip("a machine with an accelerator")
    calls: list[str] = []
    assert accelerator.side_by_side(
        lambda: calls.append("faithful") or 1, lambda: calls.append("others") or 2
    ) == (1, 2)
    assert calls == ["faithful", "others"]


WARNS = """
    import warnings

    def pytest_configure(config):
        for message, category, module in {warnings!r}:
            category = {{"UserWarning": UserWarning, "PytestWarning": __import__("pytest").PytestWarning}}[category]
            warnings.warn_explicit(message, category, "x.py", 1, module=module)
"""


def run_with_the_suites_filters(tmp_path: Path, warnings: list[tuple[str, str, str]]):
    ini = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["pytest"]
    lines = "".join(f"    {line}\n" for line in ini["ini_options"]["filterwarnings"])
    (tmp_path / "pytest.ini").write_text(f"[pytest]\nfilterwarnings =\n{lines}")
    (tmp_path / "conftest.py").write_text(textwrap.dedent(WARNS.format(warnings=warnings)))
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(tmp_path)],
        cwd=tmp_path,
        env=child_env(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


STARTUP_WARNINGS = [
    (
        "Transparent hugepages are not enabled. TPU runtime ...",
        "UserWarning",
        # The module JAX warns from, as pyproject.toml's filter names it: a name matched
        # against the warning's origin, never imported.
        "jax._src.cloud_tpu_init",
    ),
    ("cloud_tpu_init failed: RuntimeError('x')", "UserWarning", "jax"),
    (
        "Benchmarks are automatically disabled because xdist plugin is active.Benchmarks ...",
        "PytestWarning",
        "pytest_benchmark.logger",
    ),
]


def test_other_packages_startup_warnings_do_not_end_a_run(tmp_path):
    """JAX's notes on a TPU machine and pytest-benchmark's under xdist, issued while pytest
    configures (where they ended the TPU run in INTERNALERROR), are shown, not errors."""
    done = run_with_the_suites_filters(tmp_path, STARTUP_WARNINGS)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


@pytest.mark.parametrize("warning", STARTUP_WARNINGS)
def test_the_same_words_from_the_suites_code_are_still_errors(tmp_path, warning):
    message, category, _ = warning
    done = run_with_the_suites_filters(tmp_path, [(message, category, "uncertainty_claims.x")])
    assert done.returncode != 0
    assert "INTERNALERROR" in done.stdout + done.stderr


# --- The guide's reruns on one accelerator (lib/orders/uncertainty.py, ablations.py) -------


def _stand_in_accelerator(monkeypatch: pytest.MonkeyPatch) -> None:
    """This CPU taken for a one-accelerator machine by the reruns' code paths."""
    from uncertainty_claims import sharding
    from uncertainty_claims.placement import _arithmetic, _devices

    for module in (_devices, _arithmetic):
        monkeypatch.setattr(module, "computing_platform", lambda: "tpu")
    monkeypatch.setattr(sharding, "default_mesh", lambda: None)


def test_reruns_on_one_accelerator_split_between_host_and_chip(monkeypatch):
    """The first half of the runs batched (run_many, as on a CPU), the rest one by one through
    run()'s scan programs; in the runs' order. MC-Dropout trains unbatched both ways, so its
    losses equal run()'s bit for bit; the ensembles are two valid orders."""
    from uncertainty_claims.orders.uncertainty import _reruns
    from uncertainty_claims.placement import where
    from uncertainty_claims.uncertainty.config import UncertaintyConfig
    from uncertainty_claims.uncertainty.experiment import run

    config = UncertaintyConfig(mc_steps=8, mc_samples=3, ensemble_steps=6)
    seeds, nudges = [0, 0, 0, 0], [1, 2, 3, 4]
    _stand_in_accelerator(monkeypatch)
    runs = _reruns(seeds, nudges, config)
    assert where().split_at(len(seeds)) == 2
    assert len(runs) == len(seeds)
    for result, nudge in zip(runs, nudges, strict=True):
        alone = run(0, config=config, implementation="scan", nudge=nudge)
        assert (result.mc_loss == alone.mc_loss).all()
        assert result.ens_loss.shape == alone.ens_loss.shape
    for result, nudge in zip(runs[2:], nudges[2:], strict=True):  # the accelerator's: run()'s
        alone = run(0, config=config, implementation="scan", nudge=nudge)
        assert (result.ens_loss == alone.ens_loss).all()


def test_no_bootstrap_twins_follow_their_twins_split(monkeypatch):
    """The ablation's twins are split as the twins are: the first half batched, the rest one
    by one, in the nudges' order, and one run alone gives what the batch gives it."""
    from uncertainty_claims.orders import ablations
    from uncertainty_claims.uncertainty import no_bootstrap
    from uncertainty_claims.uncertainty.config import UncertaintyConfig

    config = UncertaintyConfig(mc_steps=8, mc_samples=3, ensemble_steps=6)
    nudges = (1, 2, 3)
    _stand_in_accelerator(monkeypatch)
    split = ablations._twins_without_bootstrap(nudges, config)
    assert split.shape == (3, config.members, 200, 1)
    assert (split[:1] == no_bootstrap.batched_without_bootstrap(nudges[:1], config)).all()
    assert (split[1:] == no_bootstrap.one_by_one_without_bootstrap(nudges[1:], config)).all()


def test_calibration_twins_split_between_host_and_chip(monkeypatch):
    """`Where.spread` without a one-by-one path (the calibration's twin batches): all batched
    here on a CPU-only machine; on one accelerator split as with one (the first half here, on the host's
    CPU, the rest beside it in a thread of its own), in the items' order; the cache keys name
    both backends."""
    import threading

    from uncertainty_claims.placement import where

    def batched(items):
        return [(item, threading.current_thread().name) for item in items]

    here = threading.current_thread().name
    assert where().spread(batched, [1, 2, 3, 4]) == [(i, here) for i in (1, 2, 3, 4)]
    assert where().backends == ["cpu"]
    _stand_in_accelerator(monkeypatch)
    got = where().spread(batched, [1, 2, 3, 4, 5])
    assert [item for item, _ in got] == [1, 2, 3, 4, 5]
    assert all(name == here for _, name in got[:2])
    assert all(name.startswith("other-arithmetic") for _, name in got[2:])
    assert where().backends == ["cpu", "tpu"]


def test_the_accelerator_opens_in_the_background_and_its_errors_wait_for_a_computation(
    monkeypatch,
):
    """`open_in_background` starts JAX's backends in a thread of their own, so that opening
    a chip overlaps collecting the tests; a start that fails is met again by the first
    computation, and the thread itself raises nothing (pytest would report it apart)."""
    opened = []

    def devices():
        opened.append(threading.current_thread().name)
        raise RuntimeError("libtpu is held by another process")

    monkeypatch.setattr(jax, "devices", devices)
    thread = accelerator.open_in_background()
    thread.join(TIMEOUT_S)
    assert not thread.is_alive() and opened == ["open-accelerator"]


def _host_children(monkeypatch: pytest.MonkeyPatch) -> list:
    """This CPU taken for a machine with an accelerator by `on_the_host`; the functions it
    hands to a child process, as it hands them."""
    from uncertainty_claims.placement import _child as cpu_child

    children, in_cpu_child = [], cpu_child.in_cpu_child

    def in_child(function, *args, **kwargs):
        children.append(function)
        return in_cpu_child(function, *args, **kwargs)

    monkeypatch.setattr(cpu_child, "in_cpu_child", in_child)
    monkeypatch.setattr(jax, "default_backend", lambda: "tpu")
    return children


def test_an_orders_health_checks_beside_an_accelerator_compute_in_a_host_child(monkeypatch):
    """An order's health checks (the held-out NLL at 402 temperatures per seed: thousands of
    small NumPy calls) compute here where JAX computes on the CPU, and beside an accelerator
    in a child process on the host's CPU, where no thread that keeps the chip busy holds the
    interpreter lock between them: the same to the bit (synthetic outputs)."""
    from test_evaluation_cache import synthetic
    from test_health_cache import as_json

    from uncertainty_claims.calibration import evaluation, health
    from uncertainty_claims.orders.calibration import compute_calibration_health

    runs, split = synthetic((4, 7))
    figures = {net: evaluation.evaluate(run, split) for net, run in runs.items()}
    results = evaluation.CalibrationResults(split, runs, figures)
    here = as_json(compute_calibration_health(results))
    children = _host_children(monkeypatch)
    assert as_json(compute_calibration_health(results)) == here
    assert children == [health.health_of]


def test_the_calibration_faithful_order_beside_an_accelerator_trains_in_a_host_child(
    monkeypatch, tmp_path
):
    """The calibration's faithful order trains in a child process on the host's CPU beside
    an accelerator, reading the split there: its outputs are this process's to the bit (one
    seed, one epoch)."""
    from uncertainty_claims.calibration import experiment
    from uncertainty_claims.calibration.training import TrainConfig
    from uncertainty_claims.orders.calibration import run_net

    monkeypatch.setenv("CLAIMS_CACHE_DIR", str(tmp_path / "here"))
    config = TrainConfig(epochs=1)
    here = run_net("relu", (0,), config)
    children = _host_children(monkeypatch)
    monkeypatch.setenv("CLAIMS_CACHE_DIR", str(tmp_path / "there"))
    there = run_net("relu", (0,), config)
    assert children == [experiment.train_faithful]
    assert here.cache_status == there.cache_status == "computed"
    for name in ("logits_test", "logits_heldout", "logits_ood", "train_loss"):
        assert np.array_equal(getattr(here, name), getattr(there, name)), name


def test_a_faithful_order_beside_an_accelerator_computes_in_a_host_child(monkeypatch):
    """`on_the_host`: here where JAX computes on the CPU; else in a child process on the
    host's CPU, whose figures are this process's to the bit (the guide's faithful order, a
    short config)."""

    from uncertainty_claims.orders.uncertainty import _run_arrays
    from uncertainty_claims.placement import _devices as accelerator
    from uncertainty_claims.uncertainty.config import UncertaintyConfig

    config = UncertaintyConfig(mc_steps=8, mc_samples=3, ensemble_steps=6)
    here = accelerator.on_the_host(_run_arrays, 0, config, "faithful")
    children = _host_children(monkeypatch)
    there = accelerator.on_the_host(_run_arrays, 0, config, "faithful")
    assert children == [_run_arrays]
    assert here.keys() == there.keys()
    assert all(np.array_equal(here[name], there[name]) for name in here)


def test_the_unclamped_runs_beside_an_accelerator_compute_in_a_host_child(monkeypatch, tmp_path):
    """The recipe without its clamp (21 root keys in one program) computes in a child process
    on the host's CPU beside an accelerator, where its program compiles in a fraction of a
    chip's time: the same arrays to the bit (a short config)."""
    from uncertainty_claims.orders.ablations import unclamped_runs
    from uncertainty_claims.uncertainty import unclamped
    from uncertainty_claims.uncertainty.config import UncertaintyConfig

    config = UncertaintyConfig(mc_steps=8, mc_samples=3, ensemble_steps=6)
    monkeypatch.setenv("CLAIMS_CACHE_DIR", str(tmp_path / "here"))
    here = unclamped_runs(config)
    children = _host_children(monkeypatch)
    monkeypatch.setenv("CLAIMS_CACHE_DIR", str(tmp_path / "there"))
    there = unclamped_runs(config)
    assert children == [unclamped.train_unclamped]
    assert here.keys() == there.keys()
    assert all(np.array_equal(here[name], there[name]) for name in here)
