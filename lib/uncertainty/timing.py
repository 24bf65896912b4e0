"""How long the guide's example takes as the guide writes it, on this machine: a benchmark
figure beside the recipe, recorded with the machine it was measured on, never a gate.

The example runs whole in its own process (`python -m uncertainty_claims.uncertainty.timing`)
on the host's CPU (JAX_PLATFORMS=cpu, on an accelerator machine too):
the guide's order on its small CPU defaults, from root key 0, printing its log: the MC-Dropout
net's `nnx.jit` step loop and its 30 passes, then the ensemble's vmapped step called without
jit, op by op, all 1,000 steps, and the region report. The figure is that process's wall
time from its start to its exit (interpreter, imports, compiling and every step), what
`time python uncertainty.py` says. The guide's script also saves a figure, whose code the
guide does not list: it is not drawn here.

The example runs once per machine and code, when the figure is first asked for, and its
figure is cached with the other load the machine carried meanwhile (`other_cores`); every
later run reads it. Other work can only slow the example, so a figure taken under load is an
upper bound of this machine's: it shows the claim holds when it is within the bound, and
decides nothing when it is not. To take it on an otherwise idle machine, the measurement may
wait (`CLAIMS_TIMING_WAIT_S` seconds, none by default) while this run's other processes (the
other pytest-xdist workers) still work; it measures at once when processes outside this run
keep the machine busy, since there is no end to wait for.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ..cache import cached

IDLE_CORES = 0.05
"""Other work a measurement tolerates, in cores busy on average (CPU seconds per second).
Each CPU second of other work can delay the example by at most about one second (it
displaces the example's thread, which the guide's Python loops keep busy alone), so over a
measurement of W seconds other work of at most 0.05 W CPU seconds inflates the figure by at
most 5%. A machine whose housekeeping alone exceeds this gives no figure (not measurable),
never a slowed one."""
POLL_S = 2.0
"""One reading of the machine's idleness, in seconds: at Linux's 100 CPU ticks per second,
the threshold is 10 ticks of other work per reading."""
WAIT_VARIABLE = "CLAIMS_TIMING_WAIT_S"
WAIT_S = 0.0
"""How long a measurement waits for this run's other processes to finish, unless
`CLAIMS_TIMING_WAIT_S` says otherwise. None by default: the example takes minutes of a
2-core machine, which a run should not spend, nor make its other worker wait for, unasked;
the claim is measured where the machine is idle when it comes up. 600 waits out the other
worker of any cold audit seen on this project's loaded 2-core hosts (3.5 to 6.5 minutes);
with the example's `EXAMPLE_TIMEOUT_S`, still inside pytest's 1,800 s per test."""
EXAMPLE_PLATFORM = "cpu"
"""Where the example runs (JAX_PLATFORMS in its process): the host's CPU."""
EXAMPLE_TIMEOUT_S = 900.0
"""The example's process is stopped past this (it takes 1-2 minutes on 2 cores)."""
_PROC_STAT = Path("/proc/stat")


class NotMeasurable(Exception):
    """No figure of this machine alone could be taken: it was not otherwise idle, or its
    CPU time cannot be read. `figures` holds what was measured anyway (under load), if the
    example ran."""

    def __init__(self, why: str, figures: dict[str, float] | None = None):
        super().__init__(why)
        self.figures = figures or {}


@dataclasses.dataclass(frozen=True)
class GuideTiming:
    """The example's figures on `machine`; `under_load`: why they are only an upper bound
    (other work ran meanwhile); `not_measurable`: why none was taken."""

    machine: dict[str, str | int]
    figures: dict[str, float]
    not_measurable: str | None = None
    under_load: str | None = None


def machine() -> dict[str, str | int]:
    """The machine a timing belongs to: its CPU model and core count, the backend the
    example runs on (the host's CPU, as the guide's "small CPU defaults" say, also beside an
    accelerator: there the audit holds the chip, which a second process cannot open), and
    the audit's own backend."""
    import jax

    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    return {
        "cpu": model,
        "cores": os.cpu_count() or 0,
        "backend": EXAMPLE_PLATFORM,
        "audit_backend": jax.default_backend(),
    }


