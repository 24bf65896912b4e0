"""Bootstrap statistics of the calibration post's figures under resampled test images: ECE
and AUROC per resample, vectorised over a counts matrix [B, n] (`claim_audit.stats`)."""

from __future__ import annotations

import numpy as np
from claim_audit.stats import per_example
from numpy.typing import ArrayLike


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
