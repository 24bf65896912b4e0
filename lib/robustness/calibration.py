"""The calibration post's comparative claims, as statistics of per-seed figures.

A statistic takes `PerSeed` (net -> list of `evaluate_seed` figure dicts, one per seed,
as in `CalibrationResults.per_seed`) over any set of seeds, so the same definition
serves the faithful claim on seeds 0-2, each test-image resample of them, and any
other set of seeds. Each comparison carries the reading of the post's qualitative words, and
claims/test_calibration.py judges the claim with it (`Comparison.judge`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lib.calibration.evaluation import aggregate
from lib.robustness.effects import Comparison, Effect, Region, safe_ratio

PerSeed = Mapping[str, Sequence[Mapping[str, Any]]]
Figure = tuple[str, str]  # (net, dotted figure name), e.g. ("yat", "auroc.kmax")

THREE_TO_FOUR = Region(3.0, 4.0)  # "three to four times"
FAR_MORE = 5.0  # cal-09d
A_TOUCH = 0.05  # cal-11c
FAR_BELOW = 0.25  # cal-12b
BARELY = 0.03  # cal-14


def figure(figures: Mapping[str, Any], name: str) -> float:
    """A figure of one seed by dotted name: "ece", "auroc.kmax", "auroc_subsample.msp"."""
    value: Any = figures
    for part in name.split("."):
        value = value[part]
    return float(value)


def values(per_seed: PerSeed, net: str, name: str) -> list[float]:
    """The figure `name` of `net` on every seed, in seed order."""
    return [figure(figures, name) for figures in per_seed[net]]


def _mean(per_seed: PerSeed, which: Figure) -> float:
    return aggregate(values(per_seed, *which))[0]


def _std(per_seed: PerSeed, which: Figure) -> float:
    return aggregate(values(per_seed, *which))[1]


def mean_ratio(a: Figure, b: Figure) -> Callable[[PerSeed], float]:
    """mean over seeds of `a` / mean over seeds of `b`."""
    return lambda per_seed: safe_ratio(_mean(per_seed, a), _mean(per_seed, b))


def mean_gap(a: Figure, b: Figure) -> Callable[[PerSeed], float]:
    """mean over seeds of `a` - mean over seeds of `b`."""
    return lambda per_seed: _mean(per_seed, a) - _mean(per_seed, b)


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


def ece_ratio(claim_id: str, name: str, label: str) -> Comparison:
    """A "Yat ECE is three to four times the ReLU ECE" claim on the figure `name`."""
    return Comparison(
        claim_id,
        reading="'three to four times': the ratio of the three-seed mean ECEs lies in [3, 4] "
        "(the claim test widens the interval by the ratio's 3-sd float-order noise)",
        effects=(
            Effect(
                f"{label}, Yat / ReLU",
                mean_ratio(("yat", name), ("relu", name)),
                THREE_TO_FOUR,
                null=1.0,
                inputs=(name,),
            ),
        ),
    )


def ood_gap(score: str, label: str) -> Comparison:
    """cal-11c on a ReLU score channel: it beats the Yat field by less than A_TOUCH AUROC."""
    return Comparison(
        "cal-11c",
        reading=f"'a touch better': ahead by more than 0 and less than {A_TOUCH} AUROC",
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


def _worse(name: str, label: str, unit: str) -> Effect:
    return Effect(
        f"{label}, Yat - ReLU",
        mean_gap(("yat", name), ("relu", name)),
        Region(0.0, closed=False),
        null=0.0,
        inputs=(name,),
        unit=unit,
    )


COMPARISONS: tuple[Comparison, ...] = (
    ece_ratio("cal-02c", "ece", "ECE"),
    Comparison(
        "cal-03e",
        reading="'worse on both': the Yat net's three-seed mean is above the ReLU net's for "
        "ECE, NLL and Brier",
        effects=(
            _worse("ece", "ECE", "ECE difference (fraction)"),
            _worse("nll", "NLL", "NLL difference (nats)"),
            _worse("brier", "Brier", "Brier score difference"),
        ),
    ),
    Comparison(
        "cal-09d",
        reading=f"'far more': the Yat temperature's seed sd is at least {FAR_MORE:g}x the ReLU one's",
        effects=(
            Effect(
                "T sd, Yat / ReLU",
                std_ratio(("yat", "T"), ("relu", "T")),
                Region(FAR_MORE),
                unit="ratio of seed sds",
            ),
        ),
        per_seed=False,
    ),
    ece_ratio("cal-10c", "ece_T", "ECE_T"),
    ood_gap("maxlogit", "maxlogit"),
    Comparison(
        "cal-12b",
        reading=f"'far below': on every seed the MNIST median field magnitude is under "
        f"{FAR_BELOW:g} of the test median",
        effects=(
            Effect(
                "kmax median OOD/test",
                largest_shallow_ratio,
                Region(high=FAR_BELOW, closed=False),
                unit="ratio of medians, largest seed",
            ),
        ),
        extreme=True,
    ),
    Comparison(
        "cal-13c",
        reading="'varies less': the seed sd of the field's subsample AUROC is below that of "
        "the Yat softmax channel",
        effects=(
            Effect(
                "AUROC sd, kmax / MSP",
                std_ratio(("yat", "auroc_subsample.kmax"), ("yat", "auroc_subsample.msp")),
                Region(high=1.0, closed=False),
                null=1.0,
                inputs=("auroc_subsample.kmax", "auroc_subsample.msp"),
                unit="ratio of seed sds",
            ),
        ),
        per_seed=False,
    ),
    Comparison(
        "cal-14",
        reading="'the bad retraining': the seed where the Yat softmax AUROC is lowest; 'baseline': "
        "the ReLU net's own softmax channel on that seed and subsample; 'barely better': ahead "
        f"by more than 0 and less than {BARELY} AUROC",
        effects=(
            Effect(
                "MSP AUROC Yat - ReLU",
                bad_retraining_gap,
                Region(0.0, BARELY, closed=False),
                null=0.0,
                inputs=("auroc_subsample.msp",),
                unit="AUROC difference, worst Yat seed",
            ),
        ),
        per_seed=False,
        extreme=True,
    ),
)
"""Every comparative claim of the post, in claim-id order."""

BY_ID: dict[str, Comparison] = {c.claim_id: c for c in COMPARISONS}
