"""Uncertainty metrics computed in float64 numpy: calibration, OOD detection and regression."""

from .classification import (
    N_BINS,
    ReliabilityBins,
    accuracy,
    bin_index,
    brier,
    ece,
    ece_equal_mass,
    fit_temperature,
    heldout_nll_curve,
    mce,
    nll,
    reliability_bins,
    scale_logits,
    softmax,
)
from .ood import (
    auroc,
    energy_score,
    fpr_at_tpr,
    max_logit_score,
    msp_score,
)
from .regression import (
    VarianceDecomposition,
    decompose_variance,
    gaussian_nll,
)

__all__ = [
    "N_BINS",
    "ReliabilityBins",
    "VarianceDecomposition",
    "accuracy",
    "auroc",
    "bin_index",
    "brier",
    "decompose_variance",
    "ece",
    "ece_equal_mass",
    "energy_score",
    "fit_temperature",
    "fpr_at_tpr",
    "gaussian_nll",
    "heldout_nll_curve",
    "max_logit_score",
    "mce",
    "msp_score",
    "nll",
    "reliability_bins",
    "scale_logits",
    "softmax",
]
