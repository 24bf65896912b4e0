"""Where an accelerator's time goes in the audit's computations: wall and XLA compile
seconds per phase, printed as each ends (docs/GPU.md).

    python scripts/chip_profile.py [calibration] [uncertainty] [faithful]

Run it on the machine with the chip, with the project importable and CLAIMS_DATA_DIR set
(../shared/TPU.md). `faithful` times the guide's faithful order on the host's CPU.
"""

from __future__ import annotations

import collections
import sys
import time
from collections.abc import Callable

import jax

COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
_seconds: collections.Counter[str] = collections.Counter()


def _listen(event: str, duration: float, **_: object) -> None:
    _seconds[event] += duration


def phase(name: str, fn: Callable[..., object], *args: object, **kwargs: object) -> object:
    """`fn(*args, **kwargs)`, printing its wall time and the XLA compile time it took."""
    compiled, start = _seconds[COMPILE_EVENT], time.perf_counter()
    out = fn(*args, **kwargs)
    wall = time.perf_counter() - start
    print(
        f"{name}: wall {wall:.1f} s, compile {_seconds[COMPILE_EVENT] - compiled:.1f} s", flush=True
    )
    return out


def calibration() -> None:
    from uncertainty_claims.calibration.experiment import forward_outputs, load_split
    from uncertainty_claims.calibration.training import train_nets, train_twins

    split = load_split()
    data = (split.train_x, split.train_y)
    twins = (1, 2, 3, 4, 5, 6)
    for net in ("yat", "relu"):
        models, losses = phase(
            f"{net}: 6 twins of seed 0, trained", train_twins, net, 0, twins, *data
        )
        phase(f"{net}: 6 twins of seed 1, trained", train_twins, net, 1, twins, *data)
        phase(f"{net}: 6 twins evaluated", forward_outputs, net, models, losses, split)
        phase(f"{net}: scan_vmap, 3 seeds", train_nets, net, (0, 1, 2), *data)


def uncertainty() -> None:
    from uncertainty_claims.uncertainty.experiment import run, run_many

    phase("guide: scan order", lambda: run(0, implementation="scan"))
    phase("guide: scan order again", lambda: run(0, implementation="scan"))
    phase(
        "guide: 20 twins, one by one",
        lambda: [run(0, implementation="scan", nudge=k) for k in range(1, 21)],
    )
    phase("guide: 20 twins, run_many", lambda: run_many([0] * 20, nudges=list(range(1, 21))))


def faithful() -> None:
    from uncertainty_claims.uncertainty.experiment import run

    with jax.default_device(jax.devices("cpu")[0]):
        phase("guide: faithful order on the host CPU", lambda: run(0, implementation="faithful"))


if __name__ == "__main__":
    jax.monitoring.register_event_duration_secs_listener(_listen)
    print(jax.devices(), jax.__version__, flush=True)
    parts = {"calibration": calibration, "uncertainty": uncertainty, "faithful": faithful}
    for name in sys.argv[1:] or list(parts):
        if name not in parts:
            sys.exit(f"unknown part {name!r}; choose from {', '.join(parts)}")
        parts[name]()
