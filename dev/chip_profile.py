"""Where an accelerator's time goes in the audit's computations: wall and XLA compile
seconds per phase, and the CPU seconds of this process and of its child processes, printed
as each ends (docs/GPU.md).

    python dev/chip_profile.py [calibration] [uncertainty] [faithful] [experiments]

Run it on the machine with the chip, from the repository root, with the project importable
and CLAIMS_DATA_DIR set (docs/DATA.md). `faithful` times the guide's faithful order on
the host's CPU; `experiments` computes each experiment a complete audit starts ahead
(claims/running/ahead.py), alone and in turn, as the audit's process would, on an empty results
cache.
"""

from __future__ import annotations

import collections
import os
import resource
import sys
import tempfile
import time
from collections.abc import Callable

import jax

COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
_seconds: collections.Counter[str] = collections.Counter()


def _listen(event: str, duration: float, **_: object) -> None:
    _seconds[event] += duration


def _cpu_seconds() -> tuple[float, float]:
    """User and system CPU seconds of this process, and of its waited-for child processes."""
    own, children = (
        resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def phase(name: str, fn: Callable[..., object], *args: object, **kwargs: object) -> object:
    """`fn(*args, **kwargs)`, printing its wall time, the XLA compile time it took and the
    CPU time of this process and of its child processes."""
    compiled, (own, children), start = _seconds[COMPILE_EVENT], _cpu_seconds(), time.perf_counter()
    out = fn(*args, **kwargs)
    wall = time.perf_counter() - start
    own_after, children_after = _cpu_seconds()
    print(
        f"{name}: wall {wall:.1f} s, compile {_seconds[COMPILE_EVENT] - compiled:.1f} s, "
        f"CPU {own_after - own:.1f} s here and {children_after - children:.1f} s in children",
        flush=True,
    )
    return out


def calibration() -> None:
    from uncertainty_claims.calibration.experiment import forward_outputs, load_split
    from uncertainty_claims.calibration.training import train_nets, train_twins
    from uncertainty_claims.placement import where

    split = load_split()
    data = (split.train_x, split.train_y)
    twins = (1, 2, 3, 4, 5, 6)
    for net in ("yat", "relu"):
        models, losses = phase(
            f"{net}: 6 twins of seed 0, trained", train_twins, net, 0, twins, *data
        )
        phase(f"{net}: 6 twins of seed 1, trained", train_twins, net, 1, twins, *data)
        own_programs = where().platform == "cpu"
        evaluated = f"{net}: 6 twins evaluated"
        phase(evaluated, forward_outputs, net, models, losses, split, own_programs=own_programs)
        phase(f"{net}: scan_vmap, 3 seeds", train_nets, net, (0, 1, 2), *data)


def uncertainty() -> None:
    from uncertainty_claims.placement import on_host
    from uncertainty_claims.uncertainty.experiment import run, run_many

    phase("guide: scan order", lambda: run(0, implementation="scan"))
    phase("guide: scan order again", lambda: run(0, implementation="scan"))
    phase(
        "guide: 20 twins, one by one",
        lambda: [run(0, implementation="scan", nudge=k) for k in range(1, 21)],
    )
    phase(
        "guide: 20 twins, run_many",
        lambda: run_many([0] * 20, nudges=list(range(1, 21)), inputs_on=on_host),
    )


def faithful() -> None:
    from uncertainty_claims.uncertainty.experiment import run

    with jax.default_device(jax.devices("cpu")[0]):
        phase("guide: faithful order on the host CPU", lambda: run(0, implementation="faithful"))


def experiments() -> None:
    """Each experiment of claims/running/ahead.py alone, in turn, set up as the audit's process is
    (conftest.py): results kept in a fresh cache folder, its compiled programs beside them,
    child processes on the host's CPU (`__main__` placed them)."""
    from claim_audit import cache

    from uncertainty_claims.cache import keep_results_in
    from uncertainty_claims.placement._compile_cache import enable_compilation_cache

    os.environ["CLAIMS_CACHE_DIR"] = tempfile.mkdtemp(prefix="chip-profile-")
    keep_results_in(cache.cached)
    enable_compilation_cache(cache.default_cache_dir())
    sys.path.insert(0, "claims")
    from running import ahead

    for document, tasks in ahead.TASKS.items():
        for i, task in enumerate(tasks(None)):
            phase(f"{document} experiment {i} ({getattr(task, '__name__', 'lambda')})", task)


if __name__ == "__main__":
    jax.monitoring.register_event_duration_secs_listener(_listen)
    # As the audit's process: it holds the accelerator, its child processes compute on the
    # host's CPU. Before JAX starts its backends, which it does once.
    from uncertainty_claims.placement import prepare_process

    prepare_process(None, 0, cache_dir=None, budget_s=None, try_start=False, open_now=False)
    print(jax.devices(), jax.__version__, flush=True)
    parts = {
        "calibration": calibration,
        "uncertainty": uncertainty,
        "faithful": faithful,
        "experiments": experiments,
    }
    for name in sys.argv[1:] or list(parts):
        if name not in parts:
            sys.exit(f"unknown part {name!r}; choose from {', '.join(parts)}")
        parts[name]()
