"""Statistics of one run of the uncertainty guide's recipe, for its comparative claims.

The claims themselves (effects, regions, readings) are defined once, in
lib/claims/uncertainty.py: the claim tests judge them on every float order of root key 0,
the robustness sweep on other root keys.
"""

from __future__ import annotations

import numpy as np

from lib import metrics
from lib.uncertainty.experiment import UncertaintyResult

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


def aleatoric_fit(result: UncertaintyResult, method: str) -> tuple[float, float]:
    """In the clusters: mean of predicted aleatoric sd / true noise sd, and their correlation."""
    aleatoric = metrics.decompose_variance(*outputs(result, method)).aleatoric[:, 0]
    predicted = np.sqrt(aleatoric[result.in_cluster])
    true = true_noise_sd(result)
    ratio = float(np.mean(predicted / true))
    correlation = float(np.corrcoef(predicted, true)[0, 1]) if predicted.std() > 0 else 0.0
    return ratio, correlation
