"""Statistics of the calibration post's per-seed figures, for its comparative claims.

A statistic takes `PerSeed` (net -> list of `evaluate_seed` figure dicts, one per seed,
as in `CalibrationResults.per_seed`) over any set of seeds, so the same definition
serves the faithful claim on seeds 0-2, each test-image resample of them, and any
other set of seeds. The claims themselves (effects, regions, readings) are defined once,
in claims/test_calibration.py; the two comparisons that sensitivity.py also re-measures
under other binnings and scores (`ece_ratio`, `ood_gap`) are built here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from claim_audit import Comparison, Effect, PerSeed, Region, safe_ratio

from uncertainty_claims.calibration.evaluation import aggregate

Figure = tuple[str, str]  # (net, dotted figure name), e.g. ("yat", "auroc.kmax")

THREE_TO_FOUR = Region(3.0, 4.0)  # "three to four times"
A_TOUCH = 0.05  # "a touch better": ahead by less than this AUROC


def figure(figures: Mapping[str, Any], name: str) -> float:
    """A figure of one seed by dotted name: "ece", "auroc.kmax", "auroc_subsample.msp"."""
    value: Any = figures
    for part in name.split("."):
        value = value[part]
    return float(value)


def values(per_seed: PerSeed, net: str, name: str) -> list[float]:
    """The figure `name` of `net` on every seed, in seed order."""
    return [figure(figures, name) for figures in per_seed[net]]


def seeds_of(per_seed: PerSeed, net: str) -> list[int]:
    """The seeds of `net`'s figures, in their order."""
    return [int(figures["seed"]) for figures in per_seed[net]]


def mean(per_seed: PerSeed, which: Figure) -> float:
    """Mean over seeds of the figure `which`."""
    return aggregate(values(per_seed, *which))[0]


def _std(per_seed: PerSeed, which: Figure) -> float:
    return aggregate(values(per_seed, *which))[1]


def mean_ratio(a: Figure, b: Figure) -> Callable[[PerSeed], float]:
    """mean over seeds of `a` / mean over seeds of `b`."""
    return lambda per_seed: safe_ratio(mean(per_seed, a), mean(per_seed, b))


def mean_gap(a: Figure, b: Figure) -> Callable[[PerSeed], float]:
    """mean over seeds of `a` - mean over seeds of `b`."""
    return lambda per_seed: mean(per_seed, a) - mean(per_seed, b)


def smallest_gap(a: Figure, b: Figure) -> Callable[[PerSeed], float]:
    """The smallest, over seeds, of `a` - `b` on the same seed."""
    return lambda per_seed: min(
        x - y for x, y in zip(values(per_seed, *a), values(per_seed, *b), strict=True)
    )


def std_ratio(a: Figure, b: Figure) -> Callable[[PerSeed], float]:
    """Seed standard deviation (ddof 0) of `a` / that of `b`."""
    return lambda per_seed: safe_ratio(_std(per_seed, a), _std(per_seed, b))


def largest_shallow_ratio(per_seed: PerSeed) -> float:
    """cal-12b: the largest, over seeds, of median MNIST kmax / median test kmax."""
    return max(
        safe_ratio(figure(f, "median_kmax_ood"), figure(f, "median_kmax")) for f in per_seed["yat"]
    )


def bad_retraining_gap(per_seed: PerSeed) -> float:
    """cal-14: Yat - ReLU softmax AUROC (subsample) on the seed where the Yat one is lowest."""
    yat = values(per_seed, "yat", "auroc_subsample.msp")
    relu = values(per_seed, "relu", "auroc_subsample.msp")
    bad = min(range(len(yat)), key=yat.__getitem__)
    return yat[bad] - relu[bad]


def ece_ratio(name: str, label: str) -> Comparison:
    """A "Yat ECE is three to four times the ReLU ECE" comparison on the figure `name`
    (the claims and their sensitivity variants under other binnings)."""
    return Comparison(
        effects=(
            Effect(
                f"{label}, Yat / ReLU",
                mean_ratio(("yat", name), ("relu", name)),
                THREE_TO_FOUR,
                null=1.0,
                inputs=(name,),
                scale="log",
            ),
        ),
    )


def ood_gap(score: str, label: str) -> Comparison:
    """cal-11c on a ReLU score channel: it beats the Yat field by less than A_TOUCH AUROC
    (the claim, and its variants with other ReLU scores)."""
    return Comparison(
        effects=(
            Effect(
                f"AUROC {label} - kmax",
                mean_gap(("relu", f"auroc.{score}"), ("yat", "auroc.kmax")),
                Region(0.0, A_TOUCH, closed=False),
                null=0.0,
                inputs=(f"auroc.{score}", "auroc.kmax"),
                unit="AUROC difference",
            ),
        ),
    )
