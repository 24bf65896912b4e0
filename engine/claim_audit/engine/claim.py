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
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any, TypeVar

import numpy as np
import pytest

from .. import cache
from .prediction import FIGURE_ALPHA, FigureVerdict, judge_figure, scale_named
from .share import (
    HOLDS_AT,
    REFUTED_AT,
    SHARE_ALPHA,
    agree,
    count_bounds,
    draws_to_conclude,
    share_bounds,
)
from .verdict import (
    Comparison,
    Judgement,
    Measured,
    SecondReading,
    as_float,
    as_json,
    fmt,
    mean_and_sd,
    printed_figures,
    verdict_shares,
)

FAITHFUL = "faithful"
PROPERTY = "claim_record"
VERDICTS = ("holds", "refuted", "sensitive", "unpinned", "inconclusive", "error")
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
    """Order name -> one experiment's results, `FAITHFUL` first; `digests` tell copies apart.

    `more`, with `budget`: how to compute these orders and more, `budget` in all (a callable
    returning `Orders` that start with these). A claim these orders leave undecided, which
    `budget` orders could decide, is judged again over them (`extended`)."""

    def __init__(
        self,
        results: Mapping[str, R],
        digests: Mapping[str, str] | None = None,
        *,
        more: Callable[[], Orders[R]] | None = None,
        budget: int = 0,
    ):
        super().__init__(results)
        if not self or next(iter(self)) != FAITHFUL:
            raise ValueError(f"the first order must be {FAITHFUL!r}; got {list(self)}")
        if digests is not None and set(digests) != set(self):
            raise ValueError(f"digests name the orders {sorted(digests)}, the results {list(self)}")
        if (more is None) != (budget == 0) or (more is not None and budget <= len(self)):
            raise ValueError(
                f"more and budget come together, budget above the {len(self)} orders given; got budget={budget!r}"
            )
        self.digests: dict[str, str] | None = None if digests is None else dict(digests)
        self.budget = budget
        self._more = more
        self._extended: Orders[R] | None = None

    def extended(self) -> Orders[R]:
        """These orders and the more that `budget` allows, computed once."""
        if self._more is None:
            raise ValueError("these orders were given no way to compute more (`more=`)")
        if self._extended is None:
            extended = self._more()
            if not isinstance(extended, Orders) or list(extended)[: len(self)] != list(self):
                raise ValueError(
                    f"more= must return Orders that start with {list(self)}; got {extended!r}"
                )
            self._extended = extended
        return self._extended

    def copies(self) -> set[str]:
        """The orders whose results repeat an earlier order's bit for bit."""
        digests = list((self.digests or {}).values())
        return {name for i, name in enumerate(self.digests or {}) if digests[i] in digests[:i]}

    @property
    def faithful(self) -> R:
        return self[FAITHFUL]

    def map(self, compute: Callable[[R], S]) -> Orders[S]:
        more = None if self._more is None else (lambda: self.extended().map(compute))
        mapped = {name: compute(value) for name, value in self.items()}
        return Orders(mapped, self.digests, more=more, budget=self.budget)

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
    rule: Comparison | None = None

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
        check(
            self.rule is None or isinstance(self.rule, Comparison),
            f"rule must be the Comparison its body judges, or None; got {self.rule!r:.60}",
        )
        check(
            self.rule is None or self.rule.claim_id in (None, self.id),
            f"its rule is claim {self.rule and self.rule.claim_id}'s already",
        )
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


_WORST_FIRST = ("refuted", "inconclusive", "unpinned", "holds")


def _worst(verdicts: Iterable[str]) -> str:
    """A figure claim's verdict from its figures': refuted, inconclusive, unpinned, holds."""
    return min(verdicts, key=_WORST_FIRST.index)


def _collapsed_note(copies: int) -> str:
    return (
        f"the draws collapsed: {copies + 1} orders gave the same results bit for bit, so "
        "they sample none of the spread of valid computations; neither held nor refuted"
    )


