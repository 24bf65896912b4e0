"""The uncertainty experiment behind the disk cache, and its spread over other keys.

`uncertainty_result()` is the faithful run (root key 0). `spread("root_seeds")`
reruns the recipe from root keys 1..20 and `spread("float_noise")` reruns key 0
with 5% of the initial weights moved by one float32 step (20 twins); both keep
only the guide's printed figures and the health figures, one array per figure.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Literal

import jax
import numpy as np

from lib.cache import cached, lib_sources, runtime_key, source_digest
from lib.sharding import default_mesh
from lib.uncertainty.data import GRID_POINTS, N_PER_CLUSTER
from lib.uncertainty.experiment import (
    PUBLISHED,
    UncertaintyConfig,
    UncertaintyResult,
    headline_figures,
    run,
    run_many,
)
from lib.uncertainty.health import health_figures

SPREAD_ROOT_SEEDS = tuple(range(1, 21))
SPREAD_NUDGES = tuple(range(1, 21))
SpreadKind = Literal["root_seeds", "float_noise"]


# Hashed once, when this code is imported: a process must key its results by the code it
# runs, not by whatever the source files hold later (an edit during a long run).
_CODE_DIGEST = source_digest(lib_sources(__name__))


def _key(config: UncertaintyConfig, **extra) -> dict:
    return {
        "config": dataclasses.asdict(config),
        "code": _CODE_DIGEST,  # incl. lib/health.py: spread figures
        **runtime_key(),
        **extra,
    }


def _result_shapes(config: UncertaintyConfig) -> dict[str, tuple[int, ...]]:
    """The shape of every field of a run's arrays."""
    n, g, t, m = 2 * N_PER_CLUSTER, GRID_POINTS, config.mc_samples, config.members
    return {
        "root_seed": (),
        **dict.fromkeys(("x", "y", "noise_std"), (n, 1)),
        "grid": (g, 1),
        **dict.fromkeys(("in_cluster", "away", "gap", "tails"), (g,)),
        "mc_loss": (config.mc_steps,),
        "ens_loss": (config.ensemble_steps, m),
        "bootstrap_idx": (m, n),
        **dict.fromkeys(("mc_grid_means", "mc_grid_vars", "mc_off_grid_means"), (t, g, 1)),
        **dict.fromkeys(("mc_train_means", "mc_train_vars"), (t, n, 1)),
        **dict.fromkeys(("ens_grid_means", "ens_grid_vars"), (m, g, 1)),
        **dict.fromkeys(("ens_train_means", "ens_train_vars"), (m, n, 1)),
    }


def _check_shapes(arrays: dict[str, np.ndarray], expected: dict[str, tuple[int, ...]]) -> None:
    """Raise ValueError naming each array that is missing, unexpected or of the wrong shape."""
    found = {name: array.shape for name, array in arrays.items()}
    wrong = {
        name: f"{found.get(name, 'missing')} (expected {expected.get(name, 'none')})"
        for name in sorted(set(found) | set(expected))
        if found.get(name) != expected.get(name)
    }
    if wrong:
        raise ValueError(f"wrong arrays: {wrong}")


@functools.cache
def uncertainty_result(
    root_seed: int = 0, config: UncertaintyConfig = UncertaintyConfig()
) -> UncertaintyResult:
    """The recipe from `jax.random.key(root_seed)` (cached on disk and per process)."""
    entry = cached(
        f"uncertainty-seed{root_seed}",
        _key(config, root_seed=root_seed),
        lambda: run(root_seed, config=config).as_arrays(),
        validate=lambda arrays: _check_shapes(arrays, _result_shapes(config)),
    )
    return UncertaintyResult.from_arrays(entry.arrays)


def _check_spread(arrays: dict[str, np.ndarray], n_runs: int) -> None:
    """Raise ValueError unless every printed figure is there and each holds one value per rerun."""
    missing = sorted(set(PUBLISHED) - set(arrays))
    wrong = {name: array.shape for name, array in arrays.items() if array.shape != (n_runs,)}
    if missing or wrong:
        raise ValueError(f"figures missing: {missing}; not of shape ({n_runs},): {wrong}")


def _figures_of(result: UncertaintyResult) -> dict[str, float]:
    return {**headline_figures(result), **health_figures(result)}


def _compute_spread(kind: SpreadKind, config: UncertaintyConfig) -> dict[str, np.ndarray]:
    # One program over the 20 reruns: their ensembles train batched, another valid float
    # order than run()'s, which is as good a sample for a spread (see run_many).
    mesh = default_mesh()
    if kind == "root_seeds":
        results = run_many(SPREAD_ROOT_SEEDS, config=config, mesh=mesh)
    else:
        results = run_many([0] * len(SPREAD_NUDGES), nudges=SPREAD_NUDGES, config=config, mesh=mesh)
    runs = [_figures_of(result) for result in results]
    return {
        name: np.array([figures[name] for figures in runs], dtype=np.float64) for name in runs[0]
    }


@functools.cache
def spread(
    kind: SpreadKind, config: UncertaintyConfig = UncertaintyConfig()
) -> dict[str, np.ndarray]:
    """Each printed and health figure over the reruns of `kind`, one value per rerun."""
    if kind not in ("root_seeds", "float_noise"):
        raise ValueError(f"kind must be 'root_seeds' or 'float_noise'; got {kind!r}")
    runs = SPREAD_ROOT_SEEDS if kind == "root_seeds" else SPREAD_NUDGES
    entry = cached(
        f"uncertainty-spread-{kind}",
        # Split over several devices, the batched ensembles may round otherwise (run_many).
        _key(config, kind=kind, runs=list(runs), devices=len(jax.devices())),
        lambda: _compute_spread(kind, config),
        validate=lambda arrays: _check_spread(arrays, len(runs)),
    )
    return entry.arrays
