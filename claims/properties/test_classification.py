"""Properties of the classification metrics: softmax, calibration errors, NLL, Brier, temperature."""

import math
import tracemalloc

import numpy as np
import pytest
import scipy.special
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.optimize import minimize_scalar

from uncertainty_claims.metrics import (
    accuracy,
    bin_index,
    brier,
    ece,
    ece_equal_mass,
    fit_temperature,
    heldout_nll_curve,
    mce,
    nll,
    reliability_bins,
    scale_logits,
    softmax,
)

pytestmark = pytest.mark.property

LARGE_N = 20_000


@st.composite
def probs_and_labels(draw: st.DrawFn, max_n: int = 40, max_c: int = 6):
    """Small [N, C] probability rows (normalised positive weights) and labels in [0, C)."""
    n = draw(st.integers(1, max_n))
    c = draw(st.integers(2, max_c))
    weights = draw(hnp.arrays(np.float64, (n, c), elements=st.floats(1e-3, 1.0)))
    labels = draw(hnp.arrays(np.int64, n, elements=st.integers(0, c - 1)))
    return weights / weights.sum(axis=1, keepdims=True), labels


def logit_arrays(bound: float = 50.0, max_n: int = 20, max_c: int = 6):
    """Small [N, C] finite logit arrays with entries in [-bound, bound]."""
    shapes = st.tuples(st.integers(1, max_n), st.integers(1, max_c))
    return hnp.arrays(np.float64, shapes, elements=st.floats(-bound, bound))


def sample_labels(rng: np.random.Generator, probs: np.ndarray) -> np.ndarray:
    """Draw one label per row from the categorical distribution in that row."""
    cdf = np.cumsum(probs, axis=1)
    cdf[:, -1] = 1.0
    return (rng.random((probs.shape[0], 1)) < cdf).argmax(axis=1)


def slow_ece_and_mce(probs: np.ndarray, labels: np.ndarray, n_bins: int) -> tuple[float, float]:
    """Loop reference: bin b holds edges[b] <= conf < edges[b+1]; the last bin also holds 1.0."""
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    members: list[list[tuple[float, bool]]] = [[] for _ in range(n_bins)]
    for row, label in zip(probs, labels, strict=True):
        conf = max(row)
        pred = list(row).index(conf)
        b = next(b for b in range(n_bins) if conf < edges[b + 1] or b == n_bins - 1)
        members[b].append((conf, pred == label))
    gaps = [
        (len(m), abs(sum(hit for _, hit in m) / len(m) - sum(c for c, _ in m) / len(m)))
        for m in members
        if m
    ]
    return sum(n * g for n, g in gaps) / len(labels), max(g for _, g in gaps)


