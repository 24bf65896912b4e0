"""Claims defined on their tests (`Claims`), run per float order (`Orders`), decided (`decide`)."""

from __future__ import annotations

import cmath
import functools
import inspect
import json
import math
import numbers
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

import numpy as np
import pytest

from .prediction import FIGURE_ALPHA, FigureVerdict, judge_figure, scale_named
from .share import HOLDS_AT, REFUTED_AT, SHARE_ALPHA, draws_to_conclude, share_bounds
from .verdict import (
    Judgement,
    Measured,
    as_float,
    as_json,
    fmt,
    mean_and_sd,
    printed_figures,
    verdict_shares,
)

FAITHFUL = "faithful"
PROPERTY = "claim_record"
VERDICTS = ("holds", "refuted", "sensitive", "inconclusive", "error")
ORIGINS = ("document", "suite")  # who makes a claim: reports count them apart
SPEC_FIELDS = ("id", "document", "section", "statement", "origin")  # copied into its record
CLAIM_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
LARGEST_FIGURE = 1e150  # judged over orders, its spread squared still fits in a float

R = TypeVar("R")
S = TypeVar("S")
Body = Callable[..., Any]


class ClaimRefuted(AssertionError):
    """The measurement contradicts the published claim in every valid order."""


class FindingGone(AssertionError):
    """A recorded finding no longer reproduces: the claim is not refuted."""


class Orders(dict[str, R]):
    """Order name -> one experiment's results, `FAITHFUL` first; `digests` tell copies apart."""

    def __init__(self, results: Mapping[str, R], digests: Mapping[str, str] | None = None):
        super().__init__(results)
        if not self or next(iter(self)) != FAITHFUL:
            raise ValueError(f"the first order must be {FAITHFUL!r}; got {list(self)}")
        if digests is not None and set(digests) != set(self):
            raise ValueError(f"digests name the orders {sorted(digests)}, the results {list(self)}")
        self.digests: dict[str, str] | None = None if digests is None else dict(digests)

    def copies(self) -> set[str]:
        """The orders whose results repeat an earlier order's bit for bit."""
        digests = list((self.digests or {}).values())
        return {name for i, name in enumerate(self.digests or {}) if digests[i] in digests[:i]}

    @property
    def faithful(self) -> R:
        return self[FAITHFUL]

    def map(self, compute: Callable[[R], S]) -> Orders[S]:
        return Orders({name: compute(value) for name, value in self.items()}, self.digests)

    def __repr__(self) -> str:
        return f"Orders({list(self)})"


@dataclass(frozen=True)
class ClaimSpec:
    """One claim, defined once (docs/ADDING_A_DOCUMENT.md describes each field)."""

    id: str
    document: str
    section: str
    statement: str
    published: str | tuple[str, ...] | None
    reading: str | None = None
    finding: str | None = None
    once: bool = False
    beside: Callable[[], dict[str, Any]] | None = None
    origin: str = "document"
    gates: bool = True
    scale: str = "linear"

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not CLAIM_ID.fullmatch(self.id):
            raise ValueError(
                f"claim id {self.id!r} is not an identifier: letters, digits, '.', '_' and '-', starting with a letter or digit"
            )

        def check(ok: Any, problem: str) -> None:
            if not ok:
                raise ValueError(f"claim {self.id}: {problem}")

        for name in ("document", "section", "statement"):
            text = getattr(self, name)
            check(isinstance(text, str) and text.strip(), f"{name} must be a non-empty string")
        finding_ok = self.finding is None or (isinstance(self.finding, str) and self.finding)
        check(finding_ok, "finding must be a non-empty string or None")
        check(isinstance(self.gates, bool), f"gates must be True or False; got {self.gates!r}")
        check(self.gates or not self.finding, "a claim that never gates the run carries no finding")
        check(self.origin in ORIGINS, f"origin must be one of {ORIGINS}; got {self.origin!r}")
        parts = self.published if isinstance(self.published, tuple) else (self.published,)
        check(
            self.published is None or (parts and all(isinstance(p, str) and p for p in parts)),
            f"published must be the figure as printed (a string, or a tuple of them) or None; "
            f"got {self.published!r}",
        )
        scale_named(self.scale)  # a ValueError names the known scales
        check(not (self.figure_count and self.once), "a figure claim is judged over every order")
        for printed in printed_figures(self.published) if self.figure_count else ():  # type: ignore[arg-type]
            check(  # "1e309" parses as inf
                abs(float(printed)) <= LARGEST_FIGURE,
                f"published figure {printed!r} is not finite or too large: the engine judges "
                f"figures up to ±{LARGEST_FIGURE:g}",
            )

    @property
    def figure_count(self) -> int:
        """How many printed figures the claim judges (0 for a qualitative claim)."""
        try:
            figures = printed_figures(self.published) if self.published is not None else ()
            return len([float(p) for p in figures])
        except ValueError:
            return 0


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


