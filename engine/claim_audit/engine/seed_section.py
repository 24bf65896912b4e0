"""The robustness section of a `--seeds` run, computed from a document's `Comparison`s.

A project's `pytest_claims_audit_robustness` hook can return `seed_section(...)`: each
comparative claim judged on the document's own seeds and, with `--seeds`, on the sweep's
(claim_audit.engine.sweep), in the engine's words. docs/ADDING_A_DOCUMENT.md
has a worked example.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from .. import stats
from .effects import Comparison
from .sweep import (
    FAILS,
    METHOD,
    MIN_SEEDS_FOR_INTERVAL,
    ROBUST,
    Robustness,
    across_runs,
    across_seeds,
)

_PUBLISHED = ("seeds", "effects", "units", "regions", "region_bounds", "values")
_PUBLISHED += ("per_seed_values", "per_seed_holds")


def methods(size: int | None) -> dict[str, Any]:
    """The section's `methods` in the engine's words: a claim about one run (`size` None)
    or about figures over `size` seeds."""
    unit = "seeds" if size is None else f"{size}-seed subsets"
    return {
        "level": stats.LEVEL,
        "seeds": METHOD,
        "labels": f"robust: holds on >= {ROBUST:.0%} of the sweep's {unit}; fails: on <= "
        f"{FAILS:.0%}; fragile: in between",
        "holds_on": f"the sweep's {unit} on which the claim holds",
        "value": "the claim's statistic on all the sweep's seeds"
        if size is not None
        else "the claim's mean over the sweep's seeds",
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
    """audit.json's `robustness` section for `comparisons` (claim_audit.report.hooks).

    Args:
      comparisons: the comparative claims, each the `Comparison` its claim body judges with.
      subject: what a comparison reads for one seed: with `size` None, that seed's run (a
        claim about one run, judged on each seed's run); else that seed's figures per group
        (`{"model-a": {"ece": 0.03}, ...}`), and a claim reads them over `size` seeds
        (`PerSeed`), judged on every subset of `size` of the sweep's seeds.
      published: the document's own seeds (at least `size` of them).
      sweep: the seeds of --seeds (the hook's `sweep`), or None.
      document: the document's name, recorded with each claim.

    Each seed's subject is computed once; an exception in `subject` fails the section.
    """
    comparisons = list(comparisons)
    seeds = sorted(set(published) | set(sweep or ()))
    subjects = {seed: subject(seed) for seed in seeds}
    claims: dict[str, dict[str, Any]] = {}
    for comparison in comparisons:
        on_published = _judged(comparison, subjects, published, size)
        entry = {name: v for name, v in on_published.to_json().items() if name in _PUBLISHED}
        entry["holds"] = comparison.holds_for(list(on_published.values))
        entry["intervals"] = None  # intervals on the published seeds: the project's to add
        claims[comparison.claim_id] = {"published": entry}
        if document is not None:
            claims[comparison.claim_id]["document"] = document
        if sweep:
            claims[comparison.claim_id]["sweep"] = _judged(
                comparison, subjects, sweep, size
            ).to_json()
    return {
        "methods": methods(size),
        "published_seeds": list(published),
        "sweep_seeds": list(sweep) if sweep else None,
        "claims": claims,
    }
