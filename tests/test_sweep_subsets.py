"""A calibration claim over many seeds is judged on a seeded sample of its 3-seed subsets.

`--seeds 0-999` has C(1000, 3) = 166,167,000 subsets: too many to judge one by one, so
beyond `MAX_SUBSETS` a uniform sample stands in for them (engine/claim_audit/engine/sweep.py). These
tests check the sample on synthetic per-seed figures (no training): the subsets are valid,
reproducible, all of them when few, and the share holding in the sample is the share over
all subsets within its sampling error.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from claim_audit.engine import sweep
from claim_audit.engine.sweep import MAX_SUBSETS, across_seeds, seed_subsets
from claim_audit.engine.verdict import Comparison, Effect, Region
from readings.calibration.measures import mean_gap

pytestmark = pytest.mark.robustness

# "Yat's ECE is higher than ReLU's", on per-seed figures of n synthetic seeds.
GAP = Comparison(
    (Effect("ECE, Yat - ReLU", mean_gap(("yat", "ece"), ("relu", "ece")), Region(0.0)),)
)


def per_seed(n: int) -> dict[str, list[dict]]:
    """Per-seed ECEs where the claim holds on some 3-seed subsets and not on others."""
    rng = np.random.default_rng(1)
    return {
        "yat": [{"ece": float(x)} for x in rng.normal(0.01, 0.02, n)],
        "relu": [{"ece": float(x)} for x in rng.normal(0.0, 0.02, n)],
    }


def test_few_seeds_give_every_subset_in_order():
    assert seed_subsets(5, 3) == list(itertools.combinations(range(5), 3))
    assert len(seed_subsets(40, 3)) == math.comb(40, 3) <= MAX_SUBSETS  # 40 seeds: all of them


def test_many_seeds_give_a_reproducible_sample_of_valid_subsets():
    sample = seed_subsets(1000, 3)
    assert len(sample) == MAX_SUBSETS < math.comb(1000, 3)
    assert sample == seed_subsets(1000, 3)  # seeded: the same sample every run
    assert all(len(set(t)) == 3 and list(t) == sorted(t) for t in sample)
    assert all(0 <= i < 1000 for t in sample for i in t)
    # Uniform: every seed is drawn about equally often (3 / 1000 of the draws each).
    counts = np.bincount(np.ravel(sample), minlength=1000)
    assert counts.min() > 0 and abs(counts.mean() - 30) < 1e-9 and counts.std() < 2 * math.sqrt(30)


def test_the_share_in_the_sample_is_the_share_over_all_subsets(monkeypatch):
    n, k = 30, 2000  # 4,060 subsets, 2,000 of them sampled
    figures = per_seed(n)
    every = across_seeds(GAP, figures, tuple(range(n)), size=3)
    monkeypatch.setattr(sweep, "MAX_SUBSETS", k)
    sampled = across_seeds(GAP, figures, tuple(range(n)), size=3)
    assert every.total == every.population == math.comb(n, 3) and not every.to_json()["sampled"]
    assert sampled.total == k and sampled.population == math.comb(n, 3)
    assert sampled.to_json()["sampled"] and "a sample of 2,000 of 4,060" in sampled.unit
    assert 0.2 < every.fraction < 0.8  # a claim that the subsets disagree on
    standard_error = math.sqrt(every.fraction * (1 - every.fraction) / k)
    assert abs(sampled.fraction - every.fraction) < 4 * standard_error
    # The sample changes nothing judged on all the seeds at once.
    assert sampled.values == every.values and sampled.per_seed_holds == every.per_seed_holds
