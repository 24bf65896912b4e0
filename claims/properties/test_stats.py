"""lib/metrics/resampled.py and engine/claim_audit/stats.py: the bootstrap against the metrics
it resamples, and intervals of known truths."""

import numpy as np
import pytest
from claim_audit import stats
from claim_audit.engine.sweep import parse_seeds
from claim_audit.engine.verdict import Region, safe_ratio
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from uncertainty_claims import metrics
from uncertainty_claims.metrics import resampled

pytestmark = pytest.mark.property

SIZES = st.integers(1, 40)
# Small integers make ties common, as in the post's rounded subsample scores.
SCORES = st.one_of(
    hnp.arrays(np.int64, SIZES, elements=st.integers(-5, 5)),
    hnp.arrays(np.float64, SIZES, elements=st.floats(-1e3, 1e3)),
)


def counts_of(indices: np.ndarray, n: int) -> np.ndarray:
    """The counts row of one resample given by its drawn indices."""
    return np.bincount(indices, minlength=n)[None, :].astype(np.float64)


@settings(max_examples=100)
@given(SCORES, SCORES, st.integers(0, 2**32 - 1))
def test_auroc_of_a_resample_is_the_auroc_of_the_resampled_scores(pos, neg, seed):
    rng = np.random.default_rng(seed)
    ip, ineg = rng.integers(0, pos.size, pos.size), rng.integers(0, neg.size, neg.size)
    got = resampled.auroc(pos, neg, counts_of(ip, pos.size), counts_of(ineg, neg.size))
    assert got[0] == pytest.approx(metrics.auroc(pos[ip], neg[ineg]), rel=1e-12, abs=1e-15)


@settings(max_examples=100)
@given(st.integers(1, 60), st.integers(2, 20), st.integers(0, 2**32 - 1))
def test_binned_gap_of_a_resample_is_the_ece_of_the_resampled_images(n, n_bins, seed):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(4, 0.5), size=n)
    labels = rng.integers(0, 4, n)
    drawn = rng.integers(0, n, n)
    confidence = probs.max(axis=1)
    correct = (probs.argmax(axis=1) == labels).astype(np.float64)
    got = resampled.binned_gap(
        confidence, correct, metrics.bin_index(confidence, n_bins=n_bins), counts_of(drawn, n)
    )
    expected = metrics.ece(probs[drawn], labels[drawn], n_bins=n_bins)
    assert got[0] == pytest.approx(expected, rel=1e-12, abs=1e-15)


@settings(max_examples=50)
@given(hnp.arrays(np.float64, SIZES, elements=st.floats(-1e6, 1e6)), st.integers(0, 2**32 - 1))
def test_mean_of_a_resample_is_the_mean_of_the_resampled_values(values, seed):
    drawn = np.random.default_rng(seed).integers(0, values.size, values.size)
    got = resampled.mean(values, counts_of(drawn, values.size))[0]
    assert got == pytest.approx(values[drawn].mean(), rel=1e-9, abs=1e-9)


def test_resamples_do_not_depend_on_the_chunk_size():
    whole = np.concatenate(
        list(resampled.resample_counts(50, 30, np.random.default_rng(3), chunk=30))
    )
    pieces = np.concatenate(
        list(resampled.resample_counts(50, 30, np.random.default_rng(3), chunk=7))
    )
    assert np.array_equal(whole, pieces)
    assert whole.shape == (30, 50) and np.all(whole.sum(axis=1) == 50)


def test_paired_bootstrap_of_identical_arrays_is_zero_width_at_zero():
    rng = np.random.default_rng(0)
    scores, ood = rng.normal(size=300), rng.normal(size=200)
    test_counts = np.concatenate(list(resampled.resample_counts(300, 200, rng)))
    ood_counts = np.concatenate(list(resampled.resample_counts(200, 200, rng)))
    gaps = [
        resampled.mean(scores, test_counts) - resampled.mean(scores, test_counts),
        resampled.auroc(scores, ood, test_counts, ood_counts)
        - resampled.auroc(scores, ood, test_counts, ood_counts),
    ]
    for gap in gaps:
        interval = stats.interval(0.0, gap)
        assert (interval.low, interval.high) == (0.0, 0.0)
        assert resampled.p_value(gap) == 1.0