@settings(max_examples=60)
@given(logit_arrays(bound=1e3))
def test_softmax_is_a_distribution_and_matches_scipy(z):
    p = softmax(z)
    assert p.dtype == np.float64
    assert np.all(p >= 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(p, scipy.special.softmax(z, axis=1), rtol=1e-12, atol=1e-15)


@settings(max_examples=60)
@given(logit_arrays(), st.data())
def test_softmax_is_unchanged_by_adding_a_constant_per_row(z, data):
    shift = data.draw(hnp.arrays(np.float64, (z.shape[0], 1), elements=st.floats(-1e3, 1e3)))
    # z + shift is rounded at the scale of |z + shift| <= 1050, i.e. to ~1.2e-13 absolute; the
    # softmax of logits perturbed by d changes by at most ~2|d| per entry, far below 1e-10.
    np.testing.assert_allclose(softmax(z + shift), softmax(z), rtol=0, atol=1e-10)


def test_softmax_is_stable_for_huge_logits():
    p = softmax(np.array([[1e300, 0.0, -1e300], [1000.0, 1000.0, 999.0]]))
    assert np.all(np.isfinite(p))
    np.testing.assert_allclose(p[0], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(p[1], np.array([1.0, 1.0, np.exp(-1.0)]) / (2 + np.exp(-1.0)))


@settings(max_examples=80)
@given(
    logit_arrays(bound=1e150),
    st.floats(1e-100, 1e100),
)
def test_temperature_scaling_never_changes_the_argmax(z, t):
    scaled = scale_logits(z, t)
    rows = np.arange(z.shape[0])
    # Division by T > 0 is monotone, so the original argmax stays a maximiser of the scaled row
    # exactly. Rounding can merge two nearby logits into a tie (e.g. adjacent floats divided by
    # T > 1); np.argmax then reports the lowest tied index, so demand equality of the indices
    # only where the scaled row has no tie at its maximum.
    original = z.argmax(axis=1)
    assert np.array_equal(scaled[rows, original], scaled.max(axis=1))
    untied = (scaled == scaled.max(axis=1, keepdims=True)).sum(axis=1) == 1
    assert np.array_equal(scaled.argmax(axis=1)[untied], original[untied])


@settings(max_examples=60)
@given(probs_and_labels(), st.integers(1, 20))
def test_calibration_errors_lie_in_the_unit_interval(pl, n_bins):
    probs, labels = pl
    e = ece(probs, labels, n_bins=n_bins)
    assert 0.0 <= e <= 1.0
    assert e <= mce(probs, labels, n_bins=n_bins) + 1e-15 <= 1.0 + 1e-15
    assert 0.0 <= ece_equal_mass(probs, labels, n_bins=n_bins) <= 1.0


@settings(max_examples=60)
@given(probs_and_labels(), st.integers(1, 20))
def test_ece_and_mce_match_a_slow_loop_reference(pl, n_bins):
    probs, labels = pl
    ref_ece, ref_mce = slow_ece_and_mce(probs, labels, n_bins)
    assert ece(probs, labels, n_bins=n_bins) == pytest.approx(ref_ece, rel=1e-12, abs=1e-14)
    assert mce(probs, labels, n_bins=n_bins) == pytest.approx(ref_mce, rel=1e-12, abs=1e-14)


@settings(max_examples=60)
@given(probs_and_labels(), st.integers(1, 20), st.randoms(use_true_random=False))
def test_ece_is_unchanged_by_permuting_examples(pl, n_bins, random):
    probs, labels = pl
    perm = np.array(random.sample(range(len(labels)), len(labels)))
    # Bin sums are accumulated in a different order, so only rounding may differ.
    for metric in (ece, mce):
        got = metric(probs[perm], labels[perm], n_bins=n_bins)
        assert got == pytest.approx(metric(probs, labels, n_bins=n_bins), rel=1e-12, abs=1e-15)


@settings(max_examples=40)
@given(probs_and_labels())
def test_one_bin_ece_is_the_gap_between_accuracy_and_mean_confidence(pl):
    probs, labels = pl
    gap = abs(np.mean(probs.argmax(axis=1) == labels) - np.mean(probs.max(axis=1)))
    for value in (
        ece(probs, labels, n_bins=1),
        mce(probs, labels, n_bins=1),
        ece_equal_mass(probs, labels, n_bins=1),
    ):
        assert value == pytest.approx(gap, rel=1e-12, abs=1e-15)


@st.composite
def one_populated_bin(draw: st.DrawFn):
    """Binary probs whose confidences all fall in one bin b (>= 0.5) of n_bins equal bins."""
    n_bins = draw(st.integers(2, 20))
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    b = draw(st.integers(math.ceil(n_bins / 2), n_bins - 1))
    last = b == n_bins - 1
    conf_values = st.floats(edges[b], edges[b + 1], exclude_max=not last)
    conf = draw(hnp.arrays(np.float64, st.integers(1, 30), elements=conf_values))
    top_first = draw(hnp.arrays(np.bool_, conf.shape))
    probs = np.where(top_first[:, None], np.c_[conf, 1 - conf], np.c_[1 - conf, conf])
    labels = draw(hnp.arrays(np.int64, conf.shape, elements=st.integers(0, 1)))
    return probs, labels, n_bins, b


@settings(max_examples=60)
@given(one_populated_bin())
def test_ece_of_a_single_populated_bin_is_its_gap(case):
    probs, labels, n_bins, b = case
    bins = reliability_bins(probs, labels, n_bins=n_bins)
    assert bins.count[b] == len(labels)
    assert bins.count.sum() == len(labels)
    gap = abs(np.mean(probs.argmax(axis=1) == labels) - np.mean(probs.max(axis=1)))
    assert ece(probs, labels, n_bins=n_bins) == pytest.approx(gap, rel=1e-12, abs=1e-15)


@settings(max_examples=6, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.integers(2, 10),
    st.floats(0.1, 2.0),
    st.sampled_from([5, 10, 15, 30]),
)
def test_ece_is_near_zero_when_labels_are_drawn_from_the_stated_confidences(
    seed, n_classes, alpha, n_bins
):
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.full(n_classes, alpha), size=LARGE_N)
    labels = sample_labels(rng, probs)
    conf = probs.max(axis=1)
    # Tolerance. Given the probabilities, each example is correct independently with probability
    # c_i (its confidence), and bins depend only on c. For bin b, acc_b - conf_b has mean 0 and
    # variance sum_{i in b} c_i (1 - c_i) / n_b^2, so E|acc_b - conf_b| <= sqrt(sum c(1-c)) / n_b
    # (Jensen) and E[ECE] <= (1/N) sum_b sqrt(sum_{i in b} c_i (1 - c_i)) =: mu_bound.
    # Flipping one label moves ECE by at most (n_b / N)(1 / n_b) = 1/N, so McDiarmid gives
    # P(ECE > E[ECE] + t) <= exp(-2 N t^2); t = sqrt(ln(1e9) / (2N)) ~= 0.023 at N = 20000 makes
    # a false failure a 1e-9 event. The same argument holds for equal-mass bins.
    slack = math.sqrt(math.log(1e9) / (2 * LARGE_N))
    width_bins = bin_index(conf, n_bins=n_bins)
    mass_bins = np.empty(LARGE_N, dtype=np.int64)
    for b, group in enumerate(np.array_split(np.argsort(conf, kind="stable"), n_bins)):
        mass_bins[group] = b
    variance = conf * (1 - conf)
    for metric, index in ((ece, width_bins), (ece_equal_mass, mass_bins)):
        mu_bound = np.sum(np.sqrt(np.bincount(index, weights=variance))) / LARGE_N
        assert metric(probs, labels, n_bins=n_bins) <= mu_bound + slack


@settings(max_examples=60)
@given(probs_and_labels())
def test_nll_brier_and_accuracy_match_loop_references(pl):
    probs, labels = pl
    rows = list(zip(probs, labels, strict=True))
    ref_nll = sum(-math.log(max(p[y], 1e-12)) for p, y in rows) / len(rows)
    ref_brier = sum(sum((pc - (c == y)) ** 2 for c, pc in enumerate(p)) for p, y in rows) / len(
        rows
    )
    ref_acc = sum(list(p).index(max(p)) == y for p, y in rows) / len(rows)
    assert nll(probs, labels) == pytest.approx(ref_nll, rel=1e-12)
    assert brier(probs, labels) == pytest.approx(ref_brier, rel=1e-12, abs=1e-15)
    assert 0.0 <= brier(probs, labels) <= 2.0
    assert accuracy(probs, labels) == ref_acc


@settings(max_examples=200)
@given(probs_and_labels(max_c=40))
def test_brier_is_the_one_hot_formula_bit_for_bit(pl):
    """The Brier score (a figure of the calibration post) is mean(sum((p - onehot(y))^2)) with
    the rows of an identity matrix as one-hots, to the last bit, without that matrix."""
    probs, labels = pl
    onehot = np.eye(probs.shape[1])[labels]
    assert brier(probs, labels) == float(np.mean(np.sum((probs - onehot) ** 2, axis=1)))


def test_brier_builds_no_class_by_class_matrix():
    """Brier's memory grows with the input, not with the square of the classes: at 5,000
    classes (two rows, 80 kB) it peaks at a few copies of its input. Bug fixed: it built a
    [C, C] identity for the one-hot rows (200 MB here, 6.7 GB at 30,000 classes)
    (lib/metrics/classification.py `brier`)."""
    probs = np.full((2, 5_000), 1 / 5_000)
    tracemalloc.start()
    try:
        value = brier(probs, np.array([0, 4_999]))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * probs.nbytes
    assert value == pytest.approx((1 - 1 / 5_000) ** 2 + 4_999 / 5_000**2, rel=1e-12)


def test_nll_floors_a_zero_true_class_probability_at_1e_minus_12():
    assert nll(np.array([[1.0, 0.0]]), np.array([1])) == pytest.approx(-math.log(1e-12))


def planted_problem(seed: int, t_true: float):
    """Logits z ~ N(0, 3^2) [N, 10] and labels drawn from softmax(z / t_true)."""
    rng = np.random.default_rng(seed)
    z = rng.normal(0.0, 3.0, size=(LARGE_N, 10))
    return z, sample_labels(rng, softmax(z / t_true))


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.25, 4.0))
def test_fit_temperature_recovers_a_planted_temperature(seed, t_true):
    z, labels = planted_problem(seed, t_true)
    t_hat = fit_temperature(z, labels)
    # Tolerance. With s = log T, log p_y(s) = z_y e^-s - logsumexp(z e^-s), so the score is
    # -(z_y - E_p[z]) e^-s and the Fisher information of one example is I_i = Var_{p_i}(z_i / T).
    # The MLE s_hat is asymptotically normal with sd 1 / sqrt(sum_i I_i) (about 0.01 here at
    # N = 20000); allow 6 sd (a ~2e-9 two-sided normal tail) plus Brent's xatol of 1e-5 in s.
    p = softmax(z / t_true)
    scaled = z / t_true
    info = np.sum(p * scaled**2) - np.sum(np.sum(p * scaled, axis=1) ** 2)
    assert abs(math.log(t_hat) - math.log(t_true)) <= 6.0 / math.sqrt(info) + 1e-5


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.25, 4.0))
def test_fit_temperature_is_exactly_the_documented_bounded_brent_search(seed, t_true):
    z, labels = planted_problem(seed, t_true)
    z, labels = z[:2000], labels[:2000]

    def obj(log_t):
        return nll(softmax(z / np.exp(log_t)), labels)

    ref = minimize_scalar(obj, bounds=(np.log(0.05), np.log(20.0)), method="bounded")
    assert fit_temperature(z, labels) == float(np.exp(ref.x))


