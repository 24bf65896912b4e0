"""Properties of the OOD metrics: rank AUROC, FPR at a fixed TPR and the logit-based scores."""

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from uncertainty_claims.metrics import auroc, energy_score, fpr_at_tpr, max_logit_score, msp_score

pytestmark = pytest.mark.property

SIZES = st.integers(1, 30)
# Small integers make ties common; exactly representable, so exact transforms keep the order.
INT_SCORES = hnp.arrays(np.int64, SIZES, elements=st.integers(-20, 20))
FLOAT_SCORES = hnp.arrays(np.float64, SIZES, elements=st.floats(-1e6, 1e6))
SCORES = st.one_of(INT_SCORES, FLOAT_SCORES)
TPRS = st.one_of(st.sampled_from([0.95, 0.9, 0.5, 1.0]), st.floats(0.0, 1.0, exclude_min=True))


def pairwise_auroc(pos: np.ndarray, neg: np.ndarray) -> float:
    """Slow reference: P(pos > neg) + 0.5 P(pos == neg) over all n1 * n2 pairs."""
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def brute_force_fpr(pos: np.ndarray, neg: np.ndarray, tpr: float) -> float:
    """Largest threshold among the positive scores whose TPR is >= tpr; FPR at it."""
    threshold = max(t for t in pos if np.mean(pos >= t) >= tpr)
    return float(np.mean(neg >= threshold))


@settings(max_examples=100)
@given(SCORES, SCORES)
def test_auroc_equals_the_pairwise_mann_whitney_count(pos, neg):
    got = auroc(pos, neg)
    assert 0.0 <= got <= 1.0
    assert got == pytest.approx(pairwise_auroc(pos, neg), rel=1e-12, abs=1e-15)


@settings(max_examples=100)
@given(INT_SCORES, INT_SCORES, st.sampled_from(["affine", "cube", "exp"]))
def test_auroc_is_unchanged_by_strictly_increasing_transforms(pos, neg, name):
    # On integers in [-20, 20] each transform is exact or (exp) strictly increasing with
    # outputs a factor e apart, so rounding neither creates nor removes ties: ranks are equal.
    transform = {
        "affine": lambda x: 3.0 * x + 7.0,
        "cube": lambda x: x.astype(np.float64) ** 3,
        "exp": lambda x: np.exp(x.astype(np.float64)),
    }[name]
    assert auroc(transform(pos), transform(neg)) == auroc(pos, neg)


@settings(max_examples=100)
@given(SCORES, SCORES)
def test_auroc_is_antisymmetric(pos, neg):
    assert auroc(pos, neg) + auroc(neg, pos) == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=30)
@given(SIZES, SIZES, st.floats(-1e6, 1e6))
def test_auroc_of_all_tied_scores_is_one_half(n1, n2, value):
    assert auroc(np.full(n1, value), np.full(n2, value)) == 0.5


def test_auroc_of_perfectly_separated_scores_is_one_or_zero():
    assert auroc([2.0, 3.0], [0.0, 1.0]) == 1.0
    assert auroc([0.0, 1.0], [2.0, 3.0]) == 0.0


@settings(max_examples=100)
@given(SCORES, SCORES, TPRS)
def test_fpr_at_tpr_matches_a_brute_force_threshold_search(pos, neg, tpr):
    got = fpr_at_tpr(pos, neg, tpr=tpr)
    assert 0.0 <= got <= 1.0
    assert got == brute_force_fpr(pos, neg, tpr)


@settings(max_examples=60)
@given(SCORES, SCORES, TPRS, TPRS)
def test_fpr_at_tpr_is_non_decreasing_in_tpr(pos, neg, a, b):
    low, high = sorted((a, b))
    assert fpr_at_tpr(pos, neg, tpr=low) <= fpr_at_tpr(pos, neg, tpr=high)


LOGITS = hnp.arrays(
    np.float64,
    st.tuples(st.integers(1, 20), st.integers(1, 8)),
    elements=st.floats(-30, 30),
)


@settings(max_examples=60)
@given(LOGITS)
def test_logit_scores_match_numpy_references(z):
    n_classes = z.shape[1]
    msp = msp_score(z)
    assert msp.shape == (z.shape[0],)
    np.testing.assert_allclose(msp, scipy.special.softmax(z, axis=1).max(axis=1), rtol=1e-12)
    assert np.all((msp >= 1.0 / n_classes - 1e-12) & (msp <= 1.0))
    np.testing.assert_array_equal(max_logit_score(z), z.max(axis=1))
    # The naive log(sum(exp)) loses digits when the result is near 0, hence the atol.
    naive = np.log(np.sum(np.exp(z), axis=1))
    np.testing.assert_allclose(energy_score(z), naive, rtol=1e-12, atol=1e-12)


@settings(max_examples=60)
@given(LOGITS, st.floats(-100, 100))
def test_energy_and_max_logit_shift_with_a_constant_while_msp_does_not(z, c):
    np.testing.assert_allclose(energy_score(z + c), energy_score(z) + c, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(max_logit_score(z + c), max_logit_score(z) + c, atol=1e-12)
    np.testing.assert_allclose(msp_score(z + c), msp_score(z), rtol=1e-9)


S = np.array([0.1, 0.7, 0.3])


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: auroc([], S), ValueError, r"pos_scores must be non-empty; got shape \(0,\)"),
        (lambda: auroc(S, []), ValueError, r"neg_scores must be non-empty; got shape \(0,\)"),
        (lambda: auroc(S[:, None], S), ValueError, r"pos_scores must be 1-D; got shape \(3, 1\)"),
        (lambda: auroc(S, 0.5), ValueError, r"neg_scores must be 1-D; got shape \(\)"),
        (lambda: auroc([np.nan], S), ValueError, r"pos_scores must be finite; got nan at index 0"),
        (lambda: auroc(S, [0.0, -np.inf]), ValueError, r"neg_scores must be finite; got -inf"),
        (lambda: auroc(["a"], S), TypeError, r"pos_scores must be a real"),
        (lambda: fpr_at_tpr([], S), ValueError, r"pos_scores must be non-empty"),
        (lambda: fpr_at_tpr(S, []), ValueError, r"neg_scores must be non-empty"),
        (lambda: fpr_at_tpr(S, S, tpr=0.0), ValueError, r"tpr must be in \(0, 1\]; got 0.0"),
        (lambda: fpr_at_tpr(S, S, tpr=1.5), ValueError, r"tpr must be in \(0, 1\]; got 1.5"),
        (lambda: fpr_at_tpr(S, S, tpr=np.nan), ValueError, r"tpr must be finite"),
        (lambda: msp_score(S), ValueError, r"logits must be 2-D"),
        (lambda: max_logit_score([[np.inf]]), ValueError, r"logits must be finite"),
        (lambda: energy_score(np.zeros((0, 3))), ValueError, r"logits must be non-empty"),
    ],
)
def test_bad_input_is_rejected_with_a_message_naming_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()