# --------------------------------------------------------------------------- idleness


@dataclasses.dataclass(frozen=True)
class CpuSample:
    """CPU seconds spent so far: by the whole machine, by this process and its finished
    children, by this run (every process under this process's parent), at `wall`."""

    wall: float
    machine: float
    mine: float
    run: float


def machine_busy_s(stat: str) -> float:
    """The machine's busy CPU seconds from /proc/stat's text: every state of its `cpu` line
    but idle and iowait (steal too: another guest's work)."""
    fields = stat.partition("\n")[0].split()
    if len(fields) < 9 or fields[0] != "cpu":
        raise NotMeasurable(
            f"cannot read the machine's CPU time: unexpected /proc/stat line {fields}"
        )
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _tree_cpu_s(root: int) -> float:
    """CPU seconds of `root` and every process below it (with the children they reaped)."""
    children: dict[int, list[int]] = {}
    ticks: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()  # the name may hold spaces
        except OSError:
            continue  # the process ended
        pid = int(stat.parent.name)
        children.setdefault(int(fields[1]), []).append(pid)
        ticks[pid] = sum(map(int, fields[11:15]))  # utime, stime, cutime, cstime
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        total += ticks.get(pid, 0)
        todo += children.get(pid, [])
    return total / os.sysconf("SC_CLK_TCK")


def sample() -> CpuSample:
    """The CPU seconds spent so far (`CpuSample`). Raises `NotMeasurable` where the
    machine's cannot be read (no /proc/stat: not Linux)."""
    try:
        stat = _PROC_STAT.read_text()
    except OSError as error:
        raise NotMeasurable(f"cannot read the machine's CPU time ({error})") from error
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    mine = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    run_root = os.getppid() if os.getppid() > 1 else os.getpid()
    return CpuSample(time.perf_counter(), machine_busy_s(stat), mine, _tree_cpu_s(run_root))


def other_cores(before: CpuSample, after: CpuSample) -> float:
    """Cores busy on average between two samples with work other than this process's."""
    other = (after.machine - before.machine) - (after.mine - before.mine)
    return max(other, 0.0) / (after.wall - before.wall)


def foreign_cores(before: CpuSample, after: CpuSample) -> float:
    """Cores busy on average between two samples with work other than this run's."""
    other = (after.machine - before.machine) - (after.run - before.run)
    return max(other, 0.0) / (after.wall - before.wall)


def wait_for_idle(wait_s: float) -> None:
    """Return once the machine was otherwise idle for `POLL_S`, waiting at most `wait_s`
    while only this run's other processes work; at once when processes outside this run keep
    it busy (there is no end to wait for). Raises `NotMeasurable` where the machine's CPU
    time cannot be read."""
    deadline = time.monotonic() + wait_s
    before = sample()
    while True:
        time.sleep(POLL_S)
        after = sample()
        if other_cores(before, after) <= IDLE_CORES or foreign_cores(before, after) > IDLE_CORES:
            return
        if time.monotonic() >= deadline:
            return
        before = after


def _wait_s() -> float:
    text = os.environ.get(WAIT_VARIABLE) or str(WAIT_S)
    try:
        wait_s = float(text)
    except ValueError:
        wait_s = math.nan
    if not 0 <= wait_s < math.inf:
        raise ValueError(f"{WAIT_VARIABLE} must be a finite number of seconds >= 0; got {text!r}")
    return wait_s


# --------------------------------------------------------------------------- the measurement


