"""The guide's deep ensemble trained without its bootstrap: an addition beside the recipe
(its Method 2 says the bootstrap "adds diversity on top of the random inits"), never a
change to it.

`ensemble_without_bootstrap()` trains the ensemble of root key 0 as the fast scan order
does (`run(implementation="scan")`: the same data, members' initial weights, dropout
streams, optimizers and full-batch steps, all steps in one jitted `lax.scan`), but every
member on the 120 training points themselves instead of its bootstrap resample. Set beside
that order's ensemble, the two differ in the members' batches alone.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from ..cache import cached
from ..numerics import full_precision
from .config import UncertaintyConfig
from .data import GRID_POINTS, N_PER_CLUSTER, make_data, root_keys
from .prediction import ensemble_predict
from .training import _ensemble_scan, make_ensemble

ROOT_SEED = 0


@full_precision
def train_members(
    rows: np.ndarray,
    root_seed: int = ROOT_SEED,
    config: UncertaintyConfig = UncertaintyConfig(),
) -> dict[str, np.ndarray]:
    """The ensemble of `root_seed` in the scan order, member m trained on the training rows
    `rows[m]` (uncached): per-step member losses [steps, M] and the members' grid means
    [M, G, 1]. With the run's own bootstrap rows this is the scan order's ensemble."""
    dkey, tkey, _ = root_keys(root_seed)
    data = make_data(dkey)
    rows = jnp.asarray(rows)
    if rows.shape != (config.members, data.x.shape[0]):
        raise ValueError(
            f"rows must be [members, points] = {(config.members, data.x.shape[0])}; got {rows.shape}"
        )
    models, optimizers = make_ensemble(tkey, config)
    graphdef, state = nnx.split((models, optimizers))
    state, losses = _ensemble_scan(
        graphdef, state, data.x[rows], data.y[rows], steps=config.ensemble_steps
    )
    nnx.update((models, optimizers), state)
    means = ensemble_predict(models, data.grid).means
    return {
        name: np.asarray(array)
        for name, array in jax.device_get({"ens_loss": losses, "ens_grid_means": means}).items()
    }


def all_rows(config: UncertaintyConfig = UncertaintyConfig()) -> np.ndarray:
    """Every training row for every member, in order: no bootstrap."""
    return np.tile(np.arange(2 * N_PER_CLUSTER, dtype=np.int32), (config.members, 1))


def ensemble_without_bootstrap(
    config: UncertaintyConfig = UncertaintyConfig(),
) -> dict[str, np.ndarray]:
    """The ensemble of root key 0, every member trained on every training row, in the scan
    order (`train_members`; cached on disk)."""
    expected = {
        "ens_loss": (config.ensemble_steps, config.members),
        "ens_grid_means": (config.members, GRID_POINTS, 1),
    }

    def validate(arrays: dict[str, np.ndarray]) -> None:
        shapes = {name: array.shape for name, array in arrays.items()}
        if shapes != expected:
            raise ValueError(f"expected the arrays {expected}; got {shapes}")

    key = {
        "root_seed": ROOT_SEED,
        "config": dataclasses.asdict(config),
    }
    return cached(
        "uncertainty-no-bootstrap",
        key,
        lambda: train_members(all_rows(config), ROOT_SEED, config),
        validate=validate,
    ).arrays
