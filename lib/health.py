"""Health checks: did a trained model actually learn? (issue: model health)

An audit trusts a claim only if the model behind it trained properly. Each
check returns a `HealthCheck` with the measured figure and the threshold, so a
failing model is reported with its number beside the claims it supports.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

# "Flat at the end": over the last tenth of training the loss improved by less than
# this fraction of its total improvement (first tenth -> last tenth).
FLAT_FRACTION = 0.05
# "Pinned": an output sits at a bound for more than this fraction of inputs.
PINNED_FRACTION = 0.5


@dataclass(frozen=True)
class HealthCheck:
    """One check of one model: pass/fail, the measured figure and the threshold it met."""

    name: str
    passed: bool
    measured: float
    threshold: str

    def to_json(self) -> dict:
        return asdict(self)


def converged(losses: np.ndarray) -> HealthCheck:
    """Loss trace finite, and flat at the end relative to its total improvement.

    Compares means over tenths of the trace, which averages out minibatch noise.
    """
    losses = np.asarray(losses, dtype=np.float64)
    if not np.all(np.isfinite(losses)):
        return HealthCheck("converged", False, float("nan"), "finite loss trace")
    tenth = max(len(losses) // 10, 1)
    first, before_last, last = (
        losses[:tenth].mean(),
        losses[-2 * tenth : -tenth].mean(),
        losses[-tenth:].mean(),
    )
    total = first - last
    late = before_last - last
    fraction = float(late / total) if total > 0 else float("inf")
    return HealthCheck(
        "converged",
        bool(total > 0 and fraction < FLAT_FRACTION),
        fraction,
        f"late improvement / total < {FLAT_FRACTION}",
    )


def beats_baseline(model_loss: float, baseline_loss: float, baseline: str) -> HealthCheck:
    """The model's loss on its own objective is below a trivial predictor's."""
    return HealthCheck(
        f"beats {baseline}",
        bool(model_loss < baseline_loss),
        float(model_loss),
        f"< {baseline_loss:.4f} ({baseline})",
    )


def not_pinned(fraction_at_bound: float, what: str) -> HealthCheck:
    """No output head sits at a bound (a clip, or probability 1) for most inputs."""
    return HealthCheck(
        f"{what} not pinned",
        bool(fraction_at_bound <= PINNED_FRACTION),
        float(fraction_at_bound),
        f"<= {PINNED_FRACTION}",
    )


def classifier_health(
    train_loss: np.ndarray, test_nll: float, probs: np.ndarray
) -> list[HealthCheck]:
    """Converged; test NLL below chance (log 10); max probability not saturated at 1 for most inputs."""
    n_classes = probs.shape[1]
    saturated = float(np.mean(probs.max(axis=1) >= 1.0 - 1e-12))
    return [
        converged(train_loss),
        beats_baseline(test_nll, float(np.log(n_classes)), "chance"),
        not_pinned(saturated, "max probability"),
    ]
