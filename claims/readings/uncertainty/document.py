"""The uncertainty guide in the report: its source, audit.json section and figure data.

Read from the cached faithful-order result of root key 0, the one the claim tests use; the
report (engine/claim_audit/render) only renders what this module gathers. Registered by
claims/conftest.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from claim_audit import Document, FigureSpec, Source

from uncertainty_claims.orders.uncertainty import uncertainty_result
from uncertainty_claims.uncertainty.data import LEFT_CLUSTER, RIGHT_CLUSTER, true_function
from uncertainty_claims.uncertainty.experiment import printed_trace, region_summary
from uncertainty_claims.uncertainty.health import uncertainty_health

from .figures import uncertainty_band_figure


def uncertainty_section() -> dict:
    """`uncertainty`: printed traces, region means and model health of both methods."""
    result = uncertainty_result()
    trace, regions, health = (
        printed_trace(result),
        region_summary(result),
        uncertainty_health(result),
    )
    section = {"root_seed": result.root_seed}
    for name, method in (("mc_dropout", "mc"), ("ensemble", "ensemble")):
        section[name] = {
            "nll_trace": list(trace[method].values()),
            "nll_trace_steps": list(trace[method]),
            **{key: regions[method][key] for key in sorted(regions[method])},
            "health": {check.name: check.to_json() for check in health[name]},
        }
    return section


def figure_data(robustness: dict | None) -> dict[str, Any]:
    """The data of the band figure (claims/readings/uncertainty/figures.py `uncertainty_band_figure`)."""
    result = uncertainty_result()
    grid = np.asarray(result.grid, dtype=np.float64)
    return {
        "uncertainty_band.png": {
            "root_seed": result.root_seed,
            "x": result.x,
            "y": result.y,
            "noise_std": result.noise_std,
            "grid": grid,
            "truth": true_function(grid[:, 0]),
            "truth_label": "true function sin(1.5x) + 0.1x",
            "in_cluster": result.in_cluster,
            "away": result.away,
            "clusters": [list(LEFT_CLUSTER), list(RIGHT_CLUSTER)],
            "mc_means": result.mc_grid_means,
            "mc_vars": result.mc_grid_vars,
            "ens_means": result.ens_grid_means,
            "ens_vars": result.ens_grid_vars,
        }
    }


BAND_CLAIMS = (
    "unc-01", "unc-02", "unc-04b", "unc-05b",
    "unc-06-mc-away", "unc-06-mc-gap", "unc-06-mc-tails",
    "unc-06-mc-band",
    "unc-06-ens-away", "unc-06-ens-gap", "unc-06-ens-tails",
    "unc-06-ens-band",
    "unc-07-mc", "unc-07-ensemble",
)  # fmt: skip

DOCUMENT = Document(
    "uncertainty",
    Source("Uncertainty Estimation", "Flax NNX guide: MC-Dropout and deep ensembles"),
    uncertainty_section,
    (
        FigureSpec(
            "uncertainty_band.png",
            "MC-Dropout and the deep ensemble on the grid, root key 0: the predictive mean "
            "with its total and epistemic ±2σ bands, and the aleatoric and epistemic variance "
            "along x.",
            BAND_CLAIMS,
            uncertainty_band_figure,
        ),
    ),
    figure_data,
)
