"""The uncertainty recipe's orders: which run computes where, cached on disk, and the
spread over other keys.

The recipe (lib/uncertainty/) computes; this module chooses where (uncertainty_claims.placement):
the faithful run on the host's CPU (beside an accelerator in a child process of its own),
the reruns' inputs drawn there too, the twins spread over the machine's arithmetics.

`uncertainty_result()` is the faithful run (root key 0, the guide's computation order);
`uncertainty_result(implementation="scan")` the same recipe as one jitted scan per
training. `twins()` reruns key 0 with 5% of the initial weights moved by one float32 step
(20 float-rounding twins, half of them in another arithmetic: `Where.spread`), kept whole: `uncertainty_orders()` judges every claim on them.
`root_key_runs()` reruns the recipe from root keys 1..20, kept whole; `spread(kind)` is the
printed and health figures of the twins ("float_noise") or of those reruns ("root_seeds").
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Sequence
from typing import Literal

import jax
import numpy as np

from ..cache import cached
from ..placement import host_process, on_host, where
from ..uncertainty.config import UncertaintyConfig
from ..uncertainty.data import GRID_POINTS, N_PER_CLUSTER
from ..uncertainty.experiment import (
    UncertaintyResult,
    headline_figures,
    run,
    run_many,
)
from ..uncertainty.health import health_figures
from . import FAITHFUL, twin_batches

SPREAD_ROOT_SEEDS = tuple(range(1, 21))
SPREAD_NUDGES = tuple(range(1, 21))
ORDER_COUNT = 2 + len(SPREAD_NUDGES)
"""The orders of a default audit: the guide's own, the scan, one batch of twins."""
SpreadKind = Literal["root_seeds", "float_noise"]


def _key(config: UncertaintyConfig, **extra) -> dict:
    return {
        "config": dataclasses.asdict(config),
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
    root_seed: int = 0,
    config: UncertaintyConfig = UncertaintyConfig(),
    implementation: Literal["faithful", "scan"] = FAITHFUL,
) -> UncertaintyResult:
    """The recipe from `jax.random.key(root_seed)` (cached on disk and per process)."""
    suffix = "" if implementation == FAITHFUL else f"-{implementation}"
    with on_host(implementation == FAITHFUL):
        entry = cached(
            f"uncertainty-seed{root_seed}{suffix}",
            _key(config, root_seed=root_seed, implementation=implementation),
            lambda: (
                host_process(_run_arrays, root_seed, config, implementation)
                if implementation == FAITHFUL
                else _run_arrays(root_seed, config, implementation)
            ),
            validate=lambda arrays: _check_shapes(arrays, _result_shapes(config)),
        )
    return UncertaintyResult.from_arrays(entry.arrays)


def _run_arrays(
    root_seed: int, config: UncertaintyConfig, implementation: Literal["faithful", "scan"]
) -> dict[str, np.ndarray]:
    return run(root_seed, config=config, implementation=implementation).as_arrays()


def _stacked(results: list[UncertaintyResult]) -> dict[str, np.ndarray]:
    arrays = [result.as_arrays() for result in results]
    return {name: np.stack([a[name] for a in arrays]) for name in arrays[0]}


def twin_nudges(batch: int) -> tuple[int, ...]:
    """The nudge seeds of the twins in batch `batch` (0: `SPREAD_NUDGES`)."""
    n = len(SPREAD_NUDGES)
    return tuple(range(batch * n + 1, (batch + 1) * n + 1))


@functools.cache
def twins(
    config: UncertaintyConfig = UncertaintyConfig(), batch: int = 0
) -> tuple[UncertaintyResult, ...]:
    """Key 0's recipe with 5% of the initial weights one float32 step up, one twin per nudge
    seed of batch `batch` (`twin_nudges`; cached on disk whole, one leading axis over the
    twins)."""
    nudges = twin_nudges(batch)
    expected = {name: (len(nudges), *shape) for name, shape in _result_shapes(config).items()}
    entry = cached(
        "uncertainty-twins" if batch == 0 else f"uncertainty-twins-{batch}",
        # Split over several devices, the batched ensembles may round otherwise (run_many).
        _key(
            config, nudges=list(nudges), devices=len(jax.devices()), arithmetics=where().arithmetics
        ),
        lambda: _stacked(_reruns([0] * len(nudges), nudges, config)),
        validate=lambda arrays: _check_shapes(arrays, expected),
    )
    return tuple(
        UncertaintyResult.from_arrays({name: array[i] for name, array in entry.arrays.items()})
        for i in range(len(nudges))
    )


def uncertainty_orders(
    config: UncertaintyConfig = UncertaintyConfig(), n_orders: int | None = None
) -> tuple[dict[str, UncertaintyResult], dict[str, str]]:
    """Key 0's results in at least `n_orders` valid orders (default 22): the guide's own
    (`FAITHFUL`, first), one jitted scan per training, and whole batches of 20
    float-rounding twins; and each order's digest of its arrays (an order whose results
    repeat another's bit for bit is a copy, not a draw)."""
    batches = twin_batches(n_orders, len(SPREAD_NUDGES), document="uncertainty")

    def batch_of_twins(batch: int) -> dict:
        pairs = zip(twin_nudges(batch), twins(config, batch), strict=True)
        return {f"twin-{nudge}": twin for nudge, twin in pairs}

    def others() -> tuple[UncertaintyResult, dict[str, UncertaintyResult]]:
        scan = uncertainty_result(0, config, "scan")
        return scan, {
            name: twin for b in range(batches) for name, twin in batch_of_twins(b).items()
        }

    faithful, (scan, twins_all) = where().side_by_side(
        lambda: uncertainty_result(0, config), others
    )
    first_two = {FAITHFUL: faithful, "scan": scan}
    by_nudge = sorted(twins_all.items(), key=lambda item: int(item[0].removeprefix("twin-")))
    results = first_two | dict(by_nudge)
    return results, {name: _digest(result) for name, result in results.items()}