@dataclass(frozen=True)
class Figures:
    """A figure claim's figures in one order and details beside them (`ddof`: over seeds)."""

    values: tuple[Any, ...]
    details: dict[str, Any]
    ddof: int | None = None


def figure(value: float | Sequence[float], **details: Any) -> Figures:
    """A figure (or one per published figure) and `details` recorded beside it."""
    values = (value,) if _is_number(value) else tuple(value)  # type: ignore[arg-type]
    if not values or not all(_is_number(v) for v in values):
        raise TypeError(f"figure(...) takes a number or a sequence of numbers; got {value!r:.60}")
    return Figures(values, details)


def over_seeds(values: Iterable[float], *, ddof: int) -> Figures:
    """A figure's values over seeds: their mean is judged, and their sd ("6.20 ± 1.13")."""
    values = tuple(as_float(v, "over_seeds(...) was given") for v in values)
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 (population sd) or 1 (sample sd); got {ddof!r}")
    if len(values) <= ddof:
        raise ValueError(f"an sd with ddof={ddof} needs more than {ddof} seeds; got {values}")
    return Figures(values, {"per_seed": list(values), "sd_ddof": ddof}, ddof)


def _is_number(value: Any) -> bool:
    """A real number, or a 0-d numpy array of one."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.dtype.kind in "iuf"
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _as_judgement(spec: ClaimSpec, order: str, value: Any) -> Judgement | Measured:
    """What a claim body returned in `order`, as the engine judges it."""
    claim_id, published, figures = spec.id, spec.published, bool(spec.figure_count)
    kind = f"figures: a number (or one per published figure: {spec.figure_count}), over_seeds(...)"
    kind = kind if figures else "a Judgement (satisfied, within, a comparison's)"

    def wrong_kind() -> TypeError:
        return TypeError(
            f"{claim_id}: its body returned {type(value).__name__} {value!r:.60} in order {order!r}; with published {published!r} it returns {kind}"
        )

    if figures == isinstance(value, Judgement):
        raise wrong_kind()
    if isinstance(value, Judgement):
        return value
    if isinstance(value, Figures) and value.ddof is not None:  # over_seeds: a mean (± its sd)
        if not isinstance(published, str):
            raise ValueError(
                f"{claim_id}: over_seeds figures are published as one mean ('6.20') or a mean and its sd ('6.20 ± 1.13'); got {published!r}"
            )
        x, pair = np.asarray(value.values, dtype=np.float64), mean_and_sd(published)
        mean = (float(x.mean()),)
        measured = mean if pair is None else (*mean, float(x.std(ddof=value.ddof)))
        return Measured(pair or (published,), measured, dict(value.details))
    if isinstance(published, str) and mean_and_sd(published):
        raise ValueError(
            f"{claim_id}: published {published!r} is a mean and its sd over seeds; return over_seeds(values, ddof=...)"
        )
    printed = printed_figures(published)  # type: ignore[arg-type]
    if not isinstance(value, Figures):
        try:
            value = figure(value)
        except TypeError:
            raise wrong_kind() from None
    if len(value.values) != len(printed):
        raise ValueError(
            f"{claim_id}: {len(value.values)} figures measured, {len(printed)} published"
        )
    measured = tuple(as_float(v, f"{claim_id}: its body returned the figure") for v in value.values)
    return Measured(printed, measured, dict(value.details))


def _nonfinite_at(value: Any, where: str = "") -> str | None:
    """Where the first NaN or infinity (or number too large for a float) sits in `value`."""
    if hasattr(value, "__array__") and not isinstance(value, numbers.Number):
        value = np.asarray(value).tolist()  # nested lists; a 0-d array's number
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        try:
            return None if cmath.isfinite(complex(value)) else where
        except (OverflowError, ValueError):  # 10**400; a signalling Decimal NaN
            return where
    if not isinstance(value, dict | list | tuple):
        return None
    pairs = value.items() if isinstance(value, dict) else enumerate(value)
    found = (_nonfinite_at(item, f"{where}[{key!r}]") for key, item in pairs)
    return next((f for f in found if f is not None), None)


def _refuse_unjudgeable(claim_id: str, order: str, judgement: Judgement | Measured) -> None:
    """A NaN (it would read as refuted) or a figure past LARGEST_FIGURE is no verdict."""
    figures = isinstance(judgement, Measured)
    for part in ("published", "measured", "details", *(() if figures else ("tolerance",))):
        where = _nonfinite_at(getattr(judgement, part))
        if where is not None:
            raise ValueError(
                f"{claim_id}: {part}{where} is NaN or infinite in order {order!r}; the experiment or its input is broken, so there is no verdict"
            )
    for threshold in () if figures else judgement.thresholds:  # within(...)'s, a Comparison's
        if not math.isfinite(threshold.value):
            raise ValueError(
                f"{claim_id}: the value compared, {threshold.name or 'its effect'} = {threshold.value}, is NaN or infinite in order {order!r}; the experiment or its input is broken, so there is no verdict"
            )
    for value in judgement.measured if figures else [t.value for t in judgement.thresholds]:
        if abs(value) > LARGEST_FIGURE:
            raise ValueError(
                f"{claim_id}: measured {value:g} in order {order!r} is beyond ±{LARGEST_FIGURE:g}, where its spread over orders overflows a float; measure it in a larger unit (or its log)"
            )


def _order_entry(judgement: Judgement | Measured) -> dict[str, Any]:
    """A claim's figure in one order as audit.json records it."""
    measured = as_json(judgement.measured)
    entry: dict[str, Any] = {"measured": measured}
    listed = measured if isinstance(measured, list) else [measured]
    if not isinstance(measured, str) and not all(map(_is_number, listed)):
        entry["printed"] = fmt(judgement.measured)
    if isinstance(judgement, Judgement):
        entry["holds"] = judgement.holds
    return entry