def test_interval_of_a_mean_covers_the_truth_about_95_percent_of_the_time():
    """100 samples of 200 draws from N(1, 2^2): the 95% interval of the mean covers 1."""
    rng = np.random.default_rng(7)
    covered = 0
    for _ in range(100):
        sample = rng.normal(1.0, 2.0, size=200)
        means = np.concatenate(
            [resampled.mean(sample, c) for c in resampled.resample_counts(200, 500, rng)]
        )
        interval = stats.interval(sample.mean(), means)
        covered += interval.low <= 1.0 <= interval.high
    # Binomial sd of the coverage over 100 trials is about 2.2 points.
    assert 88 <= covered <= 100


def test_bias_correction_moves_the_interval_against_the_resampling_bias():
    """Resamples that sit above the estimate (as an ECE's do) pull the BC interval down."""
    samples = np.random.default_rng(1).normal(1.0, 0.1, size=1000)
    plain = np.quantile(samples, [(1 - stats.LEVEL) / 2, (1 + stats.LEVEL) / 2])  # percentile
    corrected = stats.interval(0.9, samples)
    assert corrected.low < plain[0] and corrected.high < plain[1]


def test_an_end_beyond_the_resamples_is_flagged():
    samples = np.linspace(1.0, 2.0, 1000)
    interval = stats.interval(0.5, samples)  # every resample above the estimate
    assert interval.low_at_edge and interval.low == 1.0
    assert not interval.within(0.0, 10.0) and interval.within(-np.inf, 10.0)


def test_p_value_has_the_bootstrap_floor():
    assert resampled.p_value(np.ones(999)) == pytest.approx(2 / 1000)
    assert resampled.p_value(np.r_[-np.ones(500), np.ones(500)]) == 1.0


@pytest.mark.parametrize("bad", [np.array([1.0]), np.array([1.0, np.nan]), np.ones((2, 2))])
def test_interval_rejects_unusable_samples(bad):
    with pytest.raises(ValueError, match="finite bootstrap samples"):
        stats.interval(1.0, bad)


def test_regions_and_ratios():
    assert Region(3, 4).contains(3) and Region(3, 4).contains(4)
    assert not Region(0, 0.05, closed=False).contains(0)
    assert str(Region(3, 4)) == "in [3, 4]" and str(Region(0, closed=False)) == "> 0"
    assert str(Region(high=1, closed=False)) == "< 1" and str(Region(5)) == ">= 5"
    assert safe_ratio(1, 0) == np.inf and np.isnan(safe_ratio(0, 0)) and safe_ratio(1, 4) == 0.25


@pytest.mark.parametrize(
    ("text", "seeds"),
    [
        ("0-9", tuple(range(10))),
        ("0,3,5-7", (0, 3, 5, 6, 7)),
        (" 7, 1 - 2", (1, 2, 7)),
        ("0-999", tuple(range(1000))),
    ],
)
def test_seeds_syntax(text, seeds):
    assert parse_seeds(text) == seeds


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected seeds like"),
        ("0-", "expected seeds like"),
        ("-1,2,3", "expected seeds like"),
        ("1.5,2,3", "expected seeds like"),
        ("zero-nine", "expected seeds like"),
        ("9-0", "runs backwards"),
        ("0-4,3", r"seeds \[3\] are given more than once"),
        ("0-1000", "at most 1000 seeds"),
        ("0,1,2000000", "below 1,000,000"),
    ],
)
def test_bad_seeds_are_rejected_with_the_reason(text, message):
    with pytest.raises(ValueError, match=message):
        parse_seeds(text)