def _digest(result: UncertaintyResult) -> str:
    """The digest of a run's arrays: an order that repeats another's bit for bit is a copy,
    not a draw."""
    h = hashlib.sha256()
    for name, array in sorted(result.as_arrays().items()):
        h.update(name.encode())
        h.update(np.ascontiguousarray(array).tobytes())
    return h.hexdigest()


def _figures_of(result: UncertaintyResult) -> dict[str, float]:
    return {**headline_figures(result), **health_figures(result)}


def _figure_arrays(results) -> dict[str, np.ndarray]:
    runs = [_figures_of(result) for result in results]
    return {
        name: np.array([figures[name] for figures in runs], dtype=np.float64) for name in runs[0]
    }


@functools.cache
def root_key_runs(config: UncertaintyConfig = UncertaintyConfig()) -> tuple[UncertaintyResult, ...]:
    """The recipe from root keys `SPREAD_ROOT_SEEDS`, whole (cached on disk as one entry, a
    leading axis over the keys). Batched programs over the reruns (`run_many`): their
    ensembles train batched, another valid float order than run()'s, as good a sample."""
    n = len(SPREAD_ROOT_SEEDS)
    expected = {name: (n, *shape) for name, shape in _result_shapes(config).items()}
    entry = cached(
        "uncertainty-root-keys",
        root_seed_spread_key(config),
        lambda: _stacked(_run_root_keys(config)),
        validate=lambda arrays: _check_shapes(arrays, expected),
    )
    return tuple(
        UncertaintyResult.from_arrays({name: array[i] for name, array in entry.arrays.items()})
        for i in range(n)
    )


def _run_root_keys(config: UncertaintyConfig) -> list[UncertaintyResult]:
    seeds = list(SPREAD_ROOT_SEEDS)
    here = where()
    if here.platform != "cpu":
        return _reruns(seeds, [None] * len(seeds), config)
    mesh = here.mesh
    if mesh is not None:
        return run_many(seeds, config=config, mesh=mesh, inputs_on=on_host)
    # One arithmetic (they sample the recipe's keys), in batches of a twins' half
    # (`split_at`): one compiled `run_many` program serves both.
    size = here.split_at(len(SPREAD_NUDGES))
    return [
        run
        for start in range(0, len(seeds), size)
        for run in run_many(seeds[start : start + size], config=config, inputs_on=on_host)
    ]


def _reruns(
    root_seeds: Sequence[int], nudges: Sequence[int | None], config: UncertaintyConfig
) -> list[UncertaintyResult]:
    """The audit's reruns of the recipe, their draws pooled over the machine's arithmetics
    (`Where.spread`): batched (`run_many`) here and in the CPU's other vector
    width; on one accelerator, one by one on the chip through `run`'s scan programs,
    compiled once for all of them (on a TPU, compiling `run_many` for 20 runs takes many
    times longer than running them one by one through the scan programs). Over several
    devices, one batched program split over them."""
    here = where()
    if here.mesh is not None:
        return run_many(root_seeds, nudges=nudges, config=config, mesh=here.mesh, inputs_on=on_host)

    def one_by_one(pairs: Sequence[tuple[int, int | None]]) -> list[UncertaintyResult]:
        return [run(s, config=config, implementation="scan", nudge=n) for s, n in pairs]

    pairs = list(zip(root_seeds, nudges, strict=True))
    return here.spread(functools.partial(_run_pairs, config=config), pairs, one_by_one)


def _run_pairs(
    pairs: Sequence[tuple[int, int | None]], config: UncertaintyConfig
) -> list[UncertaintyResult]:
    """`run_many` over (root seed, nudge) pairs."""
    return run_many(
        [s for s, _ in pairs], nudges=[n for _, n in pairs], config=config, inputs_on=on_host
    )


@functools.cache
def spread(
    kind: SpreadKind, config: UncertaintyConfig = UncertaintyConfig()
) -> dict[str, np.ndarray]:
    """Each printed and health figure over the reruns of `kind`, one value per rerun."""
    if kind == "float_noise":
        return _figure_arrays(twins(config))
    if kind != "root_seeds":
        raise ValueError(f"kind must be 'root_seeds' or 'float_noise'; got {kind!r}")
    return _figure_arrays(root_key_runs(config))


def root_seed_spread_key(config: UncertaintyConfig) -> dict:
    """The cache key of the root-key runs: split over several devices, the batched
    ensembles may round otherwise, so the device count joins it."""
    return _key(config, kind="root_seeds", runs=list(SPREAD_ROOT_SEEDS), devices=len(jax.devices()))