def _worst(verdicts: Iterable[str]) -> str:
    """A figure claim's verdict from its figures': refuted, else inconclusive, else holds."""
    return min(verdicts, key=("refuted", "inconclusive", "holds").index)


def _collapsed_note(copies: int) -> str:
    return (
        f"the draws collapsed: {copies + 1} orders gave the same results bit for bit, so "
        "they sample none of the spread of valid computations; neither held nor refuted"
    )


def _figure_verdict(
    measured: Mapping[str, Measured], scale: str, copies: int
) -> tuple[str, str, dict[str, Any]]:
    """A figure claim: each published figure against its prediction interval over orders."""
    faithful = measured[FAITHFUL]
    columns = np.array([m.measured for m in measured.values()], np.float64)

    def judged(rows: Any = slice(None), **kw: Any) -> list[FigureVerdict]:
        figures = enumerate(faithful.published)
        return [judge_figure(columns[rows][:, i], p, scale=scale, **kw) for i, p in figures]

    verdicts = judged(copies=copies)
    verdict = _worst(v.verdict for v in verdicts)
    rule = {
        "rule": f"prediction interval over {len(measured)} distinct orders on the {scale} "
        f"scale, false-refutation rate {FIGURE_ALPHA:g} per figure",
        "figures": [v.to_json() for v in verdicts],
    }
    if len(measured) > 1:
        rule["verdict_shares"] = verdict_shares(
            len(measured), lambda rows: _worst(v.verdict for v in judged(rows, power=False))
        )
    if any(v.collapsed for v in verdicts):
        rule["collapsed"] = _collapsed_note(copies)
    elif verdict == "inconclusive":
        needed = [v.orders_to_conclude for v in verdicts if not v.conclusive]
        rule["orders_to_conclude"] = None if None in needed else max(needed)  # type: ignore[type-var]
    one = len(faithful.measured) == 1
    rule["measured_value" if one else "measured_values"] = as_json(faithful.measured)
    tolerance = ", ".join(f"[{fmt(v.low)}, {fmt(v.high)}]" for v in verdicts)
    return verdict, tolerance, rule