def _figure_verdict(
    measured: Mapping[str, Measured], scale: str, copies: int, alpha: float
) -> tuple[str, str, dict[str, Any]]:
    """A figure claim: each published figure against its prediction interval over orders."""
    faithful = measured[FAITHFUL]
    columns = np.array([m.measured for m in measured.values()], np.float64)
    n = len(measured)

    def judged(rows: Any = slice(None), **kw: Any) -> list[FigureVerdict]:
        figures = enumerate(faithful.published)
        return [
            judge_figure(columns[rows][:, i], p, scale=scale, alpha=alpha, **kw) for i, p in figures
        ]

    verdicts = judged(copies=copies)
    verdict = _worst(v.verdict for v in verdicts)
    rule = {
        "rule": f"prediction interval over {n} distinct draws on the {scale} scale, "
        f"false-refutation rate {alpha:g} per figure at this look",
        "figures": [v.to_json() for v in verdicts],
    }
    if n > 1:
        rule["verdict_shares"] = verdict_shares(
            n,
            lambda rows: _worst(
                v.verdict for v in judged(rows, power=False, copies=copies + n - len(rows))
            ),
        )
    if any(v.collapsed for v in verdicts):
        rule["collapsed"] = _collapsed_note(copies)
    elif verdict == "inconclusive":
        needed = [v.orders_to_conclude for v in verdicts if not v.conclusive and v.pinnable]
        rule["orders_to_conclude"] = None if None in needed else max(needed)  # type: ignore[type-var]
    one = len(faithful.measured) == 1
    rule["measured_value" if one else "measured_values"] = as_json(faithful.measured)
    tolerance = ", ".join(f"[{fmt(v.low)}, {fmt(v.high)}]" for v in verdicts)
    return verdict, tolerance, rule


def shown_share(k: int, n: int, alpha: float = SHARE_ALPHA) -> str:
    """What k of n draws show by their counts alone: "holds in 8 of 8: at least 69% at 95%"."""
    low, high = count_bounds(k, n, alpha)
    bound = f"at least {low:.0%}" if k > n - k else f"at most {high:.0%}"
    return f"holds in {k} of {n} draws: {bound} of valid computations give it, at {1 - alpha:.0%}"


def _qualitative_verdict(
    judged: Mapping[str, Judgement], copies: int, alpha: float
) -> tuple[str, str, dict[str, Any]]:
    """A qualitative claim: the share of distinct orders in which it holds (one: its answer)."""
    holds = [j.holds for j in judged.values()]
    k, n = sum(holds), len(holds)
    faithful = judged[FAITHFUL]
    rule: dict[str, Any] = {"holds_in_orders": [k, n]}
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
    if n == 1 and not copies:  # one draw of a computation no order moves: its answer
        return "holds" if k else "refuted", fmt(faithful.tolerance), rule
    regions, scales = [t.region for t in thresholds], [t.scale for t in thresholds]
    bounds = share_bounds(holds, values, regions, scales, copies, alpha)

    def resampled(rows: np.ndarray) -> str:
        picked = None if values is None else values[rows]
        again = copies + n - len(rows)  # a draw resampled twice is its own copy
        return share_bounds([holds[i] for i in rows], picked, regions, scales, again, alpha).verdict

    rule |= {
        "rule": f"share of {n} distinct draws in which it holds, each bound wrong at most "
        f"{alpha:g} at this look, from {bounds.method}: holds at >= {HOLDS_AT:g}, refuted at "
        f"<= {REFUTED_AT:g}",
        "share_interval": [bounds.low, bounds.high],
        "share_method": bounds.method,
        "copies": copies,
        "verdict_shares": verdict_shares(n, resampled),
        "shown_by_counts": shown_share(k, n),
    }
    if bounds.method == "collapsed":
        rule["collapsed"] = _collapsed_note(copies)
    elif bounds.verdict == "inconclusive":
        rule["draws_to_conclude"] = draws_to_conclude(holds, values, regions, scales, alpha)
    return bounds.verdict, fmt(faithful.tolerance), rule


FACT_RULE = (
    "an identity or a property of the code, judged as one fact: it holds when it holds in "
    "every order computed, and any order where it fails refutes it"
)


def _fact_verdict(judged: Mapping[str, Judgement]) -> tuple[str, str, dict[str, Any]]:
    """An identity or property of the code: holds in every order, else refuted where it fails."""
    for order, judgement in judged.items():
        if not judgement.fact:
            raise TypeError(
                f"order {order!r} returned a judgement that is not a fact(...), the faithful order a fact: a claim is a fact in every order or in none"
            )
    failing = [order for order, judgement in judged.items() if not judgement.holds]
    rule: dict[str, Any] = {
        "holds_in_orders": [len(judged) - len(failing), len(judged)],
        "rule": FACT_RULE,
        "fact": True,
    }
    if failing:
        rule["fails_in_orders"] = failing
    return "refuted" if failing else "holds", fmt(judged[FAITHFUL].tolerance), rule


