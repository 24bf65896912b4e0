"""Regression metrics: Gaussian negative log-likelihood and the ensemble variance decomposition."""

import dataclasses

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import logsumexp

from ._checks import as_real_array, check_range, check_same_shape


@dataclasses.dataclass(frozen=True, eq=False)
class VarianceDecomposition:
    """Law-of-total-variance split of a predictive distribution over K samples.

    Attributes:
      mean: predictive mean, the average of the sample means.
      aleatoric: average of the sample variances (noise each member predicts).
      epistemic: variance (ddof 0) of the sample means (disagreement between members).
      total: aleatoric + epistemic, the variance of the equal-weight mixture.
    """

    mean: np.ndarray
    aleatoric: np.ndarray
    epistemic: np.ndarray
    total: np.ndarray


def gaussian_nll(mu: ArrayLike, log_var: ArrayLike, y: ArrayLike) -> float:
    """Heteroscedastic Gaussian NLL without the constant: 0.5 mean(log_var + (y - mu)^2 / var).

    Args:
      mu: predicted means, any shape.
      log_var: predicted log variances, same shape as `mu`.
      y: targets, same shape as `mu`.

    Returns:
      The mean NLL in nats, omitting the 0.5 log(2 pi) constant; where float64 overflows on the
      way (a tiny variance, a huge error), its value still, inf only when beyond float64.

    References:
      Nix & Weigend, "Estimating the Mean and Variance of the Target Probability Distribution",
      ICNN 1994.
    """
    m = as_real_array(mu, name="mu")
    lv = as_real_array(log_var, name="log_var")
    t = as_real_array(y, name="y")
    check_same_shape(lv, name="log_var", like=m, like_name="mu")
    check_same_shape(t, name="y", like=m, like_name="mu")
    with np.errstate(over="ignore", invalid="ignore"):
        value = 0.5 * np.mean(lv + (t - m) ** 2 * np.exp(-lv))
    # Every term is finite or +inf (or NaN from 0 * inf), so a finite mean met no overflow.
    return float(value) if np.isfinite(value) else _gaussian_nll_wide(m, lv, t)


def _gaussian_nll_wide(m: np.ndarray, lv: np.ndarray, t: np.ndarray) -> float:
    """`gaussian_nll` where float64 overflows on the way (exp(-log_var), the squared error or the
    sum): the ratios (y - mu)^2 / var summed in logs, the means scaled, the result halved twice
    to fit; only a result beyond float64 is inf."""
    scale = np.max(np.abs(lv))
    quarter_lv = 0.25 * scale * np.mean(lv / scale) if scale > 0 else 0.0
    with np.errstate(divide="ignore", over="ignore"):
        # log((y - mu)^2 / var), -inf for an exact mean; halving first keeps y - mu finite.
        log_ratio = 2 * (np.log(np.abs(t / 2 - m / 2)) + np.log(2.0)) - lv
        quarter_ratio = np.exp(logsumexp(log_ratio) - np.log(4.0 * lv.size))
        return float(2 * (quarter_lv + quarter_ratio))


def decompose_variance(means: ArrayLike, variances: ArrayLike) -> VarianceDecomposition:
    """Split predictive variance into aleatoric and epistemic parts over K samples on axis 0.

    Args:
      means: [K, ...] per-sample predicted means, K >= 1.
      variances: [K, ...] per-sample predicted variances, each >= 0, same shape as `means`.

    Returns:
      mean = E[mu], aleatoric = E[sigma^2], epistemic = Var[mu] (ddof 0) and their sum, each of
      shape `means.shape[1:]`.

    References:
      Lakshminarayanan et al., "Simple and Scalable Predictive Uncertainty Estimation using Deep
      Ensembles", NeurIPS 2017; Kendall & Gal, NeurIPS 2017.
    """
    mu = as_real_array(means, name="means", min_ndim=1)
    var = as_real_array(variances, name="variances", min_ndim=1)
    check_same_shape(var, name="variances", like=mu, like_name="means")
    check_range(var, name="variances", low=0.0, high=np.inf, high_open=True)
    aleatoric = np.asarray(var.mean(axis=0))
    epistemic = np.asarray(mu.var(axis=0))
    return VarianceDecomposition(
        mean=np.asarray(mu.mean(axis=0)),
        aleatoric=aleatoric,
        epistemic=epistemic,
        total=aleatoric + epistemic,
    )
