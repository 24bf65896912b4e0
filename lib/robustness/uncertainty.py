"""The uncertainty guide's comparative claims, as statistics of one run of the recipe.

claims/test_uncertainty.py judges each claim with these comparisons on every float order
of root key 0 (`Comparison.judge`); the robustness sweep applies them to other root keys.
Each carries the reading of the guide's qualitative words.
"""

from __future__ import annotations

import numpy as np

from lib import metrics
from lib.robustness.effects import Comparison, Effect, Region, safe_ratio
from lib.uncertainty.experiment import UncertaintyResult, headline_figures

METHODS = ("mc", "ensemble")
REGIONS = ("away", "gap", "tails")
MARKEDLY = 2.0  # "markedly larger" (unc-06)
FACTOR = 2.0  # "follows the true noise" (unc-07)


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


def _short(method: str) -> str:
    return method[:3]


def _growth(method: str, region: str) -> Comparison:
    return Comparison(
        f"unc-06-{_short(method)}-{region}",
        reading=f"'markedly larger': the mean epistemic variance there is at least {MARKEDLY:g}x "
        "the in-cluster mean",
        effects=(
            Effect(
                f"epistemic {region} / in",
                lambda r: epistemic_ratios(r, method)[region],
                Region(MARKEDLY),
                null=1.0,
                unit="ratio of mean epistemic variances",
            ),
        ),
    )


def _band(method: str) -> Comparison:
    return Comparison(
        f"unc-06-{_short(method)}-band",
        reading="'near-zero width': inside the clusters the mean epistemic sd is below the true "
        "noise sd there (0.05 + 0.05|x|), i.e. narrower than the data's own scatter",
        effects=(
            Effect(
                "epistemic sd / noise",
                lambda r: safe_ratio(*band_sd(r, method)),
                Region(high=1.0, closed=False),
                null=1.0,
                unit="ratio of sds, in the clusters",
            ),
        ),
    )


def _aleatoric(method: str) -> Comparison:
    return Comparison(
        f"unc-07-{method}",
        reading=f"'follows the true noise': inside the clusters the predicted aleatoric sd is "
        f"within a factor {FACTOR:g} of 0.05 + 0.05|x| on average and rises with it (positive "
        "correlation)",
        effects=(
            Effect(
                "aleatoric sd / true",
                lambda r: aleatoric_fit(r, method)[0],
                Region(1 / FACTOR, FACTOR),
                null=1.0,
                unit="mean ratio of sds, in the clusters",
            ),
            Effect(
                "corr aleatoric, true",
                lambda r: aleatoric_fit(r, method)[1],
                Region(0.0, closed=False),
                null=0.0,
                unit="Pearson correlation",
            ),
        ),
    )


COMPARISONS: tuple[Comparison, ...] = (
    Comparison(
        "unc-05c",
        reading="'negative': below 0",
        effects=(
            Effect(
                "final ensemble NLL",
                lambda r: headline_figures(r)["ens_nll_1000"],
                Region(high=0.0, closed=False),
                unit="Gaussian NLL (nats), step 1000",
            ),
        ),
    ),
    *(_growth(method, region) for method in METHODS for region in REGIONS),
    *(_band(method) for method in METHODS),
    *(_aleatoric(method) for method in METHODS),
)
"""The guide's claims about what its two trained methods do, in claim-id order."""

BY_ID: dict[str, Comparison] = {c.claim_id: c for c in COMPARISONS}
