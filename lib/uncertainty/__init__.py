"""Reproduction of the Flax NNX guide "Uncertainty Estimation" (docs/RECIPES.md, Uncertainty).

Reads top-down as the data flows: ``config`` (the recipe) -> ``data`` -> ``model`` -> ``training`` -> ``prediction``
-> ``experiment``. The entry point is :func:`run`; the guide's printed figures come from
:func:`headline_figures`; the claims that compare them with the printed values are in
:mod:`uncertainty_claims.uncertainty.claims.specs`.
"""

from .config import UncertaintyConfig
from .data import ToyData, make_data, region_masks, root_keys, true_function
from .experiment import (
    UncertaintyResult,
    headline_figures,
    printed_figure_names,
    printed_trace,
    region_summary,
    run,
)
from .model import GaussianMLP, gaussian_nll
from .prediction import (
    Samples,
    ensemble_predict,
    mc_predict,
    mc_predict_loop,
)
from .training import (
    adam,
    bootstrap_indices,
    ensemble_train_step,
    make_ensemble,
    new_mc_model,
    train_ensemble,
    train_ensemble_loop,
    train_mc_dropout,
    train_mc_dropout_loop,
    train_step,
)

__all__ = [
    "GaussianMLP",
    "Samples",
    "ToyData",
    "UncertaintyConfig",
    "UncertaintyResult",
    "adam",
    "bootstrap_indices",
    "ensemble_predict",
    "ensemble_train_step",
    "gaussian_nll",
    "headline_figures",
    "make_data",
    "make_ensemble",
    "mc_predict",
    "mc_predict_loop",
    "new_mc_model",
    "printed_figure_names",
    "printed_trace",
    "region_masks",
    "region_summary",
    "root_keys",
    "run",
    "train_ensemble",
    "train_ensemble_loop",
    "train_mc_dropout",
    "train_mc_dropout_loop",
    "train_step",
    "true_function",
]
