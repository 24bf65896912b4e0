"""Rules that the uncertainty guide's claim tests (claims/test_uncertainty.py) build on: a
printed figure's typicality over other root keys, the bootstrap ablation, and a finding's
typicality recorded beside it (the same claim on root keys 1..20)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from claim_audit import Comparison, Judgement, across_runs, satisfied

from readings.uncertainty.measures import Ablation
from uncertainty_claims.orders.ablations import without_bootstrap_in_orders
from uncertainty_claims.orders.uncertainty import (
    SPREAD_ROOT_SEEDS,
    root_key_runs,
    spread,
)
from uncertainty_claims.uncertainty.experiment import UncertaintyResult
from uncertainty_claims.uncertainty.health import uncertainty_health


def typical(printed: Mapping[str, str]) -> Judgement:
    """Each printed figure (name -> as printed) lies within its range over 20 other root
    keys: about the recipe, so no float order of key 0 enters it."""
    keys = spread("root_seeds")
    outside = [
        name for name, p in printed.items() if not keys[name].min() <= float(p) <= keys[name].max()
    ]
    return satisfied(
        not outside,
        measured=f"outside: {', '.join(outside) or 'none'}",
        tolerance="range of 20 keys",
        ranges={name: [float(keys[name].min()), float(keys[name].max())] for name in printed},
    )


def bootstrap_ablations(orders: Mapping[str, UncertaintyResult]) -> dict[str, Ablation]:
    """Root key 0's ensemble in each order, with its bootstrap (the recipe: that order's own
    result) and without (lib/uncertainty/no_bootstrap.py, trained in the same kind of
    order from the same initial weights)."""
    without = without_bootstrap_in_orders(list(orders))
    return {
        name: Ablation(
            with_bootstrap=result.ens_grid_means,
            without=without[name],
            in_cluster=result.in_cluster,
            away=result.away,
        )
        for name, result in orders.items()
    }


def _other_keys() -> list[UncertaintyResult]:
    """The recipe from root keys 1..20, whole (cached): the runs behind the spread
    "root_seeds"."""
    return list(root_key_runs())


def _mc_normal(result: UncertaintyResult) -> bool:
    """The MC-Dropout net trained normally: it beats the constant predictor and its
    log-variance is not pinned to the clip (lib/uncertainty/health.py)."""
    checks = {c.name: c.passed for c in uncertainty_health(result)["mc_dropout"]}
    return checks["beats constant"] and checks["log-variance not pinned"]


def over_root_keys(comparison: Comparison) -> Callable[[], dict[str, Any]]:
    """A finding's typicality, recorded beside it: the same claim on root keys 1..20, and on
    those of them whose MC-Dropout net trained normally."""

    def beside() -> dict[str, Any]:
        runs = _other_keys()
        swept = across_runs(comparison, runs, SPREAD_ROOT_SEEDS, unit="root keys")
        normal = [i for i, run in enumerate(runs) if _mc_normal(run)]
        return {
            "typicality": {
                "root_keys": f"{SPREAD_ROOT_SEEDS[0]}-{SPREAD_ROOT_SEEDS[-1]} (batched, run_many)",
                "holds_on_keys": f"{swept.holding} of {swept.total}",
                "mc_trains_normally_on_keys": f"{len(normal)} of {len(runs)}",
                "holds_on_keys_where_mc_trains_normally": f"{sum(swept.subset_holds[i] for i in normal)} of {len(normal)}",
                "values_per_key": {
                    key: list(v)
                    for key, v in zip(SPREAD_ROOT_SEEDS, swept.subset_values, strict=True)
                },
            }
        }

    return beside


def health_over_root_keys(method: str, check: str) -> Callable[[], dict[str, Any]]:
    """A health finding's typicality: the same check on root keys 1..20."""

    def beside() -> dict[str, Any]:
        results = [
            next(c for c in uncertainty_health(run)[method] if c.name == check)
            for run in _other_keys()
        ]
        return {
            "typicality": {
                "root_keys": f"{SPREAD_ROOT_SEEDS[0]}-{SPREAD_ROOT_SEEDS[-1]} (batched, run_many)",
                "passes_on_keys": f"{sum(r.passed for r in results)} of {len(results)}",
                "measured_per_key": {
                    key: r.measured for key, r in zip(SPREAD_ROOT_SEEDS, results, strict=True)
                },
            }
        }

    return beside
