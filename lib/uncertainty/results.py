"""The uncertainty experiment behind the disk cache, and its spread over other keys.

`uncertainty_result()` is the faithful run (root key 0). `spread("root_seeds")`
reruns the recipe from root keys 1..20 and `spread("float_noise")` reruns key 0
with 5% of the initial weights moved by one float32 step (20 twins); both keep
only the guide's printed figures and the health figures, one array per figure.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Literal

import jax
import numpy as np

import lib
from lib.cache import cached, source_digest
from lib.uncertainty.experiment import UncertaintyConfig, UncertaintyResult, headline_figures, run
from lib.uncertainty.health import health_figures

SPREAD_ROOT_SEEDS = tuple(range(1, 21))
SPREAD_NUDGES = tuple(range(1, 21))
SpreadKind = Literal["root_seeds", "float_noise"]


def _key(config: UncertaintyConfig, **extra) -> dict:
    package = Path(__file__).parent
    return {
        "config": dataclasses.asdict(config),
        "code": source_digest(
            [*package.glob("*.py"), package.parent / "metrics" / "regression.py"]
        ),
        "versions": {"lib": lib.__version__, "jax": jax.__version__, "numpy": np.__version__},
        "backend": jax.default_backend(),
        **extra,
    }


def _validate_result(arrays: dict[str, np.ndarray]) -> None:
    expected = {f.name for f in dataclasses.fields(UncertaintyResult)}
    if set(arrays) != expected:
        raise ValueError(f"fields {sorted(set(arrays) ^ expected)} missing or unexpected")
    if arrays["grid"].shape != (200, 1) or arrays["x"].shape != (120, 1):
        raise ValueError(
            f"grid {arrays['grid'].shape} / x {arrays['x'].shape}, expected (200, 1) / (120, 1)"
        )


@functools.cache
def uncertainty_result(
    root_seed: int = 0, config: UncertaintyConfig = UncertaintyConfig()
) -> UncertaintyResult:
    """The recipe from `jax.random.key(root_seed)` (cached on disk and per process)."""
    entry = cached(
        f"uncertainty-seed{root_seed}",
        _key(config, root_seed=root_seed),
        lambda: run(root_seed, config=config).as_arrays(),
        validate=_validate_result,
    )
    return UncertaintyResult.from_arrays(entry.arrays)


def _figures_of(result: UncertaintyResult) -> dict[str, float]:
    return {**headline_figures(result), **health_figures(result)}


def _compute_spread(kind: SpreadKind, config: UncertaintyConfig) -> dict[str, np.ndarray]:
    if kind == "root_seeds":
        runs = [_figures_of(run(seed, config=config)) for seed in SPREAD_ROOT_SEEDS]
    else:
        runs = [_figures_of(run(0, config=config, nudge=n)) for n in SPREAD_NUDGES]
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
        _key(config, kind=kind, runs=list(runs)),
        lambda: _compute_spread(kind, config),
    )
    return entry.arrays
