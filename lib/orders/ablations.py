"""The uncertainty recipe's ablations in their orders: which computes where, cached on disk.

The ablations (lib/uncertainty/no_bootstrap.py, unclamped.py) compute; this module chooses
where (uncertainty_claims.placement), as lib/orders/uncertainty.py does for the recipe's own
runs: the faithful order and the unclamped runs on the host's CPU (beside an accelerator in
a child process of its own), the twins spread over the machine's arithmetics as their
twins are.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

import jax
import numpy as np

from ..cache import cached
from ..placement import host_process, on_host, where
from ..uncertainty.config import UncertaintyConfig
from ..uncertainty.data import GRID_POINTS
from ..uncertainty.no_bootstrap import (
    ROOT_SEED,
    batched_without_bootstrap,
    ensemble_without_bootstrap,
    expect_shapes,
    faithful_without_bootstrap,
    one_by_one_without_bootstrap,
)
from ..uncertainty.unclamped import KEYS, train_unclamped
from .uncertainty import SPREAD_NUDGES, twin_nudges


def without_bootstrap_in_orders(
    names: Sequence[str], config: UncertaintyConfig = UncertaintyConfig()
) -> dict[str, np.ndarray]:
    """The members' grid means [M, G, 1] of root key 0's ensemble trained without its
    bootstrap, in each of the orders `names` of `uncertainty_orders` (lib/orders/uncertainty.py) (faithful,
    scan, twin-k): the ablation beside each order's own ensemble (cached on disk)."""
    shape = (config.members, GRID_POINTS, 1)

    def faithful() -> dict[str, np.ndarray]:
        if "faithful" not in names:
            return {}
        with on_host():
            entry = cached(
                "uncertainty-no-bootstrap-faithful",
                {"root_seed": ROOT_SEED, "config": dataclasses.asdict(config)},
                lambda: host_process(faithful_without_bootstrap, config),
                validate=lambda a: expect_shapes(a, {"ens_grid_means": shape}),
            )
        return {"faithful": entry.arrays["ens_grid_means"]}

    def others() -> dict[str, np.ndarray]:
        out = {}
        if "scan" in names:
            out["scan"] = ensemble_without_bootstrap(config)["ens_grid_means"]
        twins = sorted(int(n.removeprefix("twin-")) for n in names if n.startswith("twin-"))
        for batch in sorted({(nudge - 1) // len(SPREAD_NUDGES) for nudge in twins}):
            nudges = twin_nudges(batch)
            means = _twin_batch_without_bootstrap(nudges, config)
            out |= {f"twin-{nudge}": means[i] for i, nudge in enumerate(nudges) if nudge in twins}
        return out

    first, rest = where().side_by_side(faithful, others)
    out = first | rest
    missing = [name for name in names if name not in out]
    if missing:
        raise ValueError(f"no ablation in the orders {missing}; known: faithful, scan, twin-k")
    return {name: out[name] for name in names}


def _twin_batch_without_bootstrap(nudges: tuple[int, ...], config: UncertaintyConfig) -> np.ndarray:
    """`_twins_without_bootstrap(nudges)`, cached on disk."""
    shape = (len(nudges), config.members, GRID_POINTS, 1)
    key = {
        "root_seed": ROOT_SEED,
        "config": dataclasses.asdict(config),
        "nudges": list(nudges),
        "devices": len(jax.devices()),
        "arithmetics": where().arithmetics,
    }
    return cached(
        f"uncertainty-no-bootstrap-twins-{(nudges[0] - 1) // len(nudges)}",
        key,
        lambda: {"ens_grid_means": _twins_without_bootstrap(nudges, config)},
        validate=lambda arrays: expect_shapes(arrays, {"ens_grid_means": shape}),
    ).arrays["ens_grid_means"]


def _twins_without_bootstrap(nudges: tuple[int, ...], config: UncertaintyConfig) -> np.ndarray:
    """Root key 0's float-rounding twins (`twins`, lib/orders/uncertainty.py: the same nudged initial weights),
    every member on every row, each computed where and as its twin is: batched over several
    devices, else pooled over the machine's arithmetics as the twins are
    (`Where.spread`). [twins, M, G, 1]."""
    here = where()
    if here.mesh is not None:
        return batched_without_bootstrap(nudges, config)
    batched = functools.partial(batched_without_bootstrap, config=config)
    one_by_one = functools.partial(one_by_one_without_bootstrap, config=config)
    return np.stack(here.spread(batched, nudges, one_by_one))


def unclamped_runs(config: UncertaintyConfig = UncertaintyConfig()) -> dict[str, np.ndarray]:
    """`train_unclamped` for every key of KEYS (cached on disk). Beside an accelerator it
    computes on the host's CPU, in a child process (`placement.host_process`): on a chip
    its one program takes longer to compile than the host takes to run it."""
    key = {"keys": list(KEYS), "config": config.__dict__}
    with on_host():
        compute = functools.partial(host_process, train_unclamped, KEYS, config)
        return cached("uncertainty-unclamped", key, compute).arrays
