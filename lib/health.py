"""Health checks: did a trained model actually learn?

An audit trusts a claim only if the model behind it trained properly. Each
check returns a `HealthCheck` with the measured figure and the threshold, so a
failing model is reported with its number beside the claims it supports.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

# "Flat at the end": the last tenth of training moved the loss by less than this
# fraction of the range it covered during training.
FLAT_FRACTION = 0.05
# "Pinned": an output sits at a bound for more than this fraction of inputs.
PINNED_FRACTION = 0.5


@dataclass(frozen=True)
class HealthCheck:
    """One check of one model: pass/fail, the measured figure and the threshold it met.

    `limit`: the value of `measured` at which the check flips in this run; it passes when
    `measured` is below it (or at it, where `inclusive`). Use `check` to build one.
    """

    name: str
    passed: bool
    measured: float
    threshold: str
    limit: float
    inclusive: bool

    @classmethod
    def check(
        cls, name: str, measured: float, limit: float, threshold: str, *, inclusive: bool
    ) -> HealthCheck:
        passed = measured < limit or (inclusive and measured == limit)
        return cls(name, bool(passed), float(measured), threshold, float(limit), inclusive)

    @property
    def margin(self) -> float:
        """How far the measured figure lies beyond its limit (below 0: inside)."""
        return self.measured - self.limit

    def to_json(self) -> dict:
        """JSON-safe: a non-finite measured figure (e.g. a loss that never improved) becomes null."""
        record = asdict(self)
        for name in ("measured", "limit"):
            record[name] = record[name] if np.isfinite(record[name]) else None
        return record


def converged(losses: np.ndarray) -> HealthCheck:
    """Loss trace finite, and flat at the end.

    The trace is cut into tenths and each tenth averaged (which evens out minibatch
    noise); "flat" means the last two tenths differ by less than FLAT_FRACTION of the
    range the tenth-means span over the whole of training, or by no more than their
    noise (3 standard errors of the difference).
    """
    losses = np.asarray(losses, dtype=np.float64)
    if len(losses) < 20 or not np.all(np.isfinite(losses)):
        return HealthCheck.check(
            "converged", math.nan, math.nan, "a finite trace of >= 20 steps", inclusive=False
        )
    chunks = np.array_split(losses, 10)
    tenths = np.array([chunk.mean() for chunk in chunks])
    change = abs(tenths[-2] - tenths[-1])
    span = tenths.max() - tenths.min()
    fraction = float(change / span) if span > 0 else 0.0
    # A change within 3 standard errors of the two means' difference is minibatch noise, not a trend.
    noise = 3 * np.sqrt(sum(chunk.var(ddof=1) / len(chunk) for chunk in chunks[-2:]))
    # Flat when fraction < FLAT_FRACTION or change <= noise: one limit, whichever is larger.
    noise_fraction = float(noise / span) if span > 0 else 0.0
    within_noise = noise_fraction >= FLAT_FRACTION
    return HealthCheck.check(
        "converged",
        fraction,
        noise_fraction if within_noise else FLAT_FRACTION,
        f"last-tenth change < {FLAT_FRACTION} x range, or noise",
        inclusive=within_noise,
    )


def beats_baseline(model_loss: float, baseline_loss: float, baseline: str) -> HealthCheck:
    """The model's loss on its own objective is below a trivial predictor's."""
    return HealthCheck.check(
        f"beats {baseline}",
        model_loss,
        baseline_loss,
        f"< {baseline_loss:.4f} ({baseline})",
        inclusive=False,
    )


def not_pinned(fraction_at_bound: float, what: str) -> HealthCheck:
    """No output head sits at a bound (a clip, or probability 1) for most inputs."""
    return HealthCheck.check(
        f"{what} not pinned",
        fraction_at_bound,
        PINNED_FRACTION,
        f"<= {PINNED_FRACTION}",
        inclusive=True,
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
