"""Bootstrap resampling, vectorised over resamples (float64 numpy).

A resample of n examples is a row of counts: how often each example is drawn in
n draws with replacement. The statistics here take a counts matrix [B, n], so a
paired comparison is simply two statistics computed with the same matrix (the
two nets were evaluated on the same test images). Intervals: `interval`
(bias-corrected percentile; Efron & Tibshirani, "An Introduction to the
Bootstrap", 1993, ch. 13-14).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtr, ndtri

from .checks import as_real_array, as_scalar

B = 1000
SEED = 20240607
LEVEL = 0.95
METHOD = "bias-corrected percentile bootstrap"


@dataclass(frozen=True)
class Interval:
    """A point estimate and its bootstrap interval at `level`.

    `low_at_edge` / `high_at_edge`: the bias-corrected quantile of that end lies beyond
    the most extreme of the B resamples, so that end is only known to lie further out.
    """

    estimate: float
    low: float
    high: float
    level: float = LEVEL
    low_at_edge: bool = False
    high_at_edge: bool = False

    def within(self, low: float, high: float) -> bool:
        """Whether the whole interval lies in [low, high] (an open end never does)."""
        return (
            low <= self.low
            and self.high <= high
            and not (self.low_at_edge and low > -math.inf)
            and not (self.high_at_edge and high < math.inf)
        )

    def to_json(self) -> dict[str, float | bool]:
        return asdict(self)

    def __str__(self) -> str:
        return (
            f"{'<' if self.low_at_edge else ''}{self.low:.3g} to "
            f"{'>' if self.high_at_edge else ''}{self.high:.3g}"
        )


def interval(
    estimate: float, samples: ArrayLike, level: float = LEVEL, *, bias_corrected: bool = True
) -> Interval:
    """The bootstrap interval of `estimate` from its resampled values `samples`.

    Bias-corrected percentile interval (BC; Efron 1987, BCa with acceleration 0): with
    z0 = Phi^-1(share of samples below the estimate, ties half), the ends are the samples'
    quantiles at Phi(2 z0 -+ z_{(1+level)/2}). It corrects the median bias of statistics
    such as the ECE, which resampling inflates. The acceleration is left at 0: it is of
    order skewness / sqrt(n), negligible for n = 10,000 test images. With
    `bias_corrected=False`, the plain percentile interval.
    """
    values = np.asarray(samples, dtype=np.float64)
    if values.ndim != 1 or values.size < 2 or not np.all(np.isfinite(values)):
        raise ValueError(f"need at least 2 finite bootstrap samples in a 1-D array; got {values!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level}")
    z = ndtri(np.array([(1 - level) / 2, (1 + level) / 2]))
    if bias_corrected:
        share = (np.sum(values < estimate) + 0.5 * np.sum(values == estimate)) / values.size
        share = np.clip(share, 0.5 / values.size, 1 - 0.5 / values.size)
        z = z + 2 * ndtri(share)
    quantiles = ndtr(z)
    low, high = np.quantile(values, quantiles)
    return Interval(
        float(estimate),
        float(low),
        float(high),
        level,
        low_at_edge=bool(quantiles[0] < 0.5 / values.size),
        high_at_edge=bool(quantiles[1] > 1 - 0.5 / values.size),
    )


def p_value(samples: ArrayLike, null: float = 0.0) -> float:
    """Two-sided bootstrap p-value of "the statistic equals `null`".

    Twice the smaller tail share of the samples on either side of `null`, with the +1
    correction of Davison & Hinkley (1997, eq. 4.11) so that it is never 0; capped at 1.
    """
    values = as_real_array(samples, name="samples", ndim=1)
    null = as_scalar(null, name="null", low=-np.inf, high=np.inf, low_open=True, high_open=True)
    tail = min(np.sum(values <= null), np.sum(values >= null))
    return float(min(1.0, 2 * (tail + 1) / (values.size + 1)))


def resample_counts(
    n: int, b: int, rng: np.random.Generator, *, chunk: int = 250
) -> Iterator[np.ndarray]:
    """Counts matrices of `b` resamples of `n` examples, yielded `chunk` rows at a time.

    Each row is n draws with replacement; row r of the whole sequence depends only on the
    generator's state, so the same generator seed gives the same resamples.
    """
    if n < 1 or b < 1 or chunk < 1:
        raise ValueError(f"n, b and chunk must be >= 1; got {n}, {b}, {chunk}")
    for start in range(0, b, chunk):
        rows = min(chunk, b - start)
        draws = rng.integers(0, n, size=(rows, n)) + n * np.arange(rows)[:, None]
        yield np.bincount(draws.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)


def mean(values: ArrayLike, counts: np.ndarray) -> np.ndarray:
    """[B] weighted means of per-example `values` [n] under each resample's counts [B, n]."""
    return counts @ _per_example(values, "values", counts) / counts.sum(axis=1)


