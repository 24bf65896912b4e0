"""A claim judged on one set of results: its figures and whether it holds (`Judgement`),
and the verdict over several valid float orders (`verdict_over`).

The judge constructors are what a claim's definition returns: `close_to` for a figure
printed with a tolerance, `all_close` for several, `satisfied` for a qualitative or
comparative statement (lib/robustness/effects.py builds those from a `Comparison`).
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
    condition: bool, *, published: Any, measured: Any, tolerance: Any = "-", **details: Any
) -> Judgement:
    """Holds when `condition` is true; for qualitative or comparative claims."""
    return Judgement(bool(condition), published, measured, tolerance, dict(details))


def verdict_over(holds: Mapping[str, bool]) -> str:
    """holds / refuted when every order agrees, else sensitive."""
    if all(holds.values()):
        return "holds"
    if not any(holds.values()):
        return "refuted"
    return "sensitive"
