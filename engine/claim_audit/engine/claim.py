"""A claim as one object (`ClaimSpec`), and what its test records: the published figure,
the measured one, and the verdict.

A claim is defined once, as a `ClaimSpec`: its id, document, section, statement, the
figure as published, the reading of its qualitative words, a recorded finding, its origin
(a document's assertion or the suite's own check) and its judge, the body of its test.
`Claims` (claim_audit.engine.claims) defines them where their tests live, one
`ClaimSpecs` registry per document, and runs each body once per valid float order
(claim_audit.orders); `Claim.decide` takes the verdict over what it returned.

Each order is a draw of what another valid computation gives (copies of another order
count once: claim_audit.orders):
- a figure claim (its published text figures, its body returning them) holds when each
  published figure lies in its prediction interval over the draws, on the figure's scale
  (claim_audit.engine.prediction), and the interval can tell it from 0 and from a
  figure half as large or half as large again; refuted when one lies outside; otherwise
  *inconclusive* (with the orders that would conclude it);
- a qualitative claim (a threshold, a region, an identity, a shape) is judged by the share
  of valid computations that give it, bounded from the draws it holds in and, for a
  threshold claim, from their margins (claim_audit.engine.share): holds, refuted,
  sensitive or inconclusive;
- a claim judged once (about the code or the recipe) holds or is refuted as that judgement
  says.
Every verdict over several draws records its shares over resampled draws
(claim_audit.engine.stability), which predict how often another machine's draws
would read it otherwise.
A judgement that says the run cannot judge the claim (`inconclusive=`) makes it
inconclusive. No recorded note sets a verdict: it comes from this run's measurements.

The record (`decide`) is written *before* the test passes or fails (`conclude`), so a
refuted claim still reports its number; it travels to the controller through pytest's
`user_properties`, which pytest-xdist forwards. A claim whose refutation is a recorded
finding (`finding=` on its spec) is an expected failure when refuted, and fails the run when
it is not (the record must be updated).
"""

from __future__ import annotations

import cmath
import json
import math
import numbers
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pytest

from ..orders import FAITHFUL
from .prediction import FIGURE_ALPHA, judge_figure
from .scales import scale_named
from .share import HOLDS_AT, REFUTED_AT, SHARE_ALPHA, draws_to_conclude, share_bounds
from .stability import verdict_shares
from .verdict import Judgement, Measured, as_json, fmt, plain_figures, printed_figures, verdict_over

PROPERTY = "claim_record"
VERDICTS = ("holds", "refuted", "sensitive", "inconclusive", "error")
ORIGINS = ("document", "suite")
"""Who makes a claim: a document (its assertions), or the suite (its own checks: model
health, typicality of the published run, recipe invariants). Reports count them apart."""


CLAIM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
"""A claim id is an identifier: the table, audit.md, audit.html and the diff print it as is."""


class ClaimRefuted(AssertionError):
    """The measurement contradicts the published claim in every valid order."""


class FindingGone(AssertionError):
    """A recorded finding no longer reproduces: the claim is not refuted."""


LARGEST_FIGURE = 1e150
"""The largest size of a number judged over orders (a figure, a threshold's value): their
spread squares deviations, which overflows a float beyond about 1e154. Larger ones are
refused with the claim named: measure them in a larger unit, or their log."""

Published = str | tuple[str, ...] | None
Rule = Callable[[Any, Published], Judgement]


