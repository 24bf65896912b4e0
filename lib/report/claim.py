"""What a claim test records: the published figure, the measured one, and the verdict.

A claim test takes the `claim` fixture and hands it the experiment's results in every
valid float order (lib/orders.py) with a judge: a function from one order's results to
a `Judgement` (built with `close_to`, `all_close` or `satisfied`). The verdict is
- holds: the claim holds in every order;
- refuted: it is refuted in every order;
- sensitive: it depends on the order (reported with each order's figure; never fails).
The record is written *before* the test passes or fails, so a refuted claim still reports
its number; it travels to the controller through pytest's `user_properties`, which
pytest-xdist forwards. A claim whose refutation is a recorded finding (`finding=` on its
marker) is an expected failure when refuted in every order, and fails the run when it
holds in every order (the record must be updated).
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import pytest

from lib.orders import FAITHFUL, Orders
from lib.verdict import Judgement, all_close, close_to, fmt, satisfied, verdict_over

PROPERTY = "claim_record"
META_PROPERTY = "claim_meta"
VERDICTS = ("holds", "refuted", "sensitive", "error")


class ClaimRefuted(AssertionError):
    """The measurement contradicts the published claim in every valid order."""


class FindingGone(AssertionError):
    """A recorded finding no longer reproduces: the claim holds in every order."""


@dataclass(frozen=True)
class ClaimMeta:
    """Where a claim comes from: the marker on its test."""

    id: str
    document: str
    section: str
    statement: str
    finding: str | None = None


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


R = TypeVar("R")


def _figure_range(judgements: Mapping[str, Judgement]) -> list[float] | None:
    """[min, max] of a numeric measured figure across orders (None when not one number)."""
    values = [j.measured for j in judgements.values()]
    if all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
        return [float(min(values)), float(max(values))]
    return None


class Claim:
    """The `claim` fixture's object: judge the claim on every order, record, then decide."""

    def __init__(self, meta: ClaimMeta, user_properties: list[tuple[str, Any]]):
        self.meta = meta
        self._properties = user_properties

    def check(
        self, orders: Orders[R], judge: Callable[[R], Judgement], **extra: Any
    ) -> ClaimRecord:
        """Judge the claim on each order's results; `extra` details are recorded beside it
        (statistics of the faithful run, e.g. bootstrap intervals)."""
        judgements = {name: judge(results) for name, results in orders.items()}
        return self._decide(judgements, extra)

    def record(self, judgement: Judgement) -> ClaimRecord:
        """For a claim about the code or the recipe, not about trained numbers: one
        judgement that no float order can change."""
        return self._decide({FAITHFUL: judgement}, {})

    def close_to(self, measured: float, published: str, tolerance: float, **details: Any):
        """`record(close_to(...))`: one figure, one order."""
        return self.record(close_to(measured, published, tolerance, **details))

    def all_close(
        self,
        measured: list[float],
        published: list[str],
        tolerance: list[float] | float,
        **details: Any,
    ) -> ClaimRecord:
        """`record(all_close(...))`: several figures, one order."""
        return self.record(all_close(measured, published, tolerance, **details))

    def holds(self, condition: bool, **figures: Any) -> ClaimRecord:
        """`record(satisfied(...))`: one qualitative judgement, one order."""
        return self.record(satisfied(condition, **figures))

    def _decide(self, judgements: dict[str, Judgement], extra: dict[str, Any]) -> ClaimRecord:
        faithful = judgements[FAITHFUL]
        verdict = verdict_over({name: j.holds for name, j in judgements.items()})
        details = {**faithful.details, **extra}
        if self.meta.finding:
            details["finding"] = self.meta.finding
        # Every claim lists its figure per order; one judged once (about the code or the
        # recipe, which no float order changes) lists the faithful order alone.
        details["orders"] = {
            name: {"measured": fmt(j.measured), "holds": j.holds} for name, j in judgements.items()
        }
        if len(judgements) > 1:
            spread = _figure_range(judgements)
            if spread is not None:
                details["range_over_orders"] = spread
        # A NaN compares false with everything, so it would read as "refuted" (and pass quietly
        # as a known finding): a non-finite figure is an error of the experiment, not a verdict.
        for name, judgement in judgements.items():
            for part in ("published", "measured", "tolerance", "details"):
                where = _nonfinite_at(getattr(judgement, part))
                if where is not None:
                    raise ValueError(
                        f"{self.meta.id}: {part}{where} is NaN or infinite in order {name!r}; "
                        "the experiment or its input is broken, so there is no verdict"
                    )
        record = ClaimRecord(
            **{k: v for k, v in asdict(self.meta).items() if k != "finding"},
            published=fmt(faithful.published),
            measured=fmt(faithful.measured),
            tolerance=fmt(faithful.tolerance),
            verdict=verdict,
            details=details,
        )
        self._properties.append((PROPERTY, json.dumps(record.to_json(), default=float)))
        figures = (
            f"published {record.published}, measured {record.measured}, "
            f"tolerance {record.tolerance}"
        )
        if verdict == "refuted":
            if self.meta.finding:
                pytest.xfail(self.meta.finding)
            raise ClaimRefuted(f"{self.meta.id}: {figures}: {self.meta.statement}")
        if verdict == "holds" and self.meta.finding:
            raise FindingGone(
                f"{self.meta.id}: recorded as a finding ({self.meta.finding}), but it now holds "
                f"in every order ({figures}): update the record"
            )
        return record
