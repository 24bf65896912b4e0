"""Comparative claims re-judged on other seeds (`--seeds`), by the share rule: robust, fragile,
fails or inconclusive."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .. import stats
from .share import (
    HOLDS_AT,
    REFUTED_AT,
    SENSITIVE_BETWEEN,
    SHARE_ALPHA,
    count_bounds,
    draws_to_conclude,
    verdict_of,
)
from .verdict import Comparison, PerSeed, Region

# The share rule's verdicts (share.py), in a sweep's words: it is beside the audit's verdicts.
LABELS = {"holds": "robust", "refuted": "fails", "sensitive": "fragile"}
LABELS |= {"inconclusive": "inconclusive"}
MIN_SEEDS_FOR_INTERVAL = 5  # fewer seeds give too few distinct resamples for an interval
SEED_B = 2000
METHOD = f"{stats.METHOD} over seeds (seeds drawn with replacement, B = {SEED_B})"
MAX_SUBSETS = 10_000  # a sample this large holds within 0.01 of all subsets' share (95%)
MAX_SEED = 10**6
MAX_SEEDS = 1000  # a sweep keeps every seed's results: this suite's hold 4 GB at 1,000 seeds


def parse_seeds(text: str) -> tuple[int, ...]:
    """Seeds from "0-9" or "0,3,5-7", sorted; a ValueError names what is wrong."""
    seeds: list[int] = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?", part)
        if match is None:
            raise ValueError(
                f"cannot read {part.strip()!r} in {text!r}: expected seeds like '0-9' or '0,3,5-7'"
            )
        first, last = int(match[1]), int(match[2] or match[1])
        if last < first:
            raise ValueError(f"range {part.strip()!r} in {text!r} runs backwards")
        if last >= MAX_SEED:
            raise ValueError(f"seeds must be below {MAX_SEED:,}; got {last} in {text!r}")
        seeds.extend(range(first, last + 1))
        if len(seeds) > MAX_SEEDS:  # said part by part: the list stays short
            raise ValueError(
                f"at most {MAX_SEEDS} seeds; {text!r} has {len(seeds)} up to {part.strip()!r}"
            )
    if repeated := sorted(seed for seed, times in Counter(seeds).items() if times > 1):
        raise ValueError(f"seeds {repeated} are given more than once in {text!r}")
    return tuple(sorted(seeds))


def independent_draws(seeds: int, size: int | None) -> int:
    """How many independent draws a sweep of `seeds` seeds counts as: one a seed, or, for a
    claim about `size`-seed subsets, the disjoint subsets (Hoeffding's sample size for a
    statistic averaged over all subsets: the overlapping subsets add no independent draw)."""
    return seeds if size is None else seeds // size


def share_label(holding: int, total: int, draws: int) -> tuple[str, tuple[float, float]]:
    """A sweep's label and the bounds on the share p of seeds (subsets) the claim holds on:
    `holding` of `total` judged, worth `draws` independent draws (count_bounds at the share
    rule's confidence, the count rounded down for the low bound and up for the high)."""
    share = holding / total
    low = count_bounds(math.floor(share * draws + 1e-9), draws)[0]
    high = count_bounds(math.ceil(share * draws - 1e-9), draws)[1]
    return LABELS[verdict_of(low, high)], (low, high)


def seeds_to_conclude(holding: int, total: int, seeds: int, size: int | None) -> int | None:
    """About how many seeds would conclude an inconclusive sweep at its share, or None."""
    draws = independent_draws(seeds, size)
    held = round(holding / total * draws)
    needed = draws_to_conclude([True] * held + [False] * (draws - held))
    return None if needed is None else needed * (size or 1)


def fewest_seeds(size: int | None = None) -> int:
    """The fewest seeds whose sweep can read robust or fails: every seed (or disjoint subset)
    agreeing, the share rule's bound passes HOLDS_AT (and, alike, REFUTED_AT)."""
    draws = 1
    while count_bounds(draws, draws)[0] < HOLDS_AT:
        draws += 1
    return draws * (size or 1)


@dataclass(frozen=True)
class Robustness:
    """A claim across seeds: its effects, their seed-bootstrap intervals, per seed and subset."""

    claim_id: str
    seeds: list[int]
    effects: list[str]
    units: list[str]
    regions: list[Region]
    values: list[float]
    intervals: list[stats.Interval | None]
    per_seed_values: list[list[float]] | None
    per_seed_holds: list[bool] | None
    unit: str
    subset_values: list[list[float]]
    subset_holds: list[bool]
    effect_holding: list[int]
    population: int
    size: int | None = None  # the claim's subsets' size (None: a claim about one run)

    @property
    def holding(self) -> int:
        return sum(self.subset_holds)

    @property
    def total(self) -> int:
        return len(self.subset_holds)

    @property
    def fraction(self) -> float:
        return self.holding / self.total

    @property
    def draws(self) -> int:
        return independent_draws(len(self.seeds), self.size)

    def to_json(self) -> dict[str, Any]:
        label, (low, high) = share_label(self.holding, self.total, self.draws)
        out = asdict(self) | {
            "regions": [str(r) for r in self.regions],
            "region_bounds": [
                [None if math.isinf(b) else b for b in (r.low, r.high)] for r in self.regions
            ],
            "fraction_holding": self.fraction,
            "holding": self.holding,
            "total": self.total,
            "sampled": self.total < self.population,
            "label": label,
            "share_interval": [low, high],
            "independent_draws": self.draws,
            "method": METHOD,
        }
        if label == "inconclusive":
            needed = seeds_to_conclude(self.holding, self.total, len(self.seeds), self.size)
            out["seeds_to_conclude"] = needed
        return out


def _judged_on(
    comparison: Comparison,
    seeds: tuple[int, ...],
    values: Sequence[float],
    evaluate: Callable[[Sequence[int]], list[float]],
    single: list[list[float]] | None,
    subsets: list[list[float]],
    unit: str,
    population: int,
    size: int | None,
) -> Robustness:
    effects = comparison.effects
    intervals: list[stats.Interval | None] = [None] * len(effects)
    if len(seeds) >= MIN_SEEDS_FOR_INTERVAL and not comparison.extreme:
        rows = np.random.default_rng(stats.SEED).integers(0, len(seeds), (SEED_B, len(seeds)))
        samples = np.array([evaluate(row) for row in rows]).T
        # A resample of one seed repeated has no spread: a ratio of spreads is 0 / 0 there.
        intervals = [
            stats.interval(v, s[np.isfinite(s)]) if math.isfinite(v) else None
            for v, s in zip(values, samples, strict=True)
        ]
    return Robustness(
        claim_id=comparison.claim_id,
        seeds=list(seeds),
        effects=[e.name for e in effects],
        units=[e.unit for e in effects],
        regions=[e.region for e in effects],
        values=list(values),
        intervals=intervals,
        per_seed_values=None if single is None else [list(v) for v in single],
        per_seed_holds=None if single is None else [comparison.holds_for(v) for v in single],
        unit=unit,
        subset_values=[list(v) for v in subsets],
        subset_holds=[comparison.holds_for(v) for v in subsets],
        effect_holding=[
            sum(e.region.contains(v[k]) for v in subsets) for k, e in enumerate(effects)
        ],
        population=population,
        size=size,
    )


def seed_subsets(n: int, size: int) -> list[tuple[int, ...]]:
    """Every `size`-subset of n seeds, or a seeded sample of MAX_SUBSETS of them."""
    if math.comb(n, size) <= MAX_SUBSETS:
        return list(itertools.combinations(range(n), size))
    rng = np.random.default_rng(stats.SEED)
    return [
        tuple(sorted(int(i) for i in rng.choice(n, size, replace=False)))
        for _ in range(MAX_SUBSETS)
    ]


def across_seeds(
    comparison: Comparison, per_seed: PerSeed, seeds: tuple[int, ...], *, size: int
) -> Robustness:
    """A claim about means over `size` seeds, judged on each subset of that size."""
    n = len(seeds)
    if n < size:
        raise ValueError(f"a sweep of a claim about {size} seeds needs at least {size}; got {n}")
    population = math.comb(n, size)
    subsets = seed_subsets(n, size)
    unit = f"{size}-seed subsets"
    if len(subsets) < population:
        unit += f" (a sample of {len(subsets):,} of {population:,})"

    def on(indices: Sequence[int]) -> list[float]:  # the seeds at `indices`, repeats allowed
        return comparison.values({g: [seed[i] for i in indices] for g, seed in per_seed.items()})

    single = [on([i]) for i in range(n)] if comparison.per_seed else None
    values = comparison.values(per_seed)
    judged = [on(t) for t in subsets]
    return _judged_on(comparison, seeds, values, on, single, judged, unit, population, size)


def across_runs(
    comparison: Comparison, runs: Sequence[Any], keys: tuple[int, ...], *, unit: str = "seeds"
) -> Robustness:
    """A claim about one run, judged on the run of each seed in `keys`."""
    single = np.array([comparison.values(run) for run in runs], dtype=np.float64)
    means, per_run = single.mean(axis=0).tolist(), single.tolist()

    def resampled(rows: Sequence[int]) -> list[float]:
        return list(single[rows].mean(axis=0))

    return _judged_on(comparison, keys, means, resampled, per_run, per_run, unit, len(keys), None)


_PUBLISHED = ("seeds", "effects", "units", "regions", "region_bounds", "values")
_PUBLISHED += ("per_seed_values", "per_seed_holds")


def labels_text(unit: str, draws: str = "") -> str:
    """How a sweep is labelled, for the sweep's `unit` (`draws`: how they count as draws)."""
    return (
        f"A claim holds on one of the sweep's {unit} when every one of its effects lies in its "
        f"region there. The share p of {unit} it holds on is bounded at {1 - SHARE_ALPHA:.0%} "
        f"from the count (the share rule, as a claim's draws are{draws}): robust when p >= "
        f"{HOLDS_AT:.0%} is shown, fails when p <= {REFUTED_AT:.0%} is, fragile when p lies "
        f"confidently between {SENSITIVE_BETWEEN[0]:.0%} and {SENSITIVE_BETWEEN[1]:.0%}, "
        "inconclusive otherwise, with about how many seeds would conclude it"
    )


def subsets_counted(size: int) -> str:
    """How `size`-seed subsets count as draws, said in `labels_text`."""
    return f"; the overlapping {size}-seed subsets of n seeds count as n / {size} draws"


def methods(size: int | None) -> dict[str, Any]:
    """The robustness section's `methods`, for `size`-seed subsets (None: one run)."""
    unit = "seeds" if size is None else f"{size}-seed subsets"
    value = "mean over" if size is None else "statistic on all"
    return {
        "level": stats.LEVEL,
        "seeds": METHOD,
        "labels": labels_text(unit, "" if size is None else subsets_counted(size)),
        "holds_on": f"the sweep's {unit} on which the claim holds (every effect in its region)",
        "value": f"the claim's {value} the sweep's seeds",
        "note": f"No interval with fewer than {MIN_SEEDS_FOR_INTERVAL} seeds.",
    }


def _judged(
    comparison: Comparison, subjects: Mapping[int, Any], seeds: Sequence[int], size: int | None
) -> Robustness:
    keys = tuple(seeds)
    if size is None:
        return across_runs(comparison, [subjects[seed] for seed in keys], keys)
    groups = {group for seed in keys for group in subjects[seed]}
    per_seed = {group: [subjects[seed][group] for seed in keys] for group in sorted(groups)}
    return across_seeds(comparison, per_seed, keys, size=size)


def seed_section(
    comparisons: Iterable[Comparison],
    subject: Callable[[int], Any],
    *,
    published: Sequence[int],
    sweep: Sequence[int] | None,
    size: int | None = None,
    document: str | None = None,
) -> dict[str, Any]:
    """audit.json's `robustness` section; `subject(seed)`: a run, or figures per group (`size`)."""
    comparisons = list(comparisons)
    for comparison in comparisons:
        comparison.claim()  # a comparison of no claim is an error before anything is computed
    seeds = sorted(set(published) | set(sweep or ()))
    subjects = {seed: subject(seed) for seed in seeds}
    claims: dict[str, dict[str, Any]] = {}
    for comparison in comparisons:
        on_published = _judged(comparison, subjects, published, size)
        entry = {name: v for name, v in on_published.to_json().items() if name in _PUBLISHED}
        entry["holds"] = comparison.holds_for(list(on_published.values))
        entry["intervals"] = None  # intervals on the published seeds: the project's to add
        claim = claims[comparison.claim()] = {"published": entry}
        if document is not None:
            claim["document"] = document
        if sweep:
            claim["sweep"] = _judged(comparison, subjects, sweep, size).to_json()
    return {
        "methods": methods(size),
        "published_seeds": list(published),
        "sweep_seeds": list(sweep) if sweep else None,
        "claims": claims,
    }
