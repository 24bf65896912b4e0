"""Bootstrap statistics vectorised over resamples (float64 numpy).

A resample of n examples is a row of counts: how often each example is drawn in n draws
with replacement. The statistics here take a counts matrix [B, n], so a paired comparison
is simply two statistics computed with the same matrix (two models evaluated on the same
examples): means, and the calibration post's ECE and AUROC, per resample.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike

from ._checks import as_real_array, as_scalar


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
    return counts @ per_example(values, "values", counts) / counts.sum(axis=1)


def per_example(values: ArrayLike, name: str, counts: np.ndarray) -> np.ndarray:
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
    gap = per_example(correct, "correct", counts) - per_example(confidence, "confidence", counts)
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
    pos = per_example(pos_scores, "pos_scores", pos_counts)
    neg = per_example(neg_scores, "neg_scores", neg_counts)
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
