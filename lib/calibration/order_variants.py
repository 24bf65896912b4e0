"""The same calibration recipe computed in other valid float orders (tolerance derivation).

Not used by the claims themselves; scripts/derive_tolerances.py and the
benchmark use it to measure how far a figure moves when only the order of
floating-point operations changes.
"""

from __future__ import annotations

import numpy as np

from lib.calibration.experiment import NetRun, Split, forward_outputs
from lib.calibration.training import TrainConfig, train_net_per_step, train_nets

ORDERS = ("per_step", "scan_vmap", "scan_single")


def run_with_order(
    order: str, net: str, seeds: tuple[int, ...], split: Split, config: TrainConfig = TrainConfig()
) -> NetRun:
    """Train `net` on `seeds` in the given computation order; uncached."""
    if order == "per_step":
        trained = [train_net_per_step(net, s, split.train_x, split.train_y, config) for s in seeds]
        models, losses = [m for m, _ in trained], np.stack([loss for _, loss in trained])
    elif order == "scan_vmap":
        models, losses = train_nets(net, seeds, split.train_x, split.train_y, config)
    elif order == "scan_single":
        trained = [train_nets(net, (s,), split.train_x, split.train_y, config) for s in seeds]
        models, losses = [m[0] for m, _ in trained], np.concatenate([loss for _, loss in trained])
    else:
        raise ValueError(f"order must be one of {ORDERS}; got {order!r}")
    arrays = forward_outputs(net, models, losses, split)
    return NetRun.from_arrays(net, seeds, arrays, cache_status="uncached")
