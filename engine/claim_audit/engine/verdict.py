"""A claim on one order's results: what a claim's judge returns, and the verdict over
several valid float orders (`verdict_over`).

Two kinds of claim, two kinds of return value:
- a figure claim (a printed number the recipe reproduces) returns its figures (`figure()`
  or a number, claim_audit.engine.claims), which become a `Measured`, judged over
  all orders together (is the published number a plausible draw of the recipe?
  claim_audit.engine.prediction);
- a qualitative claim (a comparison, a region, a threshold, an identity) returns whether it
  holds in this order: a `Judgement`. A threshold claim carries the numbers it compares,
  each a `Threshold` (a value and the `Region` where the claim holds: `within()`, or a
  `Comparison` of claim_audit.engine.effects), and is judged like a figure, by the prediction
  interval of each value over the orders against its region; any other (an identity, a
  shape) returns `satisfied()` and is judged order by order. `close_to` and `all_close` are
  judgements of a figure against a tolerance given by hand (a marker's test without `Claims`:
  `claim.close_to`).
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any


def fmt(value: Any) -> str:
    """A figure as the audit prints it: 4 significant digits (a whole number plainly, as
    99900, up to 2**53, where floats stop holding every integer), lists and named figures
    joined by commas."""
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if value.is_integer() and abs(value) <= 2**53:
            return f"{value:.0f}"
        return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.3e}"
    if isinstance(value, list | tuple):
        return ", ".join(fmt(v) for v in value)
    if hasattr(value, "tolist") and hasattr(value, "ndim"):  # a numpy array or scalar
        return fmt(value.tolist())
    if isinstance(value, dict):
        return ", ".join(f"{k}: {fmt(v)}" for k, v in value.items())
    return str(value)


def as_json(value: Any) -> Any:
    """A measured figure as audit.json holds it: numbers as numbers (a 1-figure tuple as its
    number, as `fmt` prints it), lists and named figures as lists and objects, anything else
    as its text."""
    if hasattr(value, "tolist") and hasattr(value, "ndim"):  # a numpy array or scalar
        value = value.tolist()
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, list | tuple):
        return as_json(value[0]) if len(value) == 1 else [as_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): as_json(v) for k, v in value.items()}
    return str(value)


def plain_figures(value: Any) -> bool:
    """Whether `value` (as `as_json` gives it) is a number or a list of numbers: no text
    beside its numbers that a reader would need."""
    items = value if isinstance(value, list) else [value]
    return all(isinstance(v, int | float) and not isinstance(v, bool) for v in items)


@dataclass(frozen=True)
class Region:
    """The values of an effect for which a claim holds: an interval, closed or open."""

    low: float = -math.inf
    high: float = math.inf
    closed: bool = True

    def __post_init__(self) -> None:
        for name in ("low", "high"):
            bound = getattr(self, name)
            if not isinstance(bound, numbers.Real) or isinstance(bound, bool) or math.isnan(bound):
                raise ValueError(f"a region's {name} must be a number; got {bound!r}")
        empty = self.low > self.high if self.closed else self.low >= self.high
        if empty:
            raise ValueError(
                f"a region from {self.low!r} to {self.high!r} ({'closed' if self.closed else 'open'}) "
                "holds no value: its low must lie below its high"
            )

    def contains(self, value: float) -> bool:
        """Whether `value` lies in the region (NaN never does)."""
        if self.closed:
            return self.low <= value <= self.high
        return self.low < value < self.high

    def __str__(self) -> str:
        if self.low == -math.inf:
            return f"{'<=' if self.closed else '<'} {self.high:g}"
        if self.high == math.inf:
            return f"{'>=' if self.closed else '>'} {self.low:g}"
        brackets = "[]" if self.closed else "()"
        return f"in {brackets[0]}{self.low:g}, {self.high:g}{brackets[1]}"


@dataclass(frozen=True)
class Threshold:
    """One number a threshold claim compares, in one order, and the region where it holds."""

    name: str
    value: float
    region: Region
    scale: str = "linear"
    """Where the value's draws are judged (claim_audit.engine.scales): "log" for a
    ratio, variance or sd; "logit" for a share or AUROC; else "linear"."""


@dataclass(frozen=True)
class Judgement:
    """A claim judged on one order's results: its figures and whether it holds there.

    `thresholds`: the numbers a threshold claim compares; the claim then holds in this order
    exactly when each lies in its region, and over the orders it is judged by their
    prediction intervals (claim_audit.engine.claim). `inconclusive`: why this run cannot judge
    the claim at all (e.g. a timing on a busy machine); its verdict is then *inconclusive*.
    """

    holds: bool
    published: Any
    measured: Any
    tolerance: Any = "-"
    details: dict[str, Any] = field(default_factory=dict)
    thresholds: tuple[Threshold, ...] = ()
    inconclusive: str | None = None

    def beside(self, **details: Any) -> Judgement:
        """This judgement with `details` recorded beside it (never judged)."""
        return replace(self, details={**self.details, **details})

    def __post_init__(self) -> None:
        if self.thresholds and self.holds != all(
            t.region.contains(t.value) for t in self.thresholds
        ):
            raise ValueError(
                "a threshold claim holds exactly when each of its thresholds does; got holds="
                f"{self.holds} with {self.thresholds}"
            )


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


_MEAN_SD = re.compile(r"^\s*(\S+)\s*(?:±|\+-|\+/-)\s*(\S+)\s*$")


def mean_and_sd(published: str) -> tuple[str, str] | None:
    """The two printed figures of a mean and its sd, "6.20 ± 1.13" (or "+-", "+/-"), else None."""
    match = _MEAN_SD.match(published)
    return (match[1], match[2]) if match else None


def printed_figures(published: str | tuple[str, ...]) -> tuple[str, ...]:
    """The figures a figure claim's published text prints, one by one."""
    if isinstance(published, tuple):
        return published
    return mean_and_sd(published) or (published,)


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
    published: Any = None,
    measured: Any,
    tolerance: Any = "-",
    inconclusive: str | None = None,
    **details: Any,
) -> Judgement:
    """Holds when `condition` is true; for a qualitative claim that compares no number with
    a threshold (an identity, a shape, a crash). A threshold claim uses `within`.
    `inconclusive`: why this run cannot judge the claim (its verdict is then inconclusive)."""
    return Judgement(
        bool(condition), published, measured, tolerance, dict(details), inconclusive=inconclusive
    )


def within(
    value: float,
    region: Region,
    *,
    published: Any = None,
    name: str = "",
    measured: Any = None,
    scale: str = "linear",
    **details: Any,
) -> Judgement:
    """A threshold claim on one number: holds when `value` lies in `region` ("T > 2" is
    `within(T, Region(2, closed=False), ...)`); judged over the orders by the share of draws
    in which it holds, with the margins of `value` on its `scale` ("log" for a positive
    quantity, "logit" for a share). `measured`: what the audit shows, if not `value`."""
    value = float(value)
    return Judgement(
        region.contains(value),
        published,
        value if measured is None else measured,
        str(region),
        dict(details),
        thresholds=(Threshold(name, value, region, scale),),
    )


def verdict_over(holds: Mapping[str, bool]) -> str:
    """holds / refuted when every judgement agrees, else sensitive (a claim judged once, or
    the judgements of one draw)."""
    if all(holds.values()):
        return "holds"
    if not any(holds.values()):
        return "refuted"
    return "sensitive"