def _second_readings(
    claim_id: str, judgements: Mapping[str, Judgement | Measured], alpha: float
) -> dict[str, dict[str, Any]]:
    """The second readings returned beside the claim (`second_reading`), each over every
    distinct order: its words and region, its value in each order, in how many it holds, and
    its verdict by the share rule (at `alpha`), shown beside the claim's and never counted."""
    out = {}
    faithful = judgements[FAITHFUL].details
    for name, first in faithful.items():
        if not isinstance(first, SecondReading):
            continue
        values = {}
        for order, judgement in judgements.items():
            mine = judgement.details.get(name)
            if not isinstance(mine, SecondReading) or (mine.reading, mine.region) != (
                first.reading,
                first.region,
            ):
                raise ValueError(
                    f"{claim_id}: its second reading {name!r} is {mine!r:.80} in order {order!r}, {first!r:.80} in the faithful order: every order returns the same reading (words and region)"
                )
            values[order] = mine.value
        holds = [first.region.contains(v) for v in values.values()]
        column = np.array(list(values.values()), np.float64)[:, None]
        judged = share_bounds(holds, column, [first.region], ["linear"], alpha=alpha)
        k = sum(holds)
        out[name] = {
            "reading": first.reading,
            "verdict": judged.verdict if len(values) > 1 else ("holds" if k else "refuted"),
            "share_interval": [judged.low, judged.high],
            "region": str(first.region),
            "faithful": first.value,
            "values": values,
            "range_over_orders": [min(values.values()), max(values.values())],
            "holds_in_orders": [k, len(values)],
        }
    return out


def decide(
    spec: ClaimSpec,
    judgements: Mapping[str, Judgement | Measured],
    copies: int = 0,
    *,
    copies_by_value: int = 0,
    looks: int = 1,
) -> ClaimRecord:
    """The claim's verdict over its judgements per distinct order (`copies`: repeats left out,
    bit for bit; `copies_by_value`: orders left out as equal to float noise; `looks`: how
    many times the claim may be judged, over more draws each time, sharing the error rates)."""
    for name, judgement in judgements.items():
        _refuse_unjudgeable(spec.id, name, judgement)
    faithful = judgements[FAITHFUL]
    details: dict[str, Any] = {"reading": spec.reading} if spec.reading else {}
    if isinstance(faithful, Measured):
        verdict, tolerance, rule = _figure_verdict(
            judgements,  # type: ignore[arg-type]
            spec.scale,
            copies,
            FIGURE_ALPHA / looks,
        )
    elif faithful.fact:
        verdict, tolerance, rule = _fact_verdict(judgements)  # type: ignore[arg-type]
    else:
        verdict, tolerance, rule = _qualitative_verdict(
            judgements,  # type: ignore[arg-type]
            copies,
            SHARE_ALPHA / looks,
        )
        reasons = sorted({j.inconclusive for j in judgements.values() if j.inconclusive})  # type: ignore[union-attr]
        if reasons:
            verdict, rule["inconclusive"] = "inconclusive", "; ".join(reasons)
    if copies_by_value:
        rule["copies_by_value"] = copies_by_value
        for figure_rule in rule.get("figures", ()):
            figure_rule["copies_by_value"] = copies_by_value
    readings = _second_readings(spec.id, judgements, SHARE_ALPHA / looks)
    beside = {k: v for k, v in faithful.details.items() if k not in readings}
    details |= {**rule, **beside, **(spec.beside() if spec.beside else {})}
    if readings:
        details["second_readings"] = readings
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


def _leaves(value: Any) -> list[Any]:
    """The numbers (as floats) and other leaves of `value`, walked in order."""
    if hasattr(value, "tolist") and hasattr(value, "ndim"):  # a numpy array or scalar
        value = value.tolist()
    if is_dataclass(value) and not isinstance(value, type):  # a second reading
        value = asdict(value)
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in (str(key), *_leaves(item))]
    if isinstance(value, list | tuple):
        return [leaf for item in value for leaf in _leaves(item)]
    return [float(value) if _is_number(value) else value]