def _qualitative_verdict(
    judged: Mapping[str, Judgement], copies: int
) -> tuple[str, str, dict[str, Any]]:
    """A qualitative claim: the share of distinct orders in which it holds (one: its answer)."""
    holds = [j.holds for j in judged.values()]
    k, n = sum(holds), len(holds)
    faithful = judged[FAITHFUL]
    rule: dict[str, Any] = {"holds_in_orders": [k, n]}
    if n == 1 and not copies:
        return "holds" if k else "refuted", fmt(faithful.tolerance), rule
    thresholds = faithful.thresholds
    values = None
    if thresholds:
        names = [t.name for t in thresholds]
        for order, judgement in judged.items():
            if [t.name for t in judgement.thresholds] != names:
                raise TypeError(
                    f"order {order!r} compares {[t.name for t in judgement.thresholds]}, the faithful order {names}: a claim compares the same numbers in every order"
                )
        values = np.array([[t.value for t in j.thresholds] for j in judged.values()], np.float64)
        rule["effects"] = [
            {
                "effect": t.name,
                "region": str(t.region),
                "scale": t.scale,
                "faithful": t.value,
                "values": values[:, i].tolist(),
                "range": [float(values[:, i].min()), float(values[:, i].max())],
                "in_region": [int(sum(t.region.contains(v) for v in values[:, i])), n],
            }
            for i, t in enumerate(thresholds)
        ]
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
    if bounds.method == "collapsed":
        rule["collapsed"] = _collapsed_note(copies)
    elif bounds.verdict == "inconclusive":
        rule["draws_to_conclude"] = draws_to_conclude(k, n)
    return bounds.verdict, fmt(faithful.tolerance), rule


def decide(
    spec: ClaimSpec, judgements: Mapping[str, Judgement | Measured], copies: int = 0
) -> ClaimRecord:
    """The claim's verdict over its judgements per distinct order (`copies`: repeats left out)."""
    for name, judgement in judgements.items():
        _refuse_unjudgeable(spec.id, name, judgement)
    faithful = judgements[FAITHFUL]
    details: dict[str, Any] = {"reading": spec.reading} if spec.reading else {}
    if isinstance(faithful, Measured):
        verdict, tolerance, rule = _figure_verdict(judgements, spec.scale, copies)  # type: ignore[arg-type]
    else:
        verdict, tolerance, rule = _qualitative_verdict(judgements, copies)  # type: ignore[arg-type]
        reasons = sorted({j.inconclusive for j in judgements.values() if j.inconclusive})  # type: ignore[union-attr]
        if reasons:
            verdict, rule["inconclusive"] = "inconclusive", "; ".join(reasons)
    details |= {**rule, **faithful.details, **(spec.beside() if spec.beside else {})}
    if spec.finding:
        details["finding"] = spec.finding
    if not spec.gates:
        details["gates"] = False
    details["orders"] = {name: _order_entry(j) for name, j in judgements.items()}
    if len(judgements) > 1:
        values = [entry["measured"] for entry in details["orders"].values()]
        if all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
            details["range_over_orders"] = [float(min(values)), float(max(values))]
    return ClaimRecord(
        **{name: getattr(spec, name) for name in SPEC_FIELDS},
        published=fmt(faithful.published if spec.published is None else spec.published),
        measured=fmt(faithful.measured),
        tolerance=tolerance,
        verdict=verdict,
        details=details,
    )


def _jsonable(value: Any) -> Any:
    return value.tolist() if isinstance(value, np.ndarray | np.generic) else float(value)


def judge_body(spec: ClaimSpec, body: Body, arguments: Mapping[str, Any]) -> ClaimRecord:
    """Run `body` once per distinct order of its `Orders` arguments and decide the claim."""
    orders = {name: value for name, value in arguments.items() if isinstance(value, Orders)}
    names, copies = [FAITHFUL], 0
    if orders and not spec.once:
        names = list(next(iter(orders.values())))
        if differ := {k: list(v) for k, v in orders.items() if list(v) != names}:
            raise ValueError(
                f"{spec.id}: its Orders arguments name different orders: {names} and {differ}"
            )
        repeated = set.intersection(*(o.copies() for o in orders.values()))
        copies = len(repeated)
        names = [name for name in names if name not in repeated]
    judgements = {
        name: _as_judgement(
            spec, name, body(**{k: v[name] if k in orders else v for k, v in arguments.items()})
        )
        for name in names
    }
    return decide(spec, judgements, copies=copies)