def _per_example(values: ArrayLike, name: str, counts: np.ndarray) -> np.ndarray:
    """`values` as a finite float64 [n] array, n being the examples counted by `counts` [B, n]."""
    array = as_real_array(values, name=name, ndim=1)
    if counts.ndim != 2 or counts.shape[1] != array.size:
        raise ValueError(
            f"{name} must have one value per counted example; got {array.size} values for counts of shape {counts.shape}"
        )
    return array


def binned_gap(
    confidence: ArrayLike, correct: ArrayLike, bin_index: ArrayLike, counts: np.ndarray
) -> np.ndarray:
    """[B] expected calibration errors for examples already assigned to bins.

    ECE = sum_b (n_b / N) |acc_b - conf_b| = sum_b |sum_{i in b} (correct_i - conf_i)| / N,
    so each resample needs one weighted sum per bin; empty bins contribute 0.
    """
    gap = _per_example(correct, "correct", counts) - _per_example(confidence, "confidence", counts)
    bins = np.asarray(bin_index)
    if bins.shape != gap.shape:
        raise ValueError(f"bin_index must have shape {gap.shape}; got {bins.shape}")
    one_hot = (bins[:, None] == np.unique(bins)[None, :]) * gap[:, None]
    return np.abs(counts @ one_hot).sum(axis=1) / counts.sum(axis=1)


def auroc(
    pos_scores: ArrayLike, neg_scores: ArrayLike, pos_counts: np.ndarray, neg_counts: np.ndarray
) -> np.ndarray:
    """[B] AUROCs (Mann-Whitney, ties count one half) of resampled positives and negatives.

    With the negatives sorted once, the resampled weight of negatives below (and tied
    with) each positive is read from one cumulative sum per resample, so a resample costs
    O(n1 + n2) instead of a fresh ranking. Work is done on [n, B] arrays, where gathering
    an example's row reads contiguous memory. The counts are whole numbers, so every sum
    is exact whatever its order: the cumulative sums run on integers (int32: half the
    memory that float64 moves through the gathers), and the result has the same bits.

    Raises:
      ValueError: a score is not finite, the counts do not match the examples, or a count
        is not a whole number from 0 to 2**31 - 1.
    """
    pos = _per_example(pos_scores, "pos_scores", pos_counts)
    neg = _per_example(neg_scores, "neg_scores", neg_counts)
    order = np.argsort(neg, kind="stable")
    below = np.searchsorted(neg[order], pos, side="left")
    not_above = np.searchsorted(neg[order], pos, side="right")
    negatives = _whole(neg_counts, "neg_counts")
    # Twice the largest total must fit the sums' type: int32 up to about a billion draws.
    wide = negatives.shape[0] and negatives.sum(axis=1, dtype=np.int64).max() >= 2**30
    cumulative = np.zeros((neg.size + 1, negatives.shape[0]), np.int64 if wide else np.int32)
    np.cumsum(np.ascontiguousarray(negatives.T)[order], axis=0, out=cumulative[1:])
    twice_wins = cumulative[below] + cumulative[not_above]  # each tie counts one half
    pairs = pos_counts.sum(axis=1) * neg_counts.sum(axis=1)
    return np.einsum("ib,bi->b", twice_wins.astype(np.float64), pos_counts) / 2 / pairs


def _whole(counts: np.ndarray, name: str) -> np.ndarray:
    """`counts` as int32, which must hold them exactly."""
    counts = np.asarray(counts)
    if np.any(counts < 0) or np.any(counts >= 2**31) or np.any(counts != np.floor(counts)):
        raise ValueError(f"{name} must be whole numbers from 0 to 2**31 - 1 (counts of draws)")
    return counts.astype(np.int32)


def resample_seeds(n_seeds: int, b: int, rng: np.random.Generator) -> np.ndarray:
    """[b, n_seeds] indices of seeds drawn with replacement (a bootstrap over seeds)."""
    if n_seeds < 1 or b < 1:
        raise ValueError(f"n_seeds and b must be >= 1; got {n_seeds}, {b}")
    return rng.integers(0, n_seeds, size=(b, n_seeds))
