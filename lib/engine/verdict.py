"""A claim on one order's results: what a claim's judge returns, and the verdict over
several valid float orders (`verdict_over`).

Two kinds of claim, two kinds of return value:
- a figure claim (a printed number the recipe reproduces) returns its figures, `figures()`:
  a `Measured`, judged over all orders together (is the published number a plausible draw
  of the recipe? lib/engine/prediction.py);
- a qualitative claim (a comparison, a region, a threshold, an identity) returns whether it
  holds in this order, `satisfied()`: a `Judgement` (lib/engine/effects.py builds those
  from a `Comparison`). `close_to` and `all_close` are such judgements of a figure against
  a tolerance given by hand, for a test without a spec.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def fmt(value: Any) -> str:
    """A figure as the audit prints it: 4 significant digits, lists and named figures joined
    by commas."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.3e}"
    if isinstance(value, list | tuple):
        return ", ".join(fmt(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {fmt(v)}" for k, v in value.items())
    return str(value)


@dataclass(frozen=True)
class Judgement:
    """A claim judged on one order's results: its figures and whether it holds there."""

    holds: bool
    published: Any
    measured: Any
    tolerance: Any = "-"
    details: dict[str, Any] = field(default_factory=dict)
    inconclusive: str | None = None


@dataclass(frozen=True)
class Measured:
    """A figure claim's figures in one order: as published (printed) and as measured."""

    published: tuple[str, ...]
    measured: tuple[float, ...]
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.published) != len(self.measured) or not self.published:
            raise ValueError(
                f"a figure claim needs one measured value per published figure; got "
                f"{self.published!r} and {self.measured!r}"
            )


class FigureRule:
    """Base of a figure claim's judge (a callable of one order's results and the published
    figures): it returns `figures(...)` in each order, and its claim is judged over all
    orders together. The engine counts a registry's figures by it (lib/engine/prediction.py)."""


def figures(
    measured: float | list[float], published: str | tuple[str, ...], **details: Any
) -> Measured:
    """A figure claim's return value: the measured figure(s) beside the published one(s)."""
    one = isinstance(published, str)
    values = [measured] if one else list(measured)  # type: ignore[arg-type]
    printed = (published,) if one else tuple(published)
    return Measured(printed, tuple(float(v) for v in values), dict(details))


def close_to(measured: float, published: str, tolerance: float, **details: Any) -> Judgement:
    """Holds when |measured - published| <= tolerance; `published` as printed ("0.50")."""
    if not (math.isfinite(measured) and math.isfinite(tolerance) and tolerance >= 0):
        raise ValueError(
            f"measured and tolerance must be finite, tolerance >= 0; got {measured}, {tolerance}"
        )
    holds = abs(measured - float(published)) <= tolerance
    return Judgement(
        holds, published, measured, f"± {fmt(tolerance)}", {"measured_value": measured, **details}
    )


def all_close(
    measured: list[float], published: list[str], tolerance: list[float] | float, **details: Any
) -> Judgement:
    """Holds when every measured figure is within its tolerance of the published one (as printed)."""
    tolerances = tolerance if isinstance(tolerance, list) else [tolerance] * len(published)
    if not (len(measured) == len(published) == len(tolerances)):
        raise ValueError("measured, published and tolerance must have the same length")
    if not all(math.isfinite(t) and t >= 0 for t in tolerances):
        raise ValueError(f"tolerances must be finite and >= 0; got {tolerances}")
    holds = all(
        abs(m - float(p)) <= t for m, p, t in zip(measured, published, tolerances, strict=True)
    )
    return Judgement(
        holds,
        published,
        measured,
        f"± {fmt(tolerances)}",
        {"measured_values": measured, **details},
    )


def satisfied(
    condition: bool,
    *,
    published: Any,
    measured: Any,
    tolerance: Any = "-",
    inconclusive: str | None = None,
    **details: Any,
) -> Judgement:
    """Holds when `condition` is true; for qualitative or comparative claims. `inconclusive`:
    why the claim could not be judged in this run."""
    return Judgement(bool(condition), published, measured, tolerance, dict(details), inconclusive)


def verdict_over(holds: Mapping[str, bool]) -> str:
    """holds / refuted when every order agrees, else sensitive."""
    if all(holds.values()):
        return "holds"
    if not any(holds.values()):
        return "refuted"
    return "sensitive"