def run_claim(
    spec: ClaimSpec, body: Body, arguments: Mapping[str, Any], user_properties: list
) -> ClaimRecord:
    """What a claim's test does: judge, record in `user_properties`, then fail a refuted
    claim's test (xfail for a finding), and a finding no longer refuted."""
    record = judge_body(spec, body, arguments)
    user_properties.append((PROPERTY, json.dumps(record.to_json(), default=_jsonable)))
    figures = (
        f"published {record.published}, measured {record.measured}, tolerance {record.tolerance}"
    )
    if record.verdict == "refuted" and spec.gates:
        if spec.finding:
            pytest.xfail(spec.finding)
        raise ClaimRefuted(f"{spec.id}: {figures}: {spec.statement}")
    if record.verdict != "refuted" and spec.finding:
        raise FindingGone(
            f"{spec.id}: recorded as a finding ({spec.finding}), but it is now {record.verdict} ({figures}): update the record"
        )
    return record


class Claims(dict[str, ClaimSpec]):
    """One document's claims by id, each on its test (`claims(...)`) or a case (`each`)."""

    def __init__(self, document: str):
        super().__init__()
        self.document = document

    def __missing__(self, claim_id: str) -> ClaimSpec:
        raise KeyError(f"no claim {claim_id!r}; defined: {sorted(self)}")

    def __call__(self, id: str, section: str, statement: str, **kw: Any) -> Callable[[Body], Body]:
        """Define the claim `id` on the decorated body (`kw`: `published` and `ClaimSpec`'s)."""

        def decorate(body: Body) -> Body:
            spec = self._define(id, section, statement, **kw)
            return pytest.mark.claim(spec)(_claim_test(body))

        return decorate

    def case(self, id: str, section: str, statement: str, *values: Any, **kw: Any) -> Any:
        """One case of a parametrized claim test (`each`), named after its claim id."""
        spec = self._define(id, section, statement, **kw)
        return pytest.param(*values, marks=pytest.mark.claim(spec), id=id)

    def each(self, argnames: str | Sequence[str], cases: Sequence[Any]) -> Callable[[Body], Body]:
        """Parametrize the decorated body over `cases` (`case(...)`), each its own claim."""

        def decorate(body: Body) -> Body:
            for case in cases:
                if len([m for m in case.marks if m.name == "claim"]) != 1:
                    raise ValueError(f"{body.__name__}: each case is a claims.case(...)")
            return pytest.mark.parametrize(argnames, cases)(_claim_test(body))

        return decorate

    def _define(
        self, id: str, section: str, statement: str, published: Any = None, **kw: Any
    ) -> ClaimSpec:
        spec = ClaimSpec(id, self.document, section, statement, published, **kw)
        if spec.id in self:
            raise ValueError(f"claim id {spec.id!r} is defined twice")
        self[spec.id] = spec
        return spec


def spec_of(item: pytest.Item) -> ClaimSpec | None:
    """The claim a collected test judges (its `claim` marker's spec), if it is a claim's."""
    marker = item.get_closest_marker("claim")
    return marker.args[0] if marker is not None and marker.args else None


def _claim_test(body: Body) -> Body:
    """The test pytest runs for a claim body (its marker's spec), asking for its fixtures."""
    params = list(inspect.signature(body).parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        raise ValueError(f"{body.__name__}: a claim body names each fixture it reads")
    wants_request = any(p.name == "request" for p in params)

    @functools.wraps(body)
    def test(request: pytest.FixtureRequest, **arguments: Any) -> None:
        if wants_request:
            arguments["request"] = request
        run_claim(spec_of(request.node), body, arguments, request.node.user_properties)  # type: ignore[arg-type]

    request_param = inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    named = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params if p.name != "request"]
    test.__signature__ = inspect.Signature([request_param, *named])  # type: ignore[attr-defined]
    return test
