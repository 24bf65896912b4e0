"""Health of the uncertainty models: did the MC-Dropout net and each ensemble member learn?"""

from __future__ import annotations

import numpy as np

from ..health import HealthCheck, beats_baseline, converged, not_pinned
from ..metrics import gaussian_nll
from .experiment import UncertaintyResult
from .model import LOG_VAR_MAX, LOG_VAR_MIN


def _at_clip(variances: np.ndarray) -> np.ndarray:
    # variances = exp(clip(log_var)) in float32; at a bound log_var equals it to float32 rounding.
    log_var = np.log(np.asarray(variances, dtype=np.float64))
    return (log_var >= LOG_VAR_MAX - 1e-5) | (log_var <= LOG_VAR_MIN + 1e-5)


def constant_baseline_nll(y: np.ndarray) -> float:
    """The objective of predicting the data's mean and variance everywhere: 0.5 (log var + 1)."""
    return float(0.5 * (np.log(np.var(np.asarray(y, dtype=np.float64))) + 1.0))


def _member_nll(means: np.ndarray, variances: np.ndarray, y: np.ndarray) -> list[float]:
    return [
        gaussian_nll(m, np.log(np.asarray(v, dtype=np.float64)), y)
        for m, v in zip(means, variances, strict=True)
    ]


def uncertainty_health(result: UncertaintyResult) -> dict[str, list[HealthCheck]]:
    """Checks per method on the training inputs; the ensemble's use its worst member.

    converged: the loss trace (per member) is finite and flat at the end;
    beats constant: mean Gaussian NLL of each pass / member below the constant predictor's;
    log-variance not pinned: at most half the outputs of every pass / member at a clip bound.
    """
    y = result.y.astype(np.float64)
    baseline = constant_baseline_nll(y)
    mc_nll = float(np.mean(_member_nll(result.mc_train_means, result.mc_train_vars, y)))
    ens_nll = _member_nll(result.ens_train_means, result.ens_train_vars, y)
    ens_converged = [converged(result.ens_loss[:, m]) for m in range(result.ens_loss.shape[1])]
    worst_converged = max(ens_converged, key=lambda c: (not c.passed, c.margin))
    return {
        "mc_dropout": [
            converged(result.mc_loss),
            beats_baseline(mc_nll, baseline, "constant"),
            not_pinned(float(_at_clip(result.mc_train_vars).mean()), "log-variance"),
        ],
        "ensemble": [
            worst_converged,
            beats_baseline(max(ens_nll), baseline, "constant"),
            not_pinned(
                float(_at_clip(result.ens_train_vars).mean(axis=(1, 2)).max()), "log-variance"
            ),
        ],
    }


def health_figures(result: UncertaintyResult) -> dict[str, float]:
    """The health checks' measured figures, flat (for the spread over keys)."""
    return {
        f"health.{method}.{check.name}": check.measured
        for method, checks in uncertainty_health(result).items()
        for check in checks
    }