@dataclass(frozen=True)
class ClaimSpec:
    """One claim, defined once: what the test, the table, audit.json and the sweeps read.

    `published`: the figure (or figures) as the document prints it, or for a qualitative
    claim the short form the audit shows; None where the judge states it (a health check's
    threshold). `judge(results, published)`: the claim on one order's results (or on None,
    for a claim that reads no results), measure and rule together. `reading`: how the
    document's qualitative words become the rule, in our words. `finding`: a recorded
    refutation, with the measured value. `once`: judged on the faithful order alone (a
    claim about the code, the recipe or other seeds, which no float order changes).
    `beside`: statistics recorded next to the verdict, never judged (e.g. bootstrap
    intervals). `origin`: "document" for a document's assertion, "suite" for the suite's own
    check (model health, typicality, recipe invariants; `ORIGINS`). `gates=False`: a
    benchmark figure of the machine it runs on (a timing), whose refutation is recorded and
    never fails the run. `figure`: a figure claim (`Claims`: its published text is figures).
    """

    id: str
    document: str
    section: str
    statement: str
    published: Published
    judge: Rule
    reading: str | None = None
    finding: str | None = None
    once: bool = False
    beside: Callable[[], dict[str, Any]] | None = None
    origin: str = "document"
    gates: bool = True
    figure: bool = False
    scale: str = "linear"

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not CLAIM_ID.fullmatch(self.id):
            raise ValueError(
                f"claim id {self.id!r} is not an identifier: letters, digits, '.', '_' and "
                "'-', starting with a letter or digit"
            )
        for name in ("document", "section", "statement"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name).strip():
                raise ValueError(f"claim spec {self.id!r}: {name} must be a non-empty string")
        if self.finding is not None and (not isinstance(self.finding, str) or not self.finding):
            raise ValueError(f"claim {self.id}: finding must be a non-empty string or None")
        if not isinstance(self.gates, bool):
            raise ValueError(f"claim {self.id}: gates must be True or False; got {self.gates!r}")
        if not self.gates and self.finding:
            raise ValueError(
                f"claim {self.id}: a claim that never gates the run (a benchmark figure) is "
                "recorded as measured; it carries no finding"
            )
        if self.origin not in ORIGINS:
            raise ValueError(
                f"claim {self.id}: origin must be one of {ORIGINS}; got {self.origin!r}"
            )
        published = self.published
        parts = published if isinstance(published, tuple) else (published,)
        if published is not None and not all(isinstance(p, str) and p for p in parts):
            raise ValueError(
                f"claim spec {self.id}: published must be the figure as printed (a string, "
                f"or a tuple of them) or None; got {published!r}"
            )
        scale_named(self.scale)  # a ValueError names the known scales
        if not callable(self.judge):
            raise ValueError(f"claim spec {self.id}: judge must be callable; got {self.judge!r}")
        if self.is_figure and (self.published is None or self.once):
            raise ValueError(
                f"claim spec {self.id}: a figure claim needs its published figures and is "
                "judged over every order"
            )
        for printed in printed_figures(published) if self.is_figure else ():
            size = abs(float(printed))  # "1e309" parses as inf
            if not size <= LARGEST_FIGURE:
                raise ValueError(
                    f"claim spec {self.id}: published figure {printed!r} is "
                    f"{'not finite' if not math.isfinite(size) else 'too large'}: the engine "
                    f"judges figures up to ±{LARGEST_FIGURE:g}"
                )

    @property
    def is_figure(self) -> bool:
        """Whether this is a figure claim (judged over all orders at once)."""
        return self.figure

    @property
    def figure_count(self) -> int:
        """How many printed figures the claim judges over all orders at once (0 for a
        qualitative claim)."""
        if not self.is_figure or self.published is None:
            return 0
        return len(printed_figures(self.published))

    @property
    def mark(self) -> pytest.MarkDecorator:
        """The `claim` marker of this claim's test: it carries this spec to the plugin."""
        return pytest.mark.claim(self)


