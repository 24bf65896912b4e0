"""Classification metrics: softmax, calibration error, NLL, Brier score and temperature scaling."""

import dataclasses
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import minimize_scalar

from ._checks import (
    as_count,
    as_labels,
    as_probs,
    as_real_array,
    as_scalar,
    check_range,
)

# The calibration post's binning (15 equal-width bins), the default of every binned metric here.
N_BINS = 15

PROB_FLOOR = 1e-12


@dataclasses.dataclass(frozen=True, eq=False)
class ReliabilityBins:
    """Per-bin statistics of a reliability diagram with equal-width bins on [0, 1].

    Attributes:
      count: [n_bins] int64, number of examples whose confidence falls in each bin.
      mean_confidence: [n_bins] mean confidence (max probability) per bin, 0 where empty.
      accuracy: [n_bins] fraction of correct predictions per bin, 0 where empty.
      edges: [n_bins + 1] bin edges, `np.linspace(0, 1, n_bins + 1)`.
    """

    count: np.ndarray
    mean_confidence: np.ndarray
    accuracy: np.ndarray
    edges: np.ndarray


def _softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax of a validated float64 [N, C] array."""
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _nll(p: np.ndarray, y: np.ndarray) -> float:
    """Mean negative log-likelihood of validated probabilities `p` at labels `y`."""
    return _mean_nll(p[np.arange(y.shape[0]), y])


def _mean_nll(p_true: np.ndarray) -> float:
    """Mean negative log-likelihood of the labels' probabilities, floored at PROB_FLOOR."""
    return float(np.mean(-np.log(np.clip(p_true, PROB_FLOOR, 1.0))))


