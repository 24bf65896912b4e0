"""Properties of the regression metrics: Gaussian NLL and the ensemble variance decomposition."""

import math

import numpy as np
import pytest
import scipy.stats
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from uncertainty_claims.metrics import decompose_variance, gaussian_nll

pytestmark = pytest.mark.property

EPS = np.finfo(np.float64).eps


@st.composite
def ensemble_outputs(draw: st.DrawFn):
    """Means and variances of shape [K, ...] with K >= 1 and up to two trailing axes."""
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6))
    means = draw(hnp.arrays(np.float64, shape, elements=st.floats(-1e3, 1e3)))
    variances = draw(hnp.arrays(np.float64, shape, elements=st.floats(0.0, 1e3)))
    return means, variances


@settings(max_examples=80)
@given(ensemble_outputs())
def test_decomposition_matches_the_law_of_total_variance(outputs):
    means, variances = outputs
    d = decompose_variance(means, variances)
    for part in (d.mean, d.aleatoric, d.epistemic, d.total):
        assert part.shape == means.shape[1:]
    np.testing.assert_array_equal(d.total, d.aleatoric + d.epistemic)
    assert np.all(d.epistemic >= 0)
    # Independent route: Var[Y] = E[Y^2] - E[Y]^2 with E[Y^2] = E[mu^2 + sigma^2] for the
    # equal-weight mixture. Cancellation in that difference costs ~eps * E[Y^2] absolute.
    second_moment = np.mean(means**2 + variances, axis=0)
    mixture_mean = np.sum(means, axis=0) / means.shape[0]
    scale = 1.0 + np.max(means**2) + np.max(variances)
    np.testing.assert_allclose(d.mean, mixture_mean, rtol=1e-12, atol=1e-12 * scale)
    np.testing.assert_allclose(d.total, second_moment - mixture_mean**2, rtol=0, atol=1e-9 * scale)


@settings(max_examples=60)
@given(ensemble_outputs(), st.integers(1, 8))
def test_identical_samples_have_no_epistemic_variance(outputs, k):
    means, variances = outputs
    d = decompose_variance(np.repeat(means[:1], k, axis=0), np.repeat(variances[:1], k, axis=0))
    # The mean of k equal numbers may round away from them by a few ulps, so epistemic can be a
    # squared rounding error rather than exactly 0.
    np.testing.assert_allclose(d.epistemic, 0.0, atol=(k * EPS * np.max(np.abs(means))) ** 2)
    np.testing.assert_allclose(d.aleatoric, variances[0], rtol=k * EPS)


@st.composite
def spread_samples(draw: st.DrawFn):
    """A 1-D sample with non-negligible spread, so its log variance is well conditioned."""
    y = draw(hnp.arrays(np.float64, st.integers(2, 30), elements=st.floats(-100, 100)))
    assume(np.var(y) > 1e-3)
    return y


@settings(max_examples=80)
@given(spread_samples(), st.floats(1e-3, 3.0), st.sampled_from([-1.0, 1.0]), st.booleans())
def test_gaussian_nll_is_minimised_at_the_sample_mean_and_variance(y, size, sign, move_mean):
    mu0 = np.full_like(y, np.mean(y))
    lv0 = np.full_like(y, np.log(np.var(y)))
    best = gaussian_nll(mu0, lv0, y)
    # Analytically, moving mu by d * std raises the NLL by d^2 / 2 and moving log_var by e raises
    # it by (e + exp(-e) - 1) / 2, increasing in |e|; at the smallest |d| = |e| = 1e-3 these are
    # 5e-7 and ~2.5e-7, far above the ~1e-14 rounding error of the NLL itself.
    if move_mean:
        assert gaussian_nll(mu0 + sign * size * np.std(y), lv0, y) > best
    else:
        assert gaussian_nll(mu0, lv0 + sign * size, y) > best
    assert best == pytest.approx(0.5 * (np.log(np.var(y)) + 1.0), rel=1e-12, abs=1e-12)


# Element ranges of (mu, log_var, y).
BOUNDS = ((-10.0, 10.0), (-5.0, 5.0), (-10.0, 10.0))


@settings(max_examples=60)
@given(
    hnp.array_shapes(min_dims=1, max_dims=2, max_side=8).flatmap(
        lambda shape: st.tuples(
            *(hnp.arrays(np.float64, shape, elements=st.floats(lo, hi)) for lo, hi in BOUNDS)
        )
    )
)
def test_gaussian_nll_equals_the_scipy_log_density_minus_its_constant(arrays):
    mu, log_var, y = arrays
    logpdf = scipy.stats.norm.logpdf(y, loc=mu, scale=np.exp(0.5 * log_var))
    expected = -np.mean(logpdf) - 0.5 * math.log(2 * math.pi)
    assert gaussian_nll(mu, log_var, y) == pytest.approx(expected, rel=1e-9, abs=1e-9)


V = np.ones((3, 2))


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: gaussian_nll([0.0], [0.0, 1.0], [0.0]), ValueError, r"log_var must have the sa"),
        (lambda: gaussian_nll([0.0], [0.0], [0.0, 1.0]), ValueError, r"y must have the same sha"),
        (lambda: gaussian_nll([], [], []), ValueError, r"mu must be non-empty"),
        (lambda: gaussian_nll([np.nan], [0.0], [0.0]), ValueError, r"mu must be finite; got nan"),
        (lambda: gaussian_nll([0.0], [np.inf], [0.0]), ValueError, r"log_var must be finite"),
        (lambda: gaussian_nll([0.0], [0.0], ["a"]), TypeError, r"y must be a real"),
        (lambda: decompose_variance(V, V[:2]), ValueError, r"variances must have the same shape"),
        (lambda: decompose_variance(1.0, 1.0), ValueError, r"means must be at least 1-D"),
        (lambda: decompose_variance(V[:0], V[:0]), ValueError, r"means must be non-empty"),
        (lambda: decompose_variance(V, -V), ValueError, r"variances must be in \[0, inf\); got"),
        (lambda: decompose_variance(V * np.nan, V), ValueError, r"means must be finite"),
        (lambda: decompose_variance(V, V > 0), TypeError, r"variances must be a real"),
    ],
)
def test_bad_input_is_rejected_with_a_message_naming_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()