@settings(max_examples=5, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.25, 4.0))
def test_fitted_temperature_minimises_the_heldout_nll_curve(seed, t_true):
    z, labels = planted_problem(seed, t_true)
    z, labels = z[:2000], labels[:2000]
    t_hat = fit_temperature(z, labels)
    grid = np.geomspace(0.05, 20.0, 41)
    curve = heldout_nll_curve(z, labels, grid)
    assert curve == pytest.approx([nll(softmax(scale_logits(z, t)), labels) for t in grid])
    # NLL is convex in 1/T, hence unimodal in log T, so bounded Brent finds the global minimum
    # to within xatol = 1e-5 in log T, where the curve is flat to O(1e-10).
    assert heldout_nll_curve(z, labels, [t_hat])[0] <= curve.min() + 1e-8


@st.composite
def logits_labels_temperatures(draw: st.DrawFn):
    """Logits with ties (small whole numbers) and wide ranges, labels, and temperatures."""
    n, c = draw(st.integers(1, 40)), draw(st.integers(2, 8))
    value = st.one_of(st.floats(-1e3, 1e3), st.integers(-3, 3).map(float))
    logits = draw(hnp.arrays(np.float64, (n, c), elements=value))
    labels = draw(hnp.arrays(np.int64, n, elements=st.integers(0, c - 1)))
    temperatures = draw(hnp.arrays(np.float64, st.integers(1, 8), elements=st.floats(0.01, 100.0)))
    return logits, labels, temperatures