def _probs_and_labels(probs: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validate an [N, C] probability array and its N labels."""
    p = as_probs(probs)
    return p, as_labels(labels, n_classes=p.shape[1], n=p.shape[0], other="probs")


def _logits_and_labels(logits: ArrayLike, labels: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validate an [N, C] logit array and its N labels."""
    z = as_real_array(logits, name="logits", ndim=2)
    return z, as_labels(labels, n_classes=z.shape[1], n=z.shape[0], other="logits")


def _confidence_and_correct(p: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Confidence (max probability) and correctness (argmax == label) per example."""
    return p.max(axis=1), (p.argmax(axis=1) == y).astype(np.float64)


def softmax(logits: ArrayLike) -> np.ndarray:
    """Numerically stable row-wise softmax (the row maximum is subtracted before `exp`).

    Args:
      logits: [N, C] finite logits.

    Returns:
      [N, C] float64 probabilities; each row sums to 1.
    """
    return _softmax(as_real_array(logits, name="logits", ndim=2))


def _bin_edges(n_bins: int = N_BINS) -> np.ndarray:
    """The `n_bins + 1` edges of `n_bins` equal-width bins on [0, 1]."""
    return np.linspace(0.0, 1.0, as_count(n_bins, name="n_bins", minimum=1) + 1)


def bin_index(confidence: ArrayLike, *, n_bins: int = N_BINS) -> np.ndarray:
    """The equal-width bin of each confidence, the one binning rule of every binned figure.

    The bin of confidence c is `clip(digitize(c, edges[1:-1]), 0, n_bins - 1)`: a confidence
    exactly on an inner edge goes to the upper bin and a confidence of exactly 1.0 to the last.

    Args:
      confidence: [N] confidences in [0, 1].
      n_bins: number of bins, >= 1.

    Returns:
      [N] int64 bin indices in [0, n_bins).
    """
    conf = as_real_array(confidence, name="confidence", ndim=1)
    edges = _bin_edges(n_bins)
    return np.clip(np.digitize(conf, edges[1:-1]), 0, len(edges) - 2)


def reliability_bins(
    probs: ArrayLike, labels: ArrayLike, *, n_bins: int = N_BINS
) -> ReliabilityBins:
    """Bin examples by confidence into `n_bins` equal-width bins on [0, 1] (`bin_index`).

    Args:
      probs: [N, C] predicted probabilities.
      labels: [N] integer labels in [0, C).
      n_bins: number of bins, >= 1.

    Returns:
      The per-bin counts, mean confidences, accuracies and edges.

    References:
      Guo et al., "On Calibration of Modern Neural Networks", ICML 2017.
    """
    p, y = _probs_and_labels(probs, labels)
    n_bins = as_count(n_bins, name="n_bins", minimum=1)
    conf, correct = _confidence_and_correct(p, y)
    edges = _bin_edges(n_bins)
    index = bin_index(conf, n_bins=n_bins)
    count = np.bincount(index, minlength=n_bins)
    denominator = np.maximum(count, 1)
    return ReliabilityBins(
        count=count,
        mean_confidence=np.bincount(index, weights=conf, minlength=n_bins) / denominator,
        accuracy=np.bincount(index, weights=correct, minlength=n_bins) / denominator,
        edges=edges,
    )


def ece(probs: ArrayLike, labels: ArrayLike, *, n_bins: int = N_BINS) -> float:
    """Expected calibration error with equal-width bins: sum_b (n_b / N) |acc_b - conf_b|.

    Args:
      probs: [N, C] predicted probabilities.
      labels: [N] integer labels in [0, C).
      n_bins: number of equal-width bins on [0, 1] (see `reliability_bins`), >= 1.

    Returns:
      The ECE, in [0, 1].

    References:
      Naeini et al., "Obtaining Well Calibrated Probabilities Using Bayesian Binning", AAAI 2015.
    """
    bins = reliability_bins(probs, labels, n_bins=n_bins)
    weights = bins.count / bins.count.sum()
    return float(np.sum(weights * np.abs(bins.accuracy - bins.mean_confidence)))


def ece_equal_mass(probs: ArrayLike, labels: ArrayLike, *, n_bins: int = N_BINS) -> float:
    """Expected calibration error with equal-mass bins: sum_b (n_b / N) |acc_b - conf_b|.

    Examples are sorted by confidence (stable sort) and split into `n_bins` contiguous groups
    whose sizes differ by at most one (`np.array_split`); empty groups (n_bins > N) are skipped.

    Args:
      probs: [N, C] predicted probabilities.
      labels: [N] integer labels in [0, C).
      n_bins: number of bins, >= 1.

    Returns:
      The equal-mass ECE, in [0, 1].

    References:
      Nixon et al., "Measuring Calibration in Deep Learning", CVPR Workshops 2019.
    """
    p, y = _probs_and_labels(probs, labels)
    n_bins = as_count(n_bins, name="n_bins", minimum=1)
    conf, correct = _confidence_and_correct(p, y)
    groups = np.array_split(np.argsort(conf, kind="stable"), n_bins)
    weighted_gaps = [g.size * abs(correct[g].mean() - conf[g].mean()) for g in groups if g.size]
    return float(sum(weighted_gaps) / conf.size)


def mce(probs: ArrayLike, labels: ArrayLike, *, n_bins: int = N_BINS) -> float:
    """Maximum calibration error: the largest |acc_b - conf_b| over populated equal-width bins.

    Args:
      probs: [N, C] predicted probabilities.
      labels: [N] integer labels in [0, C).
      n_bins: number of equal-width bins on [0, 1] (see `reliability_bins`), >= 1.

    Returns:
      The MCE, in [0, 1].

    References:
      Naeini et al., "Obtaining Well Calibrated Probabilities Using Bayesian Binning", AAAI 2015.
    """
    bins = reliability_bins(probs, labels, n_bins=n_bins)
    populated = bins.count > 0
    return float(np.max(np.abs(bins.accuracy - bins.mean_confidence)[populated]))


def nll(probs: ArrayLike, labels: ArrayLike) -> float:
    """Mean negative log-likelihood of the true class, -mean(log(clip(p_true, 1e-12, 1))).

    Args:
      probs: [N, C] predicted probabilities.
      labels: [N] integer labels in [0, C).

    Returns:
      The mean NLL in nats, in [0, -log(1e-12)].
    """
    return _nll(*_probs_and_labels(probs, labels))


def brier(probs: ArrayLike, labels: ArrayLike) -> float:
    """Multi-class Brier score: mean over examples of sum_c (p_c - onehot_c)^2.

    Args:
      probs: [N, C] predicted probabilities.
      labels: [N] integer labels in [0, C).

    Returns:
      The Brier score, in [0, 2].

    References:
      Brier, "Verification of Forecasts Expressed in Terms of Probability", 1950.
    """
    p, y = _probs_and_labels(probs, labels)
    # p - onehot(y) without a [C, C] identity (6.7 GB at 30,000 classes): subtracting 0 leaves
    # an entry as it is, so the differences, and the sums over each row, are the same bits.
    diff = p.copy()
    diff[np.arange(y.shape[0]), y] -= 1.0
    return float(np.mean(np.sum(diff**2, axis=1)))


def accuracy(probs_or_logits: ArrayLike, labels: ArrayLike) -> float:
    """Fraction of examples whose argmax class equals the label (ties go to the lowest index).

    Args:
      probs_or_logits: [N, C] finite probabilities or logits; only the argmax is used.
      labels: [N] integer labels in [0, C).

    Returns:
      The accuracy, in [0, 1].
    """
    scores = as_real_array(probs_or_logits, name="probs_or_logits", ndim=2)
    y = as_labels(labels, n_classes=scores.shape[1], n=scores.shape[0], other="probs_or_logits")
    return float(np.mean(scores.argmax(axis=1) == y))


def scale_logits(logits: ArrayLike, temperature: float) -> np.ndarray:
    """Divide logits by a temperature.

    Args:
      logits: [N, C] finite logits.
      temperature: finite T > 0.

    Returns:
      [N, C] float64 logits / T.

    References:
      Guo et al., "On Calibration of Modern Neural Networks", ICML 2017.
    """
    z = as_real_array(logits, name="logits", ndim=2)
    t = as_scalar(
        temperature, name="temperature", low=0.0, high=np.inf, low_open=True, high_open=True
    )
    return z / t


# The range `fit_temperature` searches by default.
TEMPERATURE_BOUNDS = (0.05, 20.0)


def fit_temperature(
    logits: ArrayLike, labels: ArrayLike, *, bounds: tuple[float, float] = TEMPERATURE_BOUNDS
) -> float:
    """Fit the temperature minimising held-out NLL, searching log T with bounded Brent.

    Minimises `nll(softmax(logits / exp(t)), labels)` over t in [log(lo), log(hi)] with
    `scipy.optimize.minimize_scalar(method="bounded")` at its default tolerance, and returns
    exp(t*). The objective is exactly `nll(softmax(...))`, including the 1e-12 probability floor
    (where logits / T overflows float64, the same probabilities from logits shifted by their row
    maximum first).

    Args:
      logits: [N, C] finite logits.
      labels: [N] integer labels in [0, C).
      bounds: (lo, hi) with 0 < lo < hi, both finite.

    Returns:
      The fitted temperature T = exp(t*), in [lo, hi].

    References:
      Guo et al., "On Calibration of Modern Neural Networks", ICML 2017.
    """
    z, y = _logits_and_labels(logits, labels)
    if len(bounds) != 2:
        raise ValueError(f"bounds must be a pair (lo, hi); got {bounds!r}")
    lo = as_scalar(bounds[0], name="bounds[0]", low=0.0, high=np.inf, low_open=True, high_open=True)
    hi = as_scalar(bounds[1], name="bounds[1]", low=lo, high=np.inf, low_open=True, high_open=True)

    nll_at = _nll_at_temperature(z, y)

    def objective(log_t: float) -> float:
        return nll_at(np.exp(log_t))

    result = minimize_scalar(objective, bounds=(np.log(lo), np.log(hi)), method="bounded")
    if not result.success:
        raise RuntimeError(f"temperature search did not converge: {result.message}")
    return float(np.exp(result.x))


def heldout_nll_curve(logits: ArrayLike, labels: ArrayLike, temperatures: ArrayLike) -> np.ndarray:
    """NLL of `softmax(logits / T)` at each temperature T: `nll(softmax(logits / T), labels)` bit
    for bit, and where logits / T overflows float64, the same probabilities from logits shifted
    by their row maximum first.

    Args:
      logits: [N, C] finite logits.
      labels: [N] integer labels in [0, C).
      temperatures: [M] finite temperatures, each > 0.

    Returns:
      [M] float64 mean NLL at each temperature.
    """
    z, y = _logits_and_labels(logits, labels)
    ts = as_real_array(temperatures, name="temperatures", ndim=1)
    check_range(ts, name="temperatures", low=0.0, high=np.inf, low_open=True, high_open=True)
    nll_at = _nll_at_temperature(z, y)
    return np.array([nll_at(t) for t in ts])


def _nll_at_temperature(z: np.ndarray, y: np.ndarray) -> Callable[[float], float]:
    """`t -> _nll(_softmax(z / t), y)` for validated logits and labels and a temperature t > 0,
    bit for bit, with less work per temperature, and defined where z / t overflows."""
    peak, rows = z.max(axis=1, keepdims=True), np.arange(len(y))

    def nll_at(t: float) -> float:
        # The row maxima of z / t are `peak / t` (a correctly rounded division by t > 0 keeps
        # the order of a row), and only the labels' probabilities are divided out.
        with np.errstate(over="ignore", invalid="ignore"):
            shifted = z / t - peak / t
            # Where peak / t overflows, z / t - peak / t is inf - inf: shift before dividing
            # (z - peak <= 0, so it cannot overflow upwards; -inf is a probability of 0).
            wide = ~np.isfinite(peak[:, 0] / t)
            if wide.any():
                shifted[wide] = (z[wide] - peak[wide]) / t
        e = np.exp(shifted)
        return _mean_nll(e[rows, y] / e.sum(axis=1))

    return nll_at
