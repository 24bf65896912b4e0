"""Out-of-distribution detection: threshold-free AUROC, FPR at a fixed TPR and logit scores.

Convention throughout: the in-distribution set is the positive class, and a higher score means
"more in-distribution".
"""

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp
from scipy.stats import rankdata

from ._checks import as_real_array, as_scalar
from .classification import softmax


def _scores(pos_scores: ArrayLike, neg_scores: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Validate two non-empty 1-D finite score arrays."""
    return (
        as_real_array(pos_scores, name="pos_scores", ndim=1),
        as_real_array(neg_scores, name="neg_scores", ndim=1),
    )


def auroc(pos_scores: ArrayLike, neg_scores: ArrayLike) -> float:
    """Area under the ROC curve via the Mann-Whitney U statistic, ties counting one half.

    AUROC = (R_pos - n1 (n1 + 1) / 2) / (n1 n2), where R_pos is the sum of the positives' ranks
    in the pooled sample (tied scores get their average rank). It equals the probability that a
    random positive outscores a random negative, plus half the probability of a tie.

    Args:
      pos_scores: [n1] scores of in-distribution (positive) examples, n1 >= 1.
      neg_scores: [n2] scores of out-of-distribution (negative) examples, n2 >= 1.

    Returns:
      The AUROC, in [0, 1].

    References:
      Mann & Whitney, "On a Test of Whether One of Two Random Variables is Stochastically Larger
      than the Other", 1947; Hanley & McNeil, Radiology 143(1), 1982.
    """
    pos, neg = _scores(pos_scores, neg_scores)
    n1, n2 = pos.size, neg.size
    ranks = rankdata(np.concatenate([pos, neg]), method="average")
    return float((ranks[:n1].sum() - n1 * (n1 + 1) / 2) / (n1 * n2))


def fpr_at_tpr(pos_scores: ArrayLike, neg_scores: ArrayLike, *, tpr: float = 0.95) -> float:
    """False-positive rate at the highest threshold that keeps at least `tpr` of the positives.

    Rule: let k be the smallest integer with k / n1 >= tpr (compared in float64). The threshold
    is the k-th largest positive score, so at least k positives score >= it (more with ties), and
    no larger threshold keeps k of them. The result is the fraction of negatives scoring >= it.

    Args:
      pos_scores: [n1] scores of in-distribution (positive) examples, n1 >= 1.
      neg_scores: [n2] scores of out-of-distribution (negative) examples, n2 >= 1.
      tpr: the true-positive rate to keep, in (0, 1].

    Returns:
      The FPR, in [0, 1].

    References:
      Hendrycks & Gimpel, "A Baseline for Detecting Misclassified and Out-of-Distribution
      Examples in Neural Networks", ICLR 2017.
    """
    pos, neg = _scores(pos_scores, neg_scores)
    tpr = as_scalar(tpr, name="tpr", low=0.0, high=1.0, low_open=True, high_open=False)
    n1 = pos.size
    k = int(np.searchsorted(np.arange(1, n1 + 1) / n1, tpr, side="left")) + 1
    threshold = np.sort(pos)[n1 - k]
    return float(np.mean(neg >= threshold))


def msp_score(logits: ArrayLike) -> np.ndarray:
    """Maximum softmax probability per example.

    Args:
      logits: [N, C] finite logits.

    Returns:
      [N] float64 max softmax probabilities, in [1/C, 1].

    References:
      Hendrycks & Gimpel, ICLR 2017.
    """
    return softmax(logits).max(axis=1)


def max_logit_score(logits: ArrayLike) -> np.ndarray:
    """Maximum logit per example.

    Args:
      logits: [N, C] finite logits.

    Returns:
      [N] float64 max logits.

    References:
      Hendrycks et al., "Scaling Out-of-Distribution Detection for Real-World Settings", ICML 2022.
    """
    return as_real_array(logits, name="logits", ndim=2).max(axis=1)


def energy_score(logits: ArrayLike) -> np.ndarray:
    """Negative free energy per example, logsumexp over classes (higher = more in-distribution).

    Args:
      logits: [N, C] finite logits.

    Returns:
      [N] float64 logsumexp of each row.

    References:
      Liu et al., "Energy-based Out-of-distribution Detection", NeurIPS 2020.
    """
    return logsumexp(as_real_array(logits, name="logits", ndim=2), axis=1)
