"""The scale a quantity is judged on, so that its intervals stay inside its domain.

A ratio, a variance, an sd or a scale factor is positive: it is judged on the log scale. A
share, an accuracy or an AUROC lies in (0, 1): it is judged on the logit scale. Anything
else (a difference, a correlation, a log-likelihood) on the linear scale. An interval
computed on the scale and mapped back never reaches outside the domain.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Scale:
    """A map of a quantity's domain onto the real line and back."""

    name: str
    low: float
    high: float
    forward: Callable[[np.ndarray], np.ndarray]
    back: Callable[[np.ndarray], np.ndarray]

    def inside(self, values: np.ndarray) -> bool:
        """Whether every value lies strictly inside the domain (where `forward` is finite)."""
        x = np.asarray(values, dtype=np.float64)
        return bool(np.all((x > self.low) & (x < self.high)))

    def to_scale(self, values: np.ndarray) -> np.ndarray:
        """`values` on the scale; a ValueError names a value outside the domain."""
        x = np.asarray(values, dtype=np.float64)
        if not np.all((x >= self.low) & (x <= self.high)):
            bad = x[~((x >= self.low) & (x <= self.high))][0]
            raise ValueError(
                f"{bad!r} lies outside the {self.name} scale's domain "
                f"[{self.low:g}, {self.high:g}]: declare the quantity's scale as 'linear'"
            )
        with np.errstate(divide="ignore"):
            return self.forward(x)

    def clip(self, value: float) -> float:
        """`value` moved into the closed domain."""
        return float(min(max(value, self.low), self.high))


def _logit(x: np.ndarray) -> np.ndarray:
    return np.log(x) - np.log1p(-x)


def _expit(y: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-y))


SCALES: dict[str, Scale] = {
    "linear": Scale("linear", -math.inf, math.inf, lambda x: x, lambda y: y),
    "log": Scale("log", 0.0, math.inf, np.log, np.exp),
    "logit": Scale("logit", 0.0, 1.0, _logit, _expit),
}


def scale_named(name: str) -> Scale:
    """The scale called `name`; a ValueError lists the known ones."""
    try:
        return SCALES[name]
    except (KeyError, TypeError):
        raise ValueError(f"a scale is one of {sorted(SCALES)}; got {name!r}") from None