def _run_example() -> dict[str, float]:
    """The example in its own process: its wall time from start to exit, and its parts."""
    env = dict(os.environ)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)  # compiling is part of the figure
    env["JAX_PLATFORMS"] = EXAMPLE_PLATFORM
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", __name__],
        env=env,
        capture_output=True,
        text=True,
        timeout=EXAMPLE_TIMEOUT_S,
        check=False,
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(
            f"the guide's example exited with status {done.returncode}:\n{done.stderr[-3000:]}"
        )
    last = done.stdout.strip().rpartition("\n")[2]
    try:
        parts = json.loads(last)
    except json.JSONDecodeError:
        raise RuntimeError(f"the guide's example ended without its timings: {last!r}") from None
    startup_s = seconds - parts["mc_dropout_s"] - parts["ensemble_s"]
    return {"seconds": seconds, **parts, "startup_s": startup_s}


def _measure() -> dict[str, np.ndarray]:
    wait_for_idle(_wait_s())
    before = sample()
    figures = _run_example()
    figures["other_cores"] = other_cores(before, sample())
    return {name: np.array(value) for name, value in figures.items()}


FIGURES = ("seconds", "startup_s", "mc_dropout_s", "ensemble_s", "other_cores")


def _check(arrays: dict[str, np.ndarray]) -> None:
    """A stored timing: its figures, finite and >= 0."""
    if set(arrays) != set(FIGURES) or not all(
        a.shape == () and np.isfinite(a) and a >= 0 for a in arrays.values()
    ):
        raise ValueError(f"expected the timings {sorted(FIGURES)}, finite and >= 0; got {arrays}")


def guide_seconds() -> GuideTiming:
    """The guide's example timed on this machine (measured once per machine and code, then
    read from the cache): seconds in all and per part, the other load, and the machine;
    `under_load` says why the figure is only an upper bound, if it is. Where the machine's
    CPU time cannot be read, `not_measurable` says so and nothing is cached."""
    where = machine()
    try:
        entry = cached(
            "uncertainty-guide-timing",
            {"machine": where},
            _measure,
            validate=_check,
        )
    except NotMeasurable as why:
        return GuideTiming(where, why.figures, str(why))
    figures = {name: float(entry.arrays[name]) for name in FIGURES}
    loaded = None
    if figures["other_cores"] > IDLE_CORES:
        loaded = (
            f"other work kept {figures['other_cores']:.2f} cores busy while the example ran "
            f"(idle: at most {IDLE_CORES:g})"
        )
    return GuideTiming(where, figures, under_load=loaded)


# --------------------------------------------------------------------------- the example


def _example() -> dict[str, float]:
    """The guide's example as its script runs it (its log to stdout); seconds per method."""
    import jax.numpy as jnp

    from .config import UncertaintyConfig
    from .data import make_data, root_keys
    from .prediction import ensemble_predict, mc_predict_loop
    from .training import train_ensemble_loop, train_mc_dropout_loop

    config = UncertaintyConfig()
    dkey, tkey, bkey = root_keys(0)
    data = make_data(dkey)
    print(f"Training points: {data.x.shape[0]} (two clusters, heteroscedastic noise)")

    def epistemic(label: str, means) -> None:
        per_point = jnp.var(means, axis=0)[:, 0]
        inside, away = per_point[data.in_cluster].mean(), per_point[data.away].mean()
        print(f"  {label} epistemic: in-cluster {float(inside):.5f} | away {float(away):.5f}")

    start = time.perf_counter()
    print("[1/2] Training a single MC-Dropout network...")
    model, _, bkey = train_mc_dropout_loop(data, bkey, config, model_seed=0, progress=print)
    grid = mc_predict_loop(model, data.grid, n_samples=config.mc_samples)
    mc_predict_loop(model, data.x, n_samples=config.mc_samples)
    epistemic("MC-Dropout", grid.means)
    mc_s = time.perf_counter() - start

    start = time.perf_counter()
    print(f"[2/2] Training a deep ensemble of {config.members} networks (nnx.vmap)...")
    models, _ = train_ensemble_loop(data, tkey, bkey, config, step="eager", progress=print)
    ensemble = ensemble_predict(models, data.grid)
    ensemble_predict(models, data.x)
    epistemic("Ensemble", ensemble.means)
    return {"mc_dropout_s": mc_s, "ensemble_s": time.perf_counter() - start}


if __name__ == "__main__":
    print(json.dumps(_example()))
