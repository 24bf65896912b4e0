"""How often another machine's draws would give a claim another verdict.

A verdict is taken over a sample of draws; another machine draws another sample. The
bootstrap resamples this run's draws and takes the verdict again on each resample: the
share of each verdict estimates how another sample of the same size would read. Over a
whole audit it predicts how many verdicts two independent runs may differ on
(`expected_changes`), which `python -m claim_audit.report portability` holds a second audit
against: more changes than the rule's own error predicts, or a crossing between *holds*
and *refuted*, means the draws did not sample what the other machine computes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping

import numpy as np

RESAMPLES = 100
"""Resamples per claim: the verdict shares to about +-0.05, enough to sum over an audit."""
CHANGES_LEVEL = 0.99
"""A second audit may differ on more claims than predicted with probability 1 - this."""


def verdict_shares(n: int, verdict_of: Callable[[np.ndarray], str]) -> dict[str, float]:
    """The share of each verdict over RESAMPLES resamples of n draws (indices with
    replacement, the same seed for every claim: reproducible)."""
    rng = np.random.default_rng(0)
    counts = Counter(verdict_of(rng.integers(0, n, n)) for _ in range(RESAMPLES))
    return {verdict: count / RESAMPLES for verdict, count in sorted(counts.items())}


def change_probability(shares: Mapping[str, float]) -> float:
    """The chance that two independent samples give a claim different verdicts."""
    return 1.0 - sum(share**2 for share in shares.values())


def expected_changes(shares: Iterable[Mapping[str, float]]) -> tuple[float, int]:
    """(mean, limit): how many of the claims two independent audits give different
    verdicts, on average and at most with probability CHANGES_LEVEL (a Poisson-binomial,
    summed exactly)."""
    probabilities = [change_probability(s) for s in shares]
    distribution = np.array([1.0])
    for p in probabilities:
        distribution = np.convolve(distribution, [1 - p, p])
    limit = int(np.searchsorted(np.cumsum(distribution), CHANGES_LEVEL - 1e-12))
    return float(sum(probabilities)), limit


def crossing(old: str, new: str) -> bool:
    """Whether a verdict crossed between holds and refuted (never a matter of noise)."""
    return {old, new} == {"holds", "refuted"}
