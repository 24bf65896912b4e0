"""What a claim test records: the published figure, the measured one, and the verdict.

A claim test takes the `claim` fixture, computes its measured value from the
experiment in lib/, then calls one of the checks below. The check records the
figures *before* asserting, so a refuted claim still reports its number; the
record travels to the controller process through pytest's `user_properties`,
which pytest-xdist forwards.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import asdict, dataclass
from typing import Any

PROPERTY = "claim_record"
META_PROPERTY = "claim_meta"
VERDICTS = ("holds", "refuted", "error")


class ClaimRefuted(AssertionError):
    """The measurement contradicts the published claim."""


@dataclass(frozen=True)
class ClaimMeta:
    """Where a claim comes from: the marker on its test."""

    id: str
    document: str
    section: str
    statement: str


@dataclass
class ClaimRecord:
    """One row of the audit: the claim, its figures and the verdict."""

    id: str
    document: str
    section: str
    statement: str
    published: str
    measured: str
    tolerance: str
    verdict: str
    details: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.4g}" if abs(value) >= 1e-3 or value == 0 else f"{value:.3e}"
    if isinstance(value, list | tuple):
        return ", ".join(_fmt(v) for v in value)
    return str(value)


def _nonfinite_at(value: Any, where: str = "") -> str | None:
    """Where the first NaN or infinity sits in `value` (through lists and dicts), else None."""
    if isinstance(value, numbers.Real) and not math.isfinite(value):
        return where
    if isinstance(value, dict | list | tuple):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            found = _nonfinite_at(item, f"{where}[{key!r}]")
            if found is not None:
                return found
    return None


class Claim:
    """The `claim` fixture's object: record figures, then check them."""

    def __init__(self, meta: ClaimMeta, user_properties: list[tuple[str, Any]]):
        self.meta = meta
        self._properties = user_properties

    def _record(
        self, published: Any, measured: Any, tolerance: Any, holds: bool, details: dict
    ) -> None:
        # A NaN compares false with everything, so it would read as "refuted" (and pass quietly
        # as a known finding): a non-finite figure is an error of the experiment, not a verdict.
        for field, value in (
            ("published", published),
            ("measured", measured),
            ("tolerance", tolerance),
            ("details", details),
        ):
            where = _nonfinite_at(value)
            if where is not None:
                raise ValueError(
                    f"{self.meta.id}: {field}{where} is NaN or infinite; the experiment or its "
                    "input is broken, so there is no verdict"
                )
        record = ClaimRecord(
            **asdict(self.meta),
            published=_fmt(published),
            measured=_fmt(measured),
            tolerance=_fmt(tolerance),
            verdict="holds" if holds else "refuted",
            details=details,
        )
        self._properties.append((PROPERTY, json.dumps(record.to_json(), default=float)))
        if not holds:
            raise ClaimRefuted(
                f"{self.meta.id}: published {record.published}, measured {record.measured}, "
                f"tolerance {record.tolerance}: {self.meta.statement}"
            )

    def close_to(self, measured: float, published: str, tolerance: float, **details: Any) -> None:
        """Holds when |measured - published| <= tolerance; `published` as printed ("6.20")."""
        if not (math.isfinite(measured) and math.isfinite(tolerance) and tolerance >= 0):
            raise ValueError(
                f"measured and tolerance must be finite, tolerance >= 0; got {measured}, {tolerance}"
            )
        holds = abs(measured - float(published)) <= tolerance
        self._record(
            published,
            measured,
            f"± {_fmt(tolerance)}",
            holds,
            {"measured_value": measured, **details},
        )

    def all_close(
        self,
        measured: list[float],
        published: list[str],
        tolerance: list[float] | float,
        **details: Any,
    ) -> None:
        """Holds when every measured figure is within its tolerance of the published one (as printed)."""
        tolerances = tolerance if isinstance(tolerance, list) else [tolerance] * len(published)
        if not (len(measured) == len(published) == len(tolerances)):
            raise ValueError("measured, published and tolerance must have the same length")
        if not all(math.isfinite(t) and t >= 0 for t in tolerances):
            raise ValueError(f"tolerances must be finite and >= 0; got {tolerances}")
        holds = all(
            abs(m - float(p)) <= t for m, p, t in zip(measured, published, tolerances, strict=True)
        )
        self._record(
            published,
            measured,
            f"± {_fmt(tolerances)}",
            holds,
            {"measured_values": measured, **details},
        )

    def holds(
        self,
        condition: bool,
        *,
        published: Any,
        measured: Any,
        tolerance: Any = "-",
        **details: Any,
    ) -> None:
        """Holds when `condition` is true; for qualitative or comparative claims."""
        self._record(published, measured, tolerance, bool(condition), dict(details))