class ClaimSpecs(Mapping[str, ClaimSpec]):
    """One document's claims by id, in definition order."""

    def __init__(self, specs: Iterable[ClaimSpec] = ()):
        self._specs: dict[str, ClaimSpec] = {}
        for spec in specs:
            self.add(spec)

    def add(self, spec: ClaimSpec, *, replace: bool = False) -> None:
        """Register `spec`; `replace`: a new judge for a claim this registry defines."""
        if spec.id in self._specs and not replace:
            raise ValueError(f"claim id {spec.id!r} is defined twice")
        self._specs[spec.id] = spec

    def __getitem__(self, claim_id: str) -> ClaimSpec:
        try:
            return self._specs[claim_id]
        except KeyError:
            raise KeyError(f"no claim {claim_id!r}; defined: {sorted(self._specs)}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._specs)

    def __len__(self) -> int:
        return len(self._specs)


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
    origin: str = "document"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _nonfinite_at(value: Any, where: str = "") -> str | None:
    """Where the first NaN or infinity sits in `value` (through lists, dicts and arrays),
    else None. Any number counts (a Decimal, a complex, a numpy scalar), and so does one
    too large for a float (10**400), which becomes inf wherever it is judged."""
    if hasattr(value, "__array__") and not isinstance(value, numbers.Number):
        array = np.asarray(value)
        if array.dtype == object:
            for index, item in np.ndenumerate(array):
                found = _nonfinite_at(item, f"{where}[{', '.join(map(str, index))}]")
                if found is not None:
                    return found
        elif array.dtype.kind in "fc":
            bad = np.argwhere(~np.isfinite(array))
            if len(bad):
                return where + (f"[{', '.join(map(str, bad[0]))}]" if array.ndim else "")
        return None
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        try:
            finite = cmath.isfinite(complex(value))
        except (OverflowError, ValueError):  # 10**400; a signalling Decimal NaN
            finite = False
        return None if finite else where
    if isinstance(value, dict | list | tuple):
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            found = _nonfinite_at(item, f"{where}[{key!r}]")
            if found is not None:
                return found
    return None


def _refuse_too_large(claim_id: str, order: str, judgement: Judgement | Measured) -> None:
    """A number judged over orders beyond LARGEST_FIGURE would overflow their spread."""
    values = (
        judgement.measured
        if isinstance(judgement, Measured)
        else tuple(t.value for t in judgement.thresholds)
    )
    for value in values:
        if abs(value) > LARGEST_FIGURE:
            raise ValueError(
                f"{claim_id}: measured {value:g} in order {order!r} is beyond "
                f"±{LARGEST_FIGURE:g}, where its spread over orders overflows a float; "
                "measure it in a larger unit (or its log)"
            )


def _jsonable(value: Any) -> Any:
    """A numpy array or scalar in a record as JSON holds it (an array as a list)."""
    if isinstance(value, np.ndarray | np.generic):
        return value.tolist()
    return float(value)


def _figure_range(judgements: Mapping[str, Judgement | Measured]) -> list[float] | None:
    """[min, max] of a numeric measured figure across orders (None when not one number)."""
    values = [
        j.measured[0] if isinstance(j, Measured) and len(j.measured) == 1 else j.measured
        for j in judgements.values()
    ]
    if all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
        return [float(min(values)), float(max(values))]
    return None


def _order_entry(judgement: Judgement | Measured) -> dict[str, Any]:
    """A claim's figure in one order as audit.json records it: its numbers, with its printed
    form beside them where it carries words (names, text); whether it holds there."""
    measured = as_json(judgement.measured)
    entry: dict[str, Any] = {"measured": measured}
    if not plain_figures(measured) and not isinstance(measured, str):
        entry["printed"] = fmt(judgement.measured)
    if isinstance(judgement, Judgement):
        entry["holds"] = judgement.holds
    return entry


def _refuse_nonfinite(claim_id: str, order: str, judgement: Judgement | Measured) -> None:
    """A NaN compares false with everything, so it would read as "refuted" (and pass quietly
    as a known finding): a non-finite figure is an error of the experiment, not a verdict."""
    parts = ("published", "measured", "details")
    if isinstance(judgement, Judgement):
        parts += ("tolerance",)
    for part in parts:
        where = _nonfinite_at(getattr(judgement, part))
        if where is not None:
            raise ValueError(
                f"{claim_id}: {part}{where} is NaN or infinite in order {order!r}; "
                "the experiment or its input is broken, so there is no verdict"
            )


def _figure_verdict(
    measured: Mapping[str, Measured], scale: str, copies: int
) -> tuple[str, str, dict[str, Any]]:
    """A figure claim over all distinct orders at once: each published figure against its
    prediction interval over the orders, on the figure's scale
    (claim_audit.engine.prediction). Refuted when a figure lies outside its
    interval; else inconclusive when an interval cannot check its figure (or the orders
    collapsed to one copy); else holds."""
    faithful = measured[FAITHFUL]
    columns = np.array([m.measured for m in measured.values()], np.float64)
    verdicts = [
        judge_figure(columns[:, i], printed, scale=scale, copies=copies)
        for i, printed in enumerate(faithful.published)
    ]
    verdict = _worst(v.verdict for v in verdicts)
    tolerance = ", ".join(f"[{fmt(v.low)}, {fmt(v.high)}]" for v in verdicts)
    rule = {
        "rule": f"prediction interval over {len(measured)} distinct orders on the {scale} "
        f"scale, false-refutation rate {FIGURE_ALPHA:g} per figure",
        "figures": [v.to_json() for v in verdicts],
    }
    if len(measured) > 1:
        rule["verdict_shares"] = verdict_shares(
            len(measured), lambda rows: _figures_verdict(columns[rows], faithful.published, scale)
        )
    if any(v.collapsed for v in verdicts):
        rule["collapsed"] = _collapsed_note(copies)
    elif verdict == "inconclusive":
        needed = [v.orders_to_conclude for v in verdicts if not v.conclusive]
        rule["orders_to_conclude"] = None if None in needed else max(needed)  # type: ignore[type-var]
    # Named as a figure checked against a hand-given tolerance names them (claim_audit.report.diff).
    if len(faithful.measured) == 1:
        rule["measured_value"] = faithful.measured[0]
    else:
        rule["measured_values"] = list(faithful.measured)
    return verdict, tolerance, rule


def _worst(verdicts: Iterable[str]) -> str:
    """A figure claim's verdict from its figures': refuted, else inconclusive, else holds."""
    each = set(verdicts)
    return next(v for v in ("refuted", "inconclusive", "holds") if v in each)


def _figures_verdict(columns: np.ndarray, published: Sequence[str], scale: str) -> str:
    """The verdict of figure values [orders, figures] alone (for resampling: no power)."""
    return _worst(
        judge_figure(columns[:, i], printed, scale=scale, power=False).verdict
        for i, printed in enumerate(published)
    )


def _collapsed_note(copies: int) -> str:
    return (
        f"the draws collapsed: {copies + 1} orders gave the same results bit for bit, so "
        "they sample none of the spread of valid computations; neither held nor refuted"
    )


def _threshold_values(judged: Mapping[str, Judgement]) -> np.ndarray:
    """The numbers a threshold claim compares, [orders, thresholds]; the same names in
    every order."""
    names = [t.name for t in judged[FAITHFUL].thresholds]
    for order, judgement in judged.items():
        if [t.name for t in judgement.thresholds] != names:
            raise TypeError(
                f"order {order!r} compares {[t.name for t in judgement.thresholds]}, the "
                f"faithful order {names}: a claim compares the same numbers in every order"
            )
    return np.array([[t.value for t in j.thresholds] for j in judged.values()], np.float64)


def _effects(judged: Mapping[str, Judgement], values: np.ndarray) -> list[dict[str, Any]]:
    """Each threshold value over the orders, against its region, for the record."""
    effects = []
    for i, threshold in enumerate(judged[FAITHFUL].thresholds):
        column = values[:, i]
        effects.append(
            {
                "effect": threshold.name,
                "region": str(threshold.region),
                "scale": threshold.scale,
                "faithful": threshold.value,
                "values": column.tolist(),
                "range": [float(column.min()), float(column.max())],
                "in_region": [int(sum(threshold.region.contains(v) for v in column)), len(column)],
            }
        )
    return effects


def _qualitative_verdict(
    judged: Mapping[str, Judgement], copies: int
) -> tuple[str, str, dict[str, Any]]:
    """A qualitative claim over its distinct orders, each a draw: the share of draws in
    which it holds, bounded from the counts and, for a threshold claim, from the margins of
    the numbers it compares (claim_audit.engine.share). Judged in one order only
    (a claim about the code or the recipe): that order's answer."""
    holds = [j.holds for j in judged.values()]
    k, n = sum(holds), len(holds)
    faithful = judged[FAITHFUL]
    rule: dict[str, Any] = {"holds_in_orders": [k, n]}
    if n == 1 and not copies:
        return verdict_over(dict(zip(judged, holds, strict=True))), fmt(faithful.tolerance), rule
    values = None
    if faithful.thresholds:
        values = _threshold_values(judged)
        rule["effects"] = _effects(judged, values)
    thresholds = faithful.thresholds
    regions, scales = [t.region for t in thresholds], [t.scale for t in thresholds]
    bounds = share_bounds(holds, values, regions, scales, copies)

    def resampled(rows: np.ndarray) -> str:
        picked = None if values is None else values[rows]
        return share_bounds([holds[i] for i in rows], picked, regions, scales, copies).verdict

    rule |= {
        "rule": f"share of {n} distinct draws in which it holds, bounded at "
        f"{1 - SHARE_ALPHA:.0%} from {bounds.method}: holds at >= {HOLDS_AT:g}, refuted at "
        f"<= {REFUTED_AT:g}",
        "share_interval": [bounds.low, bounds.high],
        "share_method": bounds.method,
        "copies": copies,
        "verdict_shares": verdict_shares(n, resampled),
    }
    verdict = bounds.verdict
    if bounds.method == "collapsed":
        rule["collapsed"] = _collapsed_note(copies)
    elif verdict == "inconclusive":
        rule["draws_to_conclude"] = draws_to_conclude(k, n)
    return verdict, fmt(faithful.tolerance), rule


def _check_judgements(claim_id: str, judgements: Mapping[str, Any]) -> None:
    """A judge's results must be Judgements in every order, or Measured figures in every
    order (a rule returning a bool is a bug in the rule)."""
    for name, judgement in judgements.items():
        if not isinstance(judgement, Judgement | Measured):
            raise TypeError(
                f"{claim_id}: its judge returned {type(judgement).__name__} {judgement!r:.60} in "
                f"order {name!r}, not a Judgement (build one with close_to, all_close or "
                "satisfied) nor figures"
            )
    kinds = {type(j) for j in judgements.values()}
    if len(kinds) != 1:
        raise TypeError(
            f"{claim_id}: its judge returned a Judgement in some orders and a Measured in "
            f"others ({sorted(k.__name__ for k in kinds)}); a claim is of one kind"
        )


def decide(
    spec: ClaimSpec,
    judgements: Mapping[str, Judgement | Measured],
    copies: int = 0,
    **extra: Any,
) -> ClaimRecord:
    """The claim's verdict over its judgements in each distinct order (the faithful first);
    `copies`: orders left out as copies of another (bit for bit); `extra`, details recorded
    beside it."""
    _check_judgements(spec.id, judgements)
    for name, judgement in judgements.items():
        _refuse_nonfinite(spec.id, name, judgement)
        _refuse_too_large(spec.id, name, judgement)
    faithful = judgements[FAITHFUL]
    details: dict[str, Any] = {"reading": spec.reading} if spec.reading else {}
    if isinstance(faithful, Measured):
        verdict, tolerance, rule = _figure_verdict(judgements, spec.scale, copies)  # type: ignore[arg-type]
    else:
        verdict, tolerance, rule = _qualitative_verdict(judgements, copies)  # type: ignore[arg-type]
        reasons = sorted({j.inconclusive for j in judgements.values() if j.inconclusive})  # type: ignore[union-attr]
        if reasons:
            verdict, rule["inconclusive"] = "inconclusive", "; ".join(reasons)
    beside = spec.beside() if spec.beside is not None else {}
    details |= {**rule, **faithful.details, **beside, **extra}
    if spec.finding:
        details["finding"] = spec.finding
    if not spec.gates:
        details["gates"] = False
    # Every claim lists its figure per order; one judged once (about the code or the
    # recipe, which no float order changes) lists the faithful order alone.
    details["orders"] = {name: _order_entry(j) for name, j in judgements.items()}
    if len(judgements) > 1:
        spread = _figure_range(judgements)
        if spread is not None:
            details["range_over_orders"] = spread
    return ClaimRecord(
        id=spec.id,
        document=spec.document,
        section=spec.section,
        statement=spec.statement,
        origin=spec.origin,
        published=fmt(faithful.published if spec.published is None else spec.published),
        measured=fmt(faithful.measured),
        tolerance=tolerance,
        verdict=verdict,
        details=details,
    )


def record_property(record: ClaimRecord) -> tuple[str, str]:
    """The test report's user property that carries `record` to the plugin."""
    return PROPERTY, json.dumps(record.to_json(), default=_jsonable)


def conclude(spec: ClaimSpec, record: ClaimRecord) -> None:
    """Pass or fail the claim's test as its verdict says: a refuted claim fails
    (`ClaimRefuted`; a known finding is an expected failure), a finding no longer refuted
    fails (`FindingGone`), any other verdict passes."""
    figures = (
        f"published {record.published}, measured {record.measured}, tolerance {record.tolerance}"
    )
    if record.verdict == "refuted" and spec.gates:
        if spec.finding:
            pytest.xfail(spec.finding)
        raise ClaimRefuted(f"{spec.id}: {figures}: {spec.statement}")
    if record.verdict != "refuted" and spec.finding:
        raise FindingGone(
            f"{spec.id}: recorded as a finding ({spec.finding}), but it is now "
            f"{record.verdict} ({figures}): update the record"
        )
