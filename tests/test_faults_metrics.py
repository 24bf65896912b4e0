"""Bad input swept over every public metric: NaN, +-inf, empty and mismatched arrays, bad labels,
probabilities that are not distributions. Each must raise and name the argument, never return a
number. (claims/properties/ checks single cases by hand, and the bounds of T and tpr: a T
outside its bounds, bad `bounds` or a zero among the temperatures is a ValueError naming the
argument, test_classification.py::test_bad_input_is_rejected_with_a_message_naming_the_argument;
a held-out set whose NLL keeps falling past the search bounds, e.g. misaligned labels, makes
`fit_temperature` return the bound by design, test_reference_cases.py::test_fit_temperature_by_hand,
and the post's temperature claim then refutes far outside its tolerance.)
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

from uncertainty_claims import metrics
from uncertainty_claims.calibration.health import temperature_at_nll_minimum
from uncertainty_claims.metrics import resampled

pytestmark = pytest.mark.fault

Z = np.array([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0], [1.0, 1.0, 1.0]])  # logits, 3 examples
P = metrics.softmax(Z)
Y = np.array([0, 2, 1])
S = np.array([0.9, 0.8, 0.3])
V = np.array([[0.1, 0.2], [0.3, 0.1], [0.2, 0.2]])  # 3 samples x 2 points

# Each public metric with valid arguments, named as in its signature (and so in its errors).
CALLS = {
    "softmax": {"logits": Z},
    "msp_score": {"logits": Z},
    "max_logit_score": {"logits": Z},
    "energy_score": {"logits": Z},
    "scale_logits": {"logits": Z, "temperature": 2.0},
    "accuracy": {"probs_or_logits": Z, "labels": Y},
    "bin_index": {"confidence": S},
    "reliability_bins": {"probs": P, "labels": Y},
    "ece": {"probs": P, "labels": Y},
    "ece_equal_mass": {"probs": P, "labels": Y},
    "mce": {"probs": P, "labels": Y},
    "nll": {"probs": P, "labels": Y},
    "brier": {"probs": P, "labels": Y},
    "fit_temperature": {"logits": Z, "labels": Y},
    "heldout_nll_curve": {"logits": Z, "labels": Y, "temperatures": np.array([0.5, 2.0])},
    "auroc": {"pos_scores": S, "neg_scores": S[:2]},
    "fpr_at_tpr": {"pos_scores": S, "neg_scores": S[:2]},
    "gaussian_nll": {"mu": S, "log_var": S, "y": S},
    "decompose_variance": {"means": V, "variances": V},
}
# Arguments whose length must match the first one's.
PAIRED = {"labels", "log_var", "y", "variances"}


def call(name: str, **changes):
    return getattr(metrics, name)(**{**CALLS[name], **changes})


def test_sweep_covers_every_public_metric():
    """Every function in uncertainty_claims.metrics.__all__ is in the sweep, with its real argument names."""
    functions = {n for n in metrics.__all__ if inspect.isfunction(getattr(metrics, n))}
    assert set(CALLS) == functions
    for name, args in CALLS.items():
        assert set(args) <= set(inspect.signature(getattr(metrics, name)).parameters)
    for name in CALLS:
        call(name)  # the valid arguments are valid


FLOAT_ARGUMENTS = [
    pytest.param(name, arg, id=f"{name}-{arg}")
    for name, args in CALLS.items()
    for arg in args
    if arg != "labels"
]


@pytest.mark.parametrize(("name", "arg"), FLOAT_ARGUMENTS)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
def test_non_finite_input_is_rejected(name, arg, bad):
    """A NaN or infinite value in any float argument: ValueError naming that argument."""
    value = np.array(CALLS[name][arg], dtype=np.float64)
    value.flat[-1] = bad
    with pytest.raises(ValueError, match=rf"^{arg} must be finite; got {bad!r}"):
        call(name, **{arg: value})


@pytest.mark.parametrize("name", CALLS)
def test_empty_input_is_rejected(name):
    """Empty arrays (every array argument with zero rows): ValueError, not a NaN mean."""
    empty = {arg: np.asarray(v)[:0] for arg, v in CALLS[name].items() if np.ndim(v) > 0}
    with pytest.raises(ValueError, match=r"must be non-empty"):
        call(name, **empty)


@pytest.mark.parametrize(
    ("name", "arg"),
    [(n, a) for n, args in CALLS.items() for a in args if a in PAIRED],
    ids=lambda v: v,
)
def test_mismatched_lengths_are_rejected(name, arg):
    """An argument one row short of the others: ValueError naming the length or shape."""
    with pytest.raises(ValueError, match=rf"^{arg} must (have length|have the same shape)"):
        call(name, **{arg: CALLS[name][arg][:-1]})


LABELLED = [n for n, args in CALLS.items() if "labels" in args]


@pytest.mark.parametrize("name", LABELLED)
@pytest.mark.parametrize(
    ("labels", "error", "match"),
    [
        (np.array([0, 3, 1]), ValueError, r"labels must be integers in \[0, 3\); got 3"),
        (np.array([0, -1, 1]), ValueError, r"labels must be integers in \[0, 3\); got -1"),
        (np.array([0.0, 2.0, 1.0]), TypeError, r"labels must be an integer array; got dtype f"),
        (np.array([True, False, True]), TypeError, r"labels must be an integer array"),
    ],
    ids=["too-large", "negative", "float", "bool"],
)
def test_bad_labels_are_rejected(name, labels, error, match):
    """Labels out of range, or float / bool (even when integral): rejected, never cast."""
    with pytest.raises(error, match=match):
        call(name, labels=labels)


@pytest.mark.parametrize("name", [n for n, args in CALLS.items() if "probs" in args])
@pytest.mark.parametrize(
    "probs",
    [P * 0.9, np.abs(Z) / 3.0, np.where(P > 0.5, 1.2, -0.1)],
    ids=["rows-sum-to-0.9", "not-normalised", "outside-0-1"],
)
def test_probabilities_that_are_not_distributions_are_rejected(name, probs):
    """Rows not summing to one or entries outside [0, 1]: ValueError naming probs."""
    with pytest.raises(ValueError, match=r"^probs (rows must sum to 1|must be in \[0, 1\])"):
        call(name, probs=probs)


@pytest.mark.parametrize("name", ["auroc", "fpr_at_tpr"])
@pytest.mark.parametrize("empty", ["pos_scores", "neg_scores"])
def test_a_single_class_has_no_auroc(name, empty):
    """Scores of only one class (the other side empty): ValueError, not 0, 0.5 or NaN."""
    with pytest.raises(ValueError, match=rf"^{empty} must be non-empty"):
        call(name, **{empty: np.array([])})


# The bootstrap statistics of lib/metrics/resampled.py
# (unreachable with bad input today: the metrics reject it first), each with valid arguments;
# a counts matrix of two resamples.
COUNTS = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 2.0]])
STATS_CALLS = {
    "p_value": {"samples": S, "null": 0.5},
    "mean": {"values": S, "counts": COUNTS},
    "binned_gap": {
        "confidence": S,
        "correct": np.array([1.0, 0.0, 1.0]),
        "bin_index": Y,
        "counts": COUNTS,
    },
    "auroc": {"pos_scores": S, "neg_scores": S[::-1], "pos_counts": COUNTS, "neg_counts": COUNTS},
}


@pytest.mark.parametrize(
    ("name", "arg"),
    [
        pytest.param(name, arg, id=f"{name}-{arg}")
        for name, args in STATS_CALLS.items()
        for arg in args
        if arg not in ("counts", "pos_counts", "neg_counts", "bin_index")
    ],
)
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
def test_non_finite_input_to_a_bootstrap_statistic_is_rejected(name, arg, bad):
    """A NaN or infinite value given to a bootstrap statistic (lib/metrics/resampled.py `p_value`,
    `mean`, `binned_gap`, `auroc`): ValueError naming the argument, as the metrics do. Not reachable
    today (the metrics refuse such input first). Bug fixed: they computed on, a p-value of
    ten NaN samples was 0.18 and a NaN score counted as a win (lib/metrics/resampled.py checks
    with lib/metrics/_checks.py)."""
    value = np.array(STATS_CALLS[name][arg], dtype=np.float64)
    value.flat[-1] = bad
    with pytest.raises(ValueError, match=rf"^{arg} must be finite; got {bad!r}"):
        getattr(resampled, name)(**{**STATS_CALLS[name], arg: value})


@pytest.mark.parametrize("name", ["mean", "binned_gap", "auroc"])
def test_bootstrap_values_must_match_the_counted_examples(name):
    """Per-example values one short of the counts' columns: ValueError, not a broadcast. Bug
    fixed: they were broadcast (lib/metrics/resampled.py checks
    with lib/metrics/_checks.py)."""
    args = {k: v[:-1] if k in ("values", "confidence", "pos_scores") else v for k, v in STATS_CALLS[name].items()}  # fmt: skip
    with pytest.raises(ValueError, match=r"must have one value per counted example"):
        getattr(resampled, name)(**args)


def test_temperature_stopped_in_a_flat_stretch_fails_its_health_check():
    """A fitted temperature stuck in a flat stretch of the held-out NLL (the recipe's 1e-12
    probability floor): here the bounded Brent search stops at T = 0.206 (NLL 13.8) where a
    temperature of 20 gives 2.07. The search stays as published; a health check compares the
    fitted T's NLL with the minimum over 401 temperatures of the search range and fails it
    (the calibration nets' health claims run it on every seed); a well-placed T passes. Bug
    fixed: nothing noticed (lib/calibration/health.py `temperature_at_nll_minimum`)."""
    logits, labels = np.array([[0.0, 80.0], [40.0, 0.0]]), np.array([0, 0])
    fitted = metrics.fit_temperature(logits, labels)
    check = temperature_at_nll_minimum(logits, labels, fitted)
    assert not check.passed
    assert check.measured == pytest.approx(13.8155 - 2.0725, abs=1e-3)
    assert temperature_at_nll_minimum(logits, labels, 20.0).passed
    assert temperature_at_nll_minimum(Z, Y, metrics.fit_temperature(Z, Y)).passed


@pytest.mark.parametrize("bad", [0.5, -1.0, 2.0**31], ids=["fraction", "negative", "too-large"])
def test_auroc_counts_must_be_whole_numbers_of_draws(bad):
    """The bootstrap AUROC sums its counts as integers (exact, so the same bits as float64
    sums); a count that is not a whole number of draws is refused, not truncated."""
    counts = COUNTS.copy()
    counts[0, 0] = bad
    with pytest.raises(ValueError, match=r"^neg_counts must be whole numbers"):
        resampled.auroc(S, S[::-1], COUNTS, counts)


# A finite long double beyond float64's range (x86-64 has an 80-bit one; where np.longdouble
# is float64 itself there is no such value to give).
HUGE = np.longdouble(np.finfo(np.float64).max) * 16
LONG_DOUBLE_WIDER = np.finfo(np.longdouble).max > np.finfo(np.float64).max


@pytest.mark.skipif(not LONG_DOUBLE_WIDER, reason="np.longdouble is float64 here")
@pytest.mark.parametrize(("name", "arg"), FLOAT_ARGUMENTS)
def test_long_double_beyond_float64_is_rejected(name, arg):
    """A finite np.longdouble value too large for float64 in any float argument: ValueError
    naming the argument and the value. Bug fixed: finiteness was checked before the
    conversion to float64, where the value became inf and the metric answered wrongly (an
    AUROC of 0.5 for a perfect separation, a NaN softmax) (lib/metrics/_checks.py
    `as_real_array`)."""
    value = np.array(CALLS[name][arg], dtype=np.longdouble)
    value.flat[-1] = HUGE
    with pytest.raises(ValueError, match=rf"^{arg} must be finite in float64 .*; got .*e\+309"):
        call(name, **{arg: value})


@pytest.mark.skipif(not LONG_DOUBLE_WIDER, reason="np.longdouble is float64 here")
def test_long_double_within_float64_is_computed_as_float64():
    """Long doubles that fit in float64 are rounded to it and computed on, as documented."""
    pos, neg = np.array([3.0, 4.0], dtype=np.longdouble), np.array([1.0, 2.0], np.longdouble)
    assert metrics.auroc(pos, neg) == 1.0
    assert metrics.auroc(pos * HUGE / 1e10, neg) == 1.0


def test_gaussian_nll_of_finite_extreme_input_is_its_value_not_nan():
    """gaussian_nll on finite input whose float64 evaluation overflows: a variance of
    exp(-1000) around an exact mean, errors of 2e200 under log_var 500, log variances near
    float64's maximum: the NLL's value (to float64 rounding), inf only where it is beyond
    float64. Bug fixed: NaN (0 * inf), or inf for a finite NLL (an overflowed square or sum)
    (lib/metrics/regression.py `gaussian_nll`)."""
    assert metrics.gaussian_nll([0.0], [-1000.0], [0.0]) == -500.0
    assert metrics.gaussian_nll([0.0, 1.0], [-1000.0, 0.0], [0.0, 1.0]) == -250.0
    # 0.5 (500 + (4e200)^2 exp(-500)) = 0.5 exp(2 log 4e200 - 500), to float64 rounding.
    big = 0.5 * math.exp(2 * math.log(4e200) - 500.0)
    assert metrics.gaussian_nll([-2e200], [500.0], [2e200]) == pytest.approx(big, rel=1e-12)
    top = np.finfo(np.float64).max
    assert metrics.gaussian_nll([0.0] * 3, [top] * 3, [0.0] * 3) == 0.5 * top
    assert metrics.gaussian_nll([0.0] * 2, [-top] * 2, [0.0, 0.0]) == -0.5 * top
    # exp(1000) / 2 is beyond float64: the nearest float64 is inf.
    assert metrics.gaussian_nll([0.0], [-1000.0], [1.0]) == math.inf


def test_heldout_nll_curve_of_finite_extreme_logits_is_its_value_not_nan():
    """heldout_nll_curve (and fit_temperature, which searches the same NLL) on finite logits
    whose quotient by T overflows float64 (1e308 / 0.5, -1e308 / 0.5): the NLL of the
    softmax of logits / T, which is exact here (one-hot rows, a uniform row). Bug fixed: NaN
    (inf - inf), and a temperature search that stopped where its objective turned NaN
    (lib/metrics/classification.py `heldout_nll_curve`, `fit_temperature`)."""
    logits = np.array([[1e308, -1e308], [-1e308, 1e308], [-1e308, -1e308], [0.0, 1e308]])
    floor = -math.log(1e-12)  # a probability of 0, floored at 1e-12 as `nll` does
    want = (0.0 + floor + math.log(2.0) + 0.0) / 4
    assert metrics.heldout_nll_curve(logits, [0, 0, 1, 1], [0.5, 2.0]).tolist() == [want, want]
    # Row 0's NLL is the floor at every T of the search's range, row 1's falls as T does:
    # the search ends at the range's bottom, 0.05, not where z / T overflows (T = 0.0556).
    fitted = metrics.fit_temperature([[1e307, 0.0], [0.0, 1.0]], [1, 1])
    assert fitted == pytest.approx(0.05, rel=1e-3)
