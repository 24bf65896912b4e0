"""Bootstrap intervals: bias-corrected percentile (Efron & Tibshirani 1993, ch. 13-14)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtr, ndtri

B = 1000
SEED = 20240607
LEVEL = 0.95
METHOD = "bias-corrected percentile bootstrap"


@dataclass(frozen=True)
class Interval:
    """An estimate and its interval; an end `_at_edge` lies beyond every resample (open)."""

    estimate: float
    low: float
    high: float
    level: float = LEVEL
    low_at_edge: bool = False
    high_at_edge: bool = False

    def within(self, low: float, high: float) -> bool:
        """Whether the whole interval lies in [low, high] (an open end never does)."""
        return (
            low <= self.low
            and self.high <= high
            and not (self.low_at_edge and low > -math.inf)
            and not (self.high_at_edge and high < math.inf)
        )

    def to_json(self) -> dict[str, float | bool]:
        return asdict(self)


def interval(
    estimate: float, samples: ArrayLike, level: float = LEVEL, *, bias_corrected: bool = True
) -> Interval:
    """The interval of `estimate` from its resampled values (BCa with acceleration 0)."""
    values = np.asarray(samples, dtype=np.float64)
    if values.ndim != 1 or values.size < 2 or not np.all(np.isfinite(values)):
        raise ValueError(f"need at least 2 finite bootstrap samples in a 1-D array; got {values!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level}")
    z = ndtri(np.array([(1 - level) / 2, (1 + level) / 2]))
    if bias_corrected:
        share = (np.sum(values < estimate) + 0.5 * np.sum(values == estimate)) / values.size
        share = np.clip(share, 0.5 / values.size, 1 - 0.5 / values.size)
        z = z + 2 * ndtri(share)
    quantiles = ndtr(z)
    low, high = np.quantile(values, quantiles)
    return Interval(
        float(estimate),
        float(low),
        float(high),
        level,
        low_at_edge=bool(quantiles[0] < 0.5 / values.size),
        high_at_edge=bool(quantiles[1] > 1 - 0.5 / values.size),
    )
