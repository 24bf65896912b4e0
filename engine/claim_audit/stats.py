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


def interval(estimate: float, samples: ArrayLike) -> Interval:
    """The LEVEL interval of `estimate` from its resampled values (BCa with acceleration 0)."""
    values = np.asarray(samples, dtype=np.float64)
    if values.ndim != 1 or values.size < 2 or not np.all(np.isfinite(values)):
        raise ValueError(f"need at least 2 finite bootstrap samples in a 1-D array; got {values!r}")
    z = ndtri(np.array([(1 - LEVEL) / 2, (1 + LEVEL) / 2]))
    edge = 0.5 / values.size  # half a resample: an end beyond the outermost is open
    share = (np.sum(values < estimate) + 0.5 * np.sum(values == estimate)) / values.size
    z = z + 2 * ndtri(np.clip(share, edge, 1 - edge))
    quantiles = ndtr(z)
    low, high = np.quantile(values, quantiles)
    open_ends = bool(quantiles[0] < edge), bool(quantiles[1] > 1 - edge)
    return Interval(float(estimate), float(low), float(high), LEVEL, *open_ends)
