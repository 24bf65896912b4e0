"""Statistics of one run of the uncertainty guide's recipe, for its comparative claims.

The claims themselves (effects, regions, readings) are defined once, in
claims/test_uncertainty.py: the claim tests judge them on every float order of root key 0,
the robustness sweep on other root keys.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from claim_audit import agree

from uncertainty_claims import metrics
from uncertainty_claims.uncertainty.data import true_function
from uncertainty_claims.uncertainty.experiment import UncertaintyResult
from uncertainty_claims.uncertainty.health import constant_baseline_nll

METHODS = ("mc", "ensemble")
REGIONS = ("away", "gap", "tails")


def outputs(result: UncertaintyResult, method: str) -> tuple[np.ndarray, np.ndarray]:
    """Grid means and variances of the MC passes ("mc") or the members ("ensemble")."""
    if method == "mc":
        return result.mc_grid_means, result.mc_grid_vars
    if method == "ensemble":
        return result.ens_grid_means, result.ens_grid_vars
    raise ValueError(f"method must be one of {METHODS}; got {method!r}")


def true_noise_sd(result: UncertaintyResult) -> np.ndarray:
    """The data's noise sd, 0.05 + 0.05|x|, at the in-cluster grid points."""
    return 0.05 + 0.05 * np.abs(result.grid[:, 0][result.in_cluster].astype(np.float64))


def epistemic_ratios(result: UncertaintyResult, method: str) -> dict[str, float]:
    """Mean epistemic variance in each region away from the clusters / inside them."""
    epistemic = metrics.decompose_variance(*outputs(result, method)).epistemic[:, 0]
    inside = epistemic[result.in_cluster].mean()
    return {region: float(epistemic[getattr(result, region)].mean() / inside) for region in REGIONS}


def band_sd(result: UncertaintyResult, method: str) -> tuple[float, float]:
    """Mean epistemic sd over the in-cluster grid points, and the mean true noise sd there."""
    epistemic = metrics.decompose_variance(*outputs(result, method)).epistemic[:, 0]
    return float(np.sqrt(epistemic[result.in_cluster]).mean()), float(true_noise_sd(result).mean())


def band_sd_ratio(result: UncertaintyResult, method: str) -> float:
    """In the clusters: mean epistemic sd / mean true noise sd (the band against the scatter)."""
    sd, noise = band_sd(result, method)
    return sd / noise


def aleatoric_fit(result: UncertaintyResult, method: str) -> tuple[float, float]:
    """In the clusters: mean of predicted aleatoric sd / true noise sd, and their correlation."""
    aleatoric = metrics.decompose_variance(*outputs(result, method)).aleatoric[:, 0]
    predicted = np.sqrt(aleatoric[result.in_cluster])
    true = true_noise_sd(result)
    ratio = float(np.mean(predicted / true))
    return ratio, _correlation(predicted, true)


def _correlation(predicted: np.ndarray, true: np.ndarray) -> float:
    """Pearson's correlation; 0 (no rise) for a predicted series constant to float noise,
    whose correlation would be the sign of its rounding."""
    if agree(float(predicted.min()), float(predicted.max())):
        return 0.0
    return float(np.corrcoef(predicted, true)[0, 1])


def _decomposed(result: UncertaintyResult, method: str) -> metrics.VarianceDecomposition:
    return metrics.decompose_variance(*outputs(result, method))


def band_variance_ratio(result: UncertaintyResult, method: str) -> float:
    """In the clusters: mean epistemic variance / mean true noise variance."""
    epistemic = _decomposed(result, method).epistemic[:, 0][result.in_cluster]
    return float(epistemic.mean() / (true_noise_sd(result) ** 2).mean())


def band_width_ratios(result: UncertaintyResult, method: str) -> dict[str, float]:
    """Mean epistemic sd (the +-2 sigma band's half-width / 2) in each region away from the
    clusters / inside them."""
    sd = np.sqrt(_decomposed(result, method).epistemic[:, 0])
    inside = sd[result.in_cluster].mean()
    return {region: float(sd[getattr(result, region)].mean() / inside) for region in REGIONS}


def total_ratio(result: UncertaintyResult, method: str) -> float:
    """Mean total predictive variance away from the clusters / inside them."""
    total = _decomposed(result, method).total[:, 0]
    return float(total[result.away].mean() / total[result.in_cluster].mean())


def high_noise(result: UncertaintyResult) -> np.ndarray:
    """The in-cluster grid points of the outer halves of the clusters, 3 <= |x| <= 4, where
    the noise sd (0.2 to 0.25) is largest."""
    return result.in_cluster & (np.abs(result.grid[:, 0].astype(np.float64)) >= 3)


def epistemic_over_noise_high(result: UncertaintyResult, method: str) -> float:
    """Where the noise is highest: mean epistemic variance / mean true noise variance."""
    mask = high_noise(result)
    epistemic = _decomposed(result, method).epistemic[:, 0][mask]
    noise = (0.05 + 0.05 * np.abs(result.grid[:, 0][mask].astype(np.float64))) ** 2
    return float(epistemic.mean() / noise.mean())


def true_model_nll(result: UncertaintyResult) -> float:
    """The guide's loss (no constant) of the true mean and noise on the 120 training points."""
    x, y = result.x.astype(np.float64), result.y.astype(np.float64)
    variance = result.noise_std.astype(np.float64) ** 2
    return float(np.mean(0.5 * (np.log(variance) + (y - true_function(x)) ** 2 / variance)))


def nll_gap_closed(result: UncertaintyResult) -> float:
    """How much of the way from the constant predictor's NLL to the true model's the
    ensemble's final printed NLL has come (0: no better than the constant, 1: the truth)."""
    final = float(result.ens_loss[-1].astype(np.float64).mean())  # the last printed line
    constant = constant_baseline_nll(result.y)
    return float((constant - final) / (constant - true_model_nll(result)))


@dataclasses.dataclass(frozen=True)
class Ablation:
    """The ensemble's members' grid means [M, G, 1] trained on their bootstrap resamples and
    on the data itself, from the same initial weights in the same float order."""

    with_bootstrap: np.ndarray
    without: np.ndarray
    in_cluster: np.ndarray
    away: np.ndarray


def diversity_ratio(ablation: Ablation, where: str = "grid") -> float:
    """Mean epistemic variance (the variance of the members' means) with the bootstrap /
    without it, over the whole grid or its "in_cluster" or "away" points."""
    mask = np.ones(ablation.in_cluster.shape, bool) if where == "grid" else getattr(ablation, where)
    with_, without = (
        np.asarray(means, np.float64)[:, mask, 0].var(axis=0).mean()
        for means in (ablation.with_bootstrap, ablation.without)
    )
    return float(with_ / without)
