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
import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from ..cache import cached
from ..numerics import full_precision
from .config import UncertaintyConfig
from .data import GRID_POINTS, N_PER_CLUSTER, make_data, root_keys
from .experiment import _inputs
from .prediction import ensemble_predict
from .training import _ensemble_scan, _replay_steps, make_ensemble

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


# --- The same ablation in the other float orders of root key 0 ------------------------------


@full_precision
def faithful_without_bootstrap(config: UncertaintyConfig) -> dict[str, np.ndarray]:
    """Root key 0's ensemble in the guide's own order (the vmapped step without jit, op by
    op, replayed as `run(implementation="faithful")` trains it), every member on every row."""
    dkey, tkey, _ = root_keys(ROOT_SEED)
    data = make_data(dkey)
    models, optimizers = make_ensemble(tkey, config)
    rows = jnp.asarray(all_rows(config))
    batch = {"x": data.x[rows], "y": data.y[rows]}
    _replay_steps(models, optimizers, batch, config.ensemble_steps, None)
    return {"ens_grid_means": np.asarray(ensemble_predict(models, data.grid).means)}


@functools.partial(jax.jit, static_argnames=("ens_def", "steps"))
def _twins_scan(ens_def, states, x, y, grid, rows, *, steps: int):
    def one(state, x, y):
        state, _ = _ensemble_scan(ens_def, state, x[rows], y[rows], steps=steps)
        return ensemble_predict(nnx.merge(ens_def, state)[0], grid).means

    return jax.vmap(one)(states, x, y)


@full_precision
def batched_without_bootstrap(nudges: tuple[int, ...], config: UncertaintyConfig) -> np.ndarray:
    _, (_, ens_def, _, ens_state, _, x, y, grid) = _inputs(
        [ROOT_SEED] * len(nudges), nudges, config
    )
    rows = jnp.asarray(all_rows(config))
    return np.asarray(
        _twins_scan(ens_def, ens_state, x, y, grid, rows, steps=config.ensemble_steps)
    )


@full_precision
def one_by_one_without_bootstrap(nudges: tuple[int, ...], config: UncertaintyConfig) -> np.ndarray:
    _, (_, ens_def, _, ens_state, _, x, y, grid) = _inputs(
        [ROOT_SEED] * len(nudges), nudges, config
    )
    rows = jnp.asarray(all_rows(config))
    means = []
    for i in range(len(nudges)):
        state = jax.tree.map(lambda a, i=i: a[i], ens_state)
        state, _ = _ensemble_scan(
            ens_def, state, x[i][rows], y[i][rows], steps=config.ensemble_steps
        )
        means.append(np.asarray(ensemble_predict(nnx.merge(ens_def, state)[0], grid).means))
    return np.stack(means)


def expect_shapes(arrays: dict[str, np.ndarray], expected: dict[str, tuple[int, ...]]) -> None:
    shapes = {name: array.shape for name, array in arrays.items()}
    if shapes != expected:
        raise ValueError(f"expected the arrays {expected}; got {shapes}")