def _fingerprint(judgement: Judgement | Measured) -> list[Any]:
    """Everything a claim body returned in one order: what it is judged on (its figures or
    compared values, or whether it holds), what it measured and what it recorded beside."""
    if isinstance(judgement, Measured):
        judged: list[Any] = list(judgement.measured)
    else:
        judged = [t.value for t in judgement.thresholds] + [judgement.holds]
    return [*judged, *_leaves(judgement.measured), *_leaves(judgement.details)]


def _same(a: list[Any], b: list[Any]) -> bool:
    """Two fingerprints alike: their numbers agree to float noise, all else is equal."""
    return len(a) == len(b) and all(
        agree(x, y) if isinstance(x, float) and isinstance(y, float) else x == y
        for x, y in zip(a, b, strict=True)
    )


def copies_by_value(judgements: Mapping[str, Judgement | Measured]) -> dict[str, str]:
    """The orders whose claim body returned what an earlier order's returned, every number to
    float noise (FLOAT_NOISE, relative), each with the order it copies, whether or not digests
    said so. A body that returned no number at all is judged on its orders as given."""
    prints = {name: _fingerprint(j) for name, j in judgements.items()}
    if not any(isinstance(leaf, float) for p in prints.values() for leaf in p):
        return {}
    kept: dict[str, list[Any]] = {}
    copies = {}
    for name, found in prints.items():
        original = next((k for k, earlier in kept.items() if _same(found, earlier)), None)
        if original is None:
            kept[name] = found
        else:
            copies[name] = original
    return copies


def _judge_orders(
    spec: ClaimSpec, body: Body, arguments: Mapping[str, Any], looks: int
) -> ClaimRecord:
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
    for name, judgement in judgements.items():
        _refuse_unjudgeable(spec.id, name, judgement)  # before its numbers are compared
    faithful = judgements[FAITHFUL]
    by_value = (
        {} if isinstance(faithful, Judgement) and faithful.fact else copies_by_value(judgements)
    )
    kept = {name: j for name, j in judgements.items() if name not in by_value}
    record = decide(spec, kept, copies=copies, copies_by_value=len(by_value), looks=looks)
    orders = record.details["orders"]
    for name, judgement in judgements.items():  # every order computed, in order, copies marked
        orders[name] = orders.pop(name, None) or {
            **_order_entry(judgement),
            "copy_of": by_value[name],
        }
    return record


def _more_could_decide(record: ClaimRecord, budget: int) -> bool:
    """Whether `budget` orders could decide a claim its first look left undecided."""
    details = record.details
    if record.verdict != "inconclusive" or "collapsed" in details or "inconclusive" in details:
        return False
    needed = details.get("orders_to_conclude", details.get("draws_to_conclude"))
    return needed is not None and needed <= budget


def judge_body(spec: ClaimSpec, body: Body, arguments: Mapping[str, Any]) -> ClaimRecord:
    """Judge the claim over the orders given; where they leave it undecided and the orders
    can be extended to a budget that could decide it, judge it again over the extension. A
    claim that may be judged twice has each look at half the error rates."""
    orders = [value for value in arguments.values() if isinstance(value, Orders)]
    budget = min((o.budget for o in orders), default=0)
    looks = 2 if orders and budget and not spec.once else 1
    record = _judge_orders(spec, body, arguments, looks)
    if looks == 2:
        first = {"orders": len(orders[0]), "verdict": record.verdict, "budget": budget}
        first["extended"] = _more_could_decide(record, budget)
        if first["extended"]:
            extended = {
                k: v.extended() if isinstance(v, Orders) else v for k, v in arguments.items()
            }
            record = _judge_orders(spec, body, extended, looks)
        record.details["first_look"] = first
    return record