@settings(max_examples=200)
@given(logits_labels_temperatures())
def test_heldout_nll_curve_is_the_nll_at_each_temperature_bit_for_bit(case):
    """The curve (the temperature health check, the held-out NLL figure) is
    `nll(softmax(logits / T), labels)` at every T, to the last bit."""
    logits, labels, temperatures = case
    want = [nll(softmax(logits / t), labels) for t in temperatures]
    np.testing.assert_array_equal(heldout_nll_curve(logits, labels, temperatures), want)


P = np.array([[0.5, 0.5], [0.25, 0.75]])
Y = np.array([0, 1])


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: ece(P[0], Y), ValueError, r"probs must be 2-D; got shape \(2,\)"),
        (lambda: ece(P[:0], Y[:0]), ValueError, r"probs must be non-empty"),
        (
            lambda: ece(P, Y[:1]),
            ValueError,
            r"labels must have length 2 to match probs; got length 1",
        ),
        (lambda: ece(P, Y[:, None]), ValueError, r"labels must be 1-D"),
        (lambda: ece(P, [0, 2]), ValueError, r"labels must be integers in \[0, 2\); got 2 at"),
        (lambda: ece(P, [-1, 0]), ValueError, r"labels must be integers in \[0, 2\); got -1"),
        (lambda: ece(P, [0.0, 1.0]), TypeError, r"labels must be an integer array; got dtype f"),
        (lambda: ece(P, [True, False]), TypeError, r"labels must be an integer array"),
        (lambda: ece([[0.5, np.nan]], [0]), ValueError, r"probs must be finite; got nan"),
        (lambda: ece([[1.5, -0.5]], [0]), ValueError, r"probs must be in \[0, 1\]; got 1.5"),
        (lambda: ece([[0.5, 0.4]], [0]), ValueError, r"probs rows must sum to 1 .*row 0 sums"),
        (lambda: ece([["a", "b"]], [0]), TypeError, r"probs must be a real"),
        (lambda: ece(P, Y, n_bins=0), ValueError, r"n_bins must be >= 1; got 0"),
        (lambda: ece(P, Y, n_bins=2.0), TypeError, r"n_bins must be an integer"),
        (lambda: ece_equal_mass(P, Y, n_bins=-3), ValueError, r"n_bins must be >= 1"),
        (lambda: mce(P, [0, 5]), ValueError, r"labels must be integers"),
        (lambda: reliability_bins(P, Y, n_bins=0), ValueError, r"n_bins must be >= 1"),
        (lambda: nll(P * 2, Y), ValueError, r"probs must be in \[0, 1\]"),
        (lambda: brier(P, [1, 1, 1]), ValueError, r"labels must have length 2"),
        (lambda: softmax([1.0, 2.0]), ValueError, r"logits must be 2-D"),
        (lambda: softmax([[1.0, np.inf]]), ValueError, r"logits must be finite; got inf"),
        (lambda: accuracy([[np.nan, 1.0]], [0]), ValueError, r"probs_or_logits must be finite"),
        (lambda: accuracy(P, [2, 0]), ValueError, r"labels must be integers in \[0, 2\)"),
        (lambda: scale_logits(P, 0.0), ValueError, r"temperature must be in \(0, inf\); got 0"),
        (lambda: scale_logits(P, -1.0), ValueError, r"temperature must be in \(0, inf\)"),
        (lambda: scale_logits(P, np.inf), ValueError, r"temperature must be finite; got inf"),
        (lambda: scale_logits(P, np.nan), ValueError, r"temperature must be finite; got nan"),
        (lambda: scale_logits(P, [1.0, 2.0]), ValueError, r"temperature must be a scalar"),
        (lambda: fit_temperature(P, [0, 3]), ValueError, r"labels must be integers"),
        (lambda: fit_temperature(P, Y, bounds=(0.0, 1.0)), ValueError, r"bounds\[0\] must be"),
        (lambda: fit_temperature(P, Y, bounds=(2.0, 1.0)), ValueError, r"bounds\[1\] must be"),
        (lambda: fit_temperature(P, Y, bounds=(1.0,)), ValueError, r"bounds must be a pair"),
        (lambda: heldout_nll_curve(P, Y, [1.0, 0.0]), ValueError, r"temperatures must be in"),
        (lambda: heldout_nll_curve(P, Y, []), ValueError, r"temperatures must be non-empty"),
    ],
)
def test_bad_input_is_rejected_with_a_message_naming_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


@settings(max_examples=50)
@given(
    hnp.arrays(
        np.float64, st.tuples(st.integers(1, 60), st.integers(2, 6)), elements=st.floats(-30, 30)
    ),
    st.integers(0, 2**32 - 1),
)
def test_ece_over_temperatures_is_the_ece_at_each_temperature(logits, seed):
    """The oracle's ECE over temperatures (lib/calibration/evaluation.py) is metrics.ece of the
    scaled softmax at every temperature, to float rounding."""
    from uncertainty_claims import metrics
    from uncertainty_claims.calibration.evaluation import ORACLE_TEMPERATURES, ece_over_temperatures

    labels = np.random.default_rng(seed).integers(0, logits.shape[1], len(logits))
    got = ece_over_temperatures(logits, labels, ORACLE_TEMPERATURES)
    want = [metrics.ece(metrics.softmax(logits / t), labels) for t in ORACLE_TEMPERATURES]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