def what_failed(details: Mapping[str, Any]) -> list[str]:
    """What refuted a claim, a line each: the published figures outside their intervals, the
    effects outside their regions, else in how many draws the claim held."""
    figures = details.get("figures") or []
    lines = []
    for i, f in enumerate(figures, 1):
        if f.get("verdict") == "refuted":  # its ends to two digits past the published figure's
            digits = len(re.sub(r"[eE].*|[^0-9]", "", f["published"]).lstrip("0")) + 2
            low, high = (f"{end:.{max(6, digits)}g}" for end in f["interval"])
            lines.append(
                f"published {f['published']} lies outside [{low}, {high}] (figure {i} of {len(figures)})"
            )
    for effect in details.get("effects") or []:
        (k, n), (low, high) = effect["in_region"], effect["range"]
        if k < n:
            name = repr(effect["effect"]) if effect["effect"] else "its value"
            spread = f"{low:.6g}" if low == high else f"{low:.6g} to {high:.6g}"
            lines.append(f"{name} lies {effect['region']} in {k} of {n} draws ({spread})")
    if not lines and "holds_in_orders" in details:
        k, n = details["holds_in_orders"]
        lines.append(f"holds in {k} of {n} draws")
    return lines


INPUTS = pytest.StashKey[str | None]()
"""The project's digest of all its claims read (`pytest_claims_audit_inputs`), or None."""


def judged_record(
    spec: ClaimSpec, body: Body, arguments: Mapping[str, Any], inputs: str | None
) -> str:
    """The claim's record as JSON: judged, or where the project gave the digest `inputs` of
    everything its claims read, judged once per digest and read from the cache after. A
    benchmark of this machine (`gates=False`) reads its own cached measurement and is judged
    every run."""

    def judge() -> str:
        return json.dumps(judge_body(spec, body, arguments).to_json(), default=_jsonable)

    if inputs is None or not spec.gates:
        return judge()
    # Pays in a warm audit (scripts/bench.py TARGETS "audit.warm_s"): bodies and judging skipped.
    key = {"inputs": inputs, "engine": cache.package_digest(__package__.split(".")[0])}
    entry = cache.cached(
        f"record-{spec.document}-{spec.id}",
        {**key, "document": spec.document, "claim": spec.id},
        lambda: {"record": np.array(judge())},
        validate=_one_record,
        quiet=True,
    )
    return str(entry.arrays["record"])


def _one_record(arrays: Mapping[str, np.ndarray]) -> None:
    if (
        set(arrays) != {"record"}
        or arrays["record"].shape != ()
        or arrays["record"].dtype.kind != "U"
    ):
        raise ValueError("not one claim record")


def run_claim(
    spec: ClaimSpec,
    body: Body,
    arguments: Mapping[str, Any],
    user_properties: list,
    inputs: str | None = None,
) -> ClaimRecord:
    """What a claim's test does: judge (`judged_record`), record in `user_properties`, then
    fail a refuted claim's test (xfail for a finding), and a finding no longer refuted."""
    text = judged_record(spec, body, arguments, inputs)
    record = ClaimRecord(**json.loads(text))
    user_properties.append((PROPERTY, text))
    figures = (
        f"published {record.published}, measured {record.measured}, tolerance {record.tolerance}"
    )
    if record.verdict == "refuted" and spec.gates:
        if spec.finding:
            pytest.xfail(spec.finding)
        failed = "".join(f"\n  {line}" for line in what_failed(record.details))
        raise ClaimRefuted(f"{spec.id} refuted: {spec.statement}{failed}\n  ({figures})")
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

    def rules(self) -> dict[str, Comparison]:
        """Claim id -> the Comparison its claim was given (`rule=`), with that id, in the
        order the claims are defined: what a robustness sweep re-judges."""
        return {i: spec.rule.for_claim(i) for i, spec in self.items() if spec.rule is not None}

    def _define(
        self, id: str, section: str, statement: str, published: Any = None, **kw: Any
    ) -> ClaimSpec:
        spec = ClaimSpec(id, self.document, section, statement, published, **kw)
        if spec.id in self:
            raise ValueError(f"claim id {spec.id!r} is defined twice")
        if spec.rule is not None and (
            twice := [i for i, other in self.items() if other.rule is spec.rule]
        ):
            raise ValueError(f"claim {spec.id}: its rule is claim {twice[0]}'s already")
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
        inputs = request.config.stash.get(INPUTS, None)
        run_claim(spec_of(request.node), body, arguments, request.node.user_properties, inputs)  # type: ignore[arg-type]

    request_param = inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    named = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params if p.name != "request"]
    test.__signature__ = inspect.Signature([request_param, *named])  # type: ignore[attr-defined]
    return test
