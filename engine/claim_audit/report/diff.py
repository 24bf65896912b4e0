"""Compare two audit.json files: which verdicts, figures and run metadata moved.

`python -m claim_audit.report diff OLD.json NEW.json` prints the claims whose verdict
changed or that one file lacks; the figures a verdict rests on (audit.json holds them as
numbers) that moved beyond their tolerance, derived from the old record (`figures`); the
definitions (published figure, tolerance, reading, region, expectation, statement, document,
section) and the run metadata that changed (creation time, wall time and cache activity
aside). A draw that moved FOLD-fold or more, or changed sign, beyond the range of both
runs' orders is moved whatever its tolerance. Figures in one order are compared for the
orders both runs computed: more orders (`--orders`) move the metadata, not the figures.

Exit status, the gate CI reads: 0 nothing moved; 1 a verdict changed, a claim appeared or
disappeared, a figure became NaN or infinite or disappeared, or `expected_to_hold` flipped;
2 an input is unreadable or not an audit of this schema (one line on stderr); 3 no verdict
moved but a figure moved beyond its tolerance, or a figure's words changed (`--verdicts-only`
makes it 0).
"""

from __future__ import annotations

import json
import math
import numbers
import os
import shlex
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scipy import stats

from ..engine.prediction import FIGURE_ALPHA, half_unit
from ..render.documents import SCHEMA_VERSION

# What defines a claim beside its verdict, compared as recorded.
DEFINITION = ("published", "tolerance", "expected_to_hold", "statement", "document", "section")
FOLD = 2.0
"""A draw that moved this many times over (or changed sign), beyond every order's range in
both runs, is moved whatever its tolerance."""
VOLATILE_METADATA = ("created_unix", "wall_s", "cache")  # differs between any two runs
MAX_INT_DIGITS = 20  # an audit's integers are counts; more digits would overflow a float
SHOWN_CHARS = 200  # a metadata value longer than this is printed cut


class AuditFileError(ValueError):
    """A file given to diff cannot be read or does not hold an audit."""


@dataclass(frozen=True)
class Figure:
    """One figure a verdict rests on: its name in `details`, its value and tolerance.

    value: a number; or a text (a figure's words, an effect's name), compared exactly.
    tolerance: how far the number may move (see `figures`); None when there is none.
    text: for a figure in one order, how it is printed; its numbers are `within` its name.
    order: the float order of a figure in one order (compared only when both runs have it).
    span: for a draw, the range of its run's orders, (low, high), which `FOLD` judges by.
    per_count: it depends on how many orders the run computed (compared only when both
      computed as many).
    """

    name: str
    value: float | str
    tolerance: float | None
    text: str | None = None
    within: str | None = None
    order: str | None = None
    span: tuple[float, float] | None = None
    per_count: bool = False


@dataclass(frozen=True)
class Moved:
    claim_id: str
    figure: str
    old: float | str
    new: float | str
    tolerance: float | None  # None for a text, which any change moves
    fold: float | None = None  # how many times over a draw moved, when FOLD judged it


@dataclass
class AuditDiff:
    """What changed from an old audit to a new one."""

    verdicts: list[tuple[dict, dict]] = field(default_factory=list)  # (old claim, new claim)
    only_old: list[dict] = field(default_factory=list)
    only_new: list[dict] = field(default_factory=list)
    moved: list[Moved] = field(default_factory=list)  # beyond the tolerance
    lost: list[tuple[str, str, str]] = field(default_factory=list)  # id, figure, what happened
    changed_untoleranced: list[Moved] = field(default_factory=list)  # no tolerance to judge by
    figures_only_in_one: list[tuple[str, str, str]] = field(default_factory=list)  # id, fig, side
    definitions: list[tuple[str, str, Any, Any]] = field(default_factory=list)  # id, key, old, new
    orders: list[tuple[str, int, int]] = field(default_factory=list)  # id, old count, new count
    metadata: list[tuple[str, Any, Any]] = field(default_factory=list)

    @property
    def verdicts_moved(self) -> bool:
        return bool(self.verdicts or self.only_old or self.only_new)

    @property
    def gate_fails(self) -> bool:
        """A verdict moved, a figure was lost, or an expectation flipped: exit 1."""
        flipped = any(key == "expected_to_hold" for _, key, _, _ in self.definitions)
        return self.verdicts_moved or bool(self.lost) or flipped

    @property
    def figures_moved(self) -> bool:
        return bool(self.moved)


def load(path: str | Path) -> dict:
    """Read an audit.json, checking the parts diff relies on.

    Raises:
      AuditFileError: the file is missing, unreadable, not JSON, of another schema_version,
        or not an audit (no `claims` list of objects with string `id` and `verdict`, an id
        used twice, `metadata` not an object).
    """
    path = Path(path)
    where = f"{path} is not an audit.json"
    try:
        audit = json.loads(path.read_text(encoding="utf-8"), parse_int=_bounded_int)
    except OSError as error:
        raise AuditFileError(f"cannot read {path}: {error.strerror or error}") from error
    except RecursionError:
        raise AuditFileError(f"{where}: it nests deeper than JSON can be read") from None
    except _TooLong as error:
        raise AuditFileError(f"{where}: {error}") from None
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise AuditFileError(f"{path} is not JSON ({error})") from error
    if not isinstance(audit, dict) or not isinstance(audit.get("claims"), list):
        raise AuditFileError(f"{where}: it has no 'claims' list")
    version = audit.get("schema_version", SCHEMA_VERSION)
    if not (type(version) is int and version == SCHEMA_VERSION):
        raise AuditFileError(
            f"{path}: schema_version {_cut(json.dumps(version))} is not one this diff reads "
            f"({SCHEMA_VERSION}); compare it with the code that wrote it"
        )
    seen: set[str] = set()
    for i, claim in enumerate(audit["claims"]):
        if not isinstance(claim, dict):
            raise AuditFileError(f"{where}: claims[{i}] is not an object")
        for key in ("id", "verdict"):
            if not isinstance(claim.get(key), str):
                raise AuditFileError(f"{where}: claims[{i}] has no string {key!r}")
        if claim["id"] in seen:
            raise AuditFileError(f"{where}: claim id {claim['id']!r} appears twice")
        seen.add(claim["id"])
    if not isinstance(audit.get("metadata", {}), dict):
        raise AuditFileError(f"{where}: 'metadata' is not an object")
    return audit


class _TooLong(ValueError):
    pass


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _TooLong(f"it holds an integer of {len(text.lstrip('-'))} digits")
    return int(text)


# --------------------------------------------------------------------------- figures


def tolerances(text: Any) -> list[float] | None:
    """The numbers of a tolerance as recorded ("± 0.36", "± 0.1, 0.2"); None if it has none."""
    if not isinstance(text, str) or not text.strip().startswith("±"):
        return None
    try:
        values = [float(part) for part in text.strip()[1:].split(",")]
    except ValueError:
        return None
    return values if all(math.isfinite(v) and v >= 0 for v in values) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _leaves(value: Any, name: str, index: int | None = None):
    """(name, index in the innermost list or None, leaf) for every leaf of `value`."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{name}[{i}]", i)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{name}.{key}", index)
    else:
        yield name, index, float(value) if _is_number(value) else value


def draw_gap(sd: float, n_orders: int) -> float:
    """How far apart two valid draws of a figure may lie, judged from `n_orders` draws of sd
    `sd`: t_{n-1}(1 - FIGURE_ALPHA / 2) sd sqrt(2) (0 with one order). Two draws of
    N(mu, sigma^2) differ by N(0, 2 sigma^2), and over s sqrt(2) that is Student t with n - 1
    degrees of freedom: a valid redraw moves further with probability FIGURE_ALPHA."""
    if n_orders < 2 or sd == 0:
        return 0.0
    return float(stats.t.ppf(1 - FIGURE_ALPHA / 2, n_orders - 1)) * sd * math.sqrt(2)


def _spread_gap(values: list[float]) -> float | None:
    """The gap of two draws, the draws given; None when they are not all finite numbers."""
    if not values or not all(_is_number(v) and math.isfinite(v) for v in values):
        return None
    try:
        return draw_gap(statistics.stdev(values) if len(values) > 1 else 0.0, len(values))
    except OverflowError:  # a spread beyond float64: nothing to judge by
        return None


def _figure_rule_gaps(published: Any) -> list[float] | None:
    """A figure claim's tolerance per published figure (`details.figures[i]`): the gap of
    two draws over its orders plus half a unit of the figure as published."""
    if not isinstance(published, list) or not published:
        return None
    gaps = []
    for figure in published:
        if not isinstance(figure, dict):
            return None
        sd, n = figure.get("sd_over_orders"), figure.get("orders")
        if not (_is_number(sd) and math.isfinite(sd) and sd >= 0 and _is_number(n) and n >= 1):
            return None
        try:
            gaps.append(draw_gap(sd, int(n)) + half_unit(figure.get("published")))
        except (AttributeError, ValueError, OverflowError):
            return None
    return gaps


def _at(gaps: list[float] | None, index: int | None, count: int | None = None) -> float | None:
    """The tolerance of the figure at `index` of `count`: one tolerance serves every figure."""
    if gaps is None:
        return None
    if len(gaps) == 1:
        return gaps[0]
    if index is not None and index < len(gaps) and count in (None, len(gaps)):
        return gaps[index]
    return None


def _span(value: Any) -> tuple[float, float] | None:
    """A recorded range [low, high] of finite numbers, else None."""
    if isinstance(value, list) and len(value) == 2 and all(_is_number(v) for v in value):
        low, high = float(value[0]), float(value[1])
        return (low, high) if math.isfinite(low) and math.isfinite(high) else None
    return None


def _shape(value: Any) -> str:
    """A figure's words: its structure and text with its numbers blanked, as JSON."""

    def blank(item: Any) -> Any:
        if isinstance(item, list):
            return [blank(v) for v in item]
        if isinstance(item, dict):
            return {k: blank(v) for k, v in item.items()}
        return None if _is_number(item) else item

    return json.dumps(blank(value))


def _per_order(orders: dict, gaps: list[float] | None) -> dict[str, Figure]:
    """Each order's figure (`details.orders[name].measured`): its words, compared exactly,
    and each number, with the claim's tolerance where it has one, else the gap of two draws
    over the same number in the orders of the same words."""
    entries = {o: e.get("measured") for o, e in orders.items() if isinstance(e, dict)}
    columns: dict[tuple[str, str], list[Any]] = {}
    for measured in entries.values():
        for name, _, leaf in _leaves(measured, ""):
            columns.setdefault((_shape(measured), name), []).append(leaf)
    out: dict[str, Figure] = {}
    for order, measured in entries.items():
        whole = f"orders.{order}"
        printed = orders[order].get("printed") or (
            measured if isinstance(measured, str) else json.dumps(measured)
        )
        out[whole] = Figure(whole, _shape(measured), 0.0, text=printed, order=order)
        count = len(measured) if isinstance(measured, list) else None
        for name, index, leaf in _leaves(measured, ""):
            if not _is_number(leaf):
                continue
            column = columns[_shape(measured), name]
            tolerance = _at(gaps, index, count)
            tolerance = _spread_gap(column) if tolerance is None else tolerance
            finite = [v for v in column if math.isfinite(v)]
            span = (min(finite), max(finite)) if finite else None
            number = f"{whole}.measured{name}"
            out[number] = Figure(number, leaf, tolerance, within=whole, order=order, span=span)
    return out


def _published(published: Any, gaps: list[float] | None) -> dict[str, Figure]:
    """A figure claim's prediction intervals (`details.figures[i]`): both ends, with the
    figure's tolerance, and the number of orders (a count: exactly)."""
    out: dict[str, Figure] = {}
    for i, figure in enumerate(published if isinstance(published, list) else []):
        if not isinstance(figure, dict):
            continue
        interval = figure.get("interval")
        if isinstance(interval, list) and len(interval) == 2:
            for name, _, value in _leaves(interval, f"figures[{i}].interval"):
                if _is_number(value):
                    out[name] = Figure(name, value, _at(gaps, i, len(published)), per_count=True)
        if _is_number(figure.get("orders")):
            name = f"figures[{i}].orders"
            out[name] = Figure(name, figure["orders"], 0.0, per_count=True)
    return out


def _effects(effects: Any, orders: list[str]) -> dict[str, Figure]:
    """A threshold claim's effects (`details.effects[i]`): its name, exactly; its faithful
    figure and one per order (`values`, in the order of `orders`), with the gap of two
    draws over `values` as tolerance and their `range` as span."""
    out: dict[str, Figure] = {}
    for i, effect in enumerate(effects if isinstance(effects, list) else []):
        if not isinstance(effect, dict):
            continue
        if isinstance(effect.get("effect"), str):
            out[f"effects[{i}].effect"] = Figure(f"effects[{i}].effect", effect["effect"], 0.0)
        values = effect.get("values") if isinstance(effect.get("values"), list) else []
        gap, span = _spread_gap(values), _span(effect.get("range"))
        if _is_number(effect.get("faithful")):
            name = f"effects[{i}].faithful"
            out[name] = Figure(name, float(effect["faithful"]), gap, span=span)
        for j, value in enumerate(values):
            if _is_number(value):
                name, order = f"effects[{i}].values[{j}]", orders[j] if len(values) == len(orders) else f"#{j}"  # fmt: skip
                out[name] = Figure(name, float(value), gap, order=order, span=span)
    return out


def figures(claim: dict) -> dict[str, Figure]:
    """The figures a claim's verdict rests on, each with its tolerance: a hand-given one
    ("± 0.36"); for a figure claim, the gap of two draws over its orders plus the published
    figure's half unit (`measured_value(s)`, each order's figure, the prediction intervals'
    ends and count); for a qualitative claim, each order's figure (`_per_order`) and its
    effects (`_effects`). Other details never change a verdict and are not compared."""
    details = claim.get("details")
    if not isinstance(details, dict):
        return {}
    gaps = tolerances(claim.get("tolerance")) or _figure_rule_gaps(details.get("figures"))
    span = _span(details.get("range_over_orders"))
    out: dict[str, Figure] = {}
    for key in ("measured_value", "measured_values"):
        for name, index, value in _leaves(details.get(key), key):
            if _is_number(value):
                out[name] = Figure(name, value, _at(gaps, index), span=span if index is None else None)  # fmt: skip
    out |= _published(details.get("figures"), gaps)
    out |= _effects(details.get("effects"), order_names(claim))
    orders = details.get("orders")
    return out | (_per_order(orders, gaps) if isinstance(orders, dict) else {})


def order_names(claim: dict) -> list[str]:
    """The float orders a claim was judged in (`details.orders`), the faithful first."""
    details = claim.get("details")
    orders = details.get("orders") if isinstance(details, dict) else None
    return list(orders) if isinstance(orders, dict) else []


def definition(claim: dict) -> dict[str, Any]:
    """`DEFINITION` (less a figure claim's tolerance, its prediction intervals, compared as
    figures), the claim's reading and each threshold's region."""
    details = claim.get("details") if isinstance(claim.get("details"), dict) else {}
    figure_claim = isinstance(details.get("figures"), list)
    out = {key: claim.get(key) for key in DEFINITION if not (figure_claim and key == "tolerance")}
    out["reading"] = details.get("reading")
    effects = details.get("effects")
    for i, effect in enumerate(effects if isinstance(effects, list) else []):
        if isinstance(effect, dict) and "region" in effect:
            out[f"effects[{i}].region"] = effect["region"]
    return out


def several_fold(old: Figure, new: Figure) -> float | None:
    """How many times over a draw moved (inf: it changed sign), when that is `FOLD` or more
    and outside the range of either run's orders; else None."""
    a, b = old.value, new.value
    if isinstance(a, str) or isinstance(b, str) or (old.span is None and new.span is None):
        return None
    if not (math.isfinite(a) and math.isfinite(b)) or a == b:
        return None
    low_a, high_a = old.span or (a, a)
    low_b, high_b = new.span or (b, b)
    if low_b <= high_a and low_a <= high_b:  # an order of one run reaches the other's range
        return None
    if a * b <= 0:
        return math.inf if a and b else None
    fold = max(abs(a), abs(b)) / min(abs(a), abs(b))
    return fold if fold >= FOLD else None


# --------------------------------------------------------------------------- comparing


def _flatten(value: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Every leaf of `value` by its path of keys (a key holding a dot stays one key)."""
    if isinstance(value, dict) and value:
        return {k: v for key, item in value.items() for k, v in _flatten(item, (*path, str(key))).items()}  # fmt: skip
    return {path: value}


def _metadata_changes(old: dict, new: dict) -> list[tuple[str, Any, Any]]:
    a, b = (_flatten({k: v for k, v in m.items() if k not in VOLATILE_METADATA}) for m in (old, new))  # fmt: skip
    name = lambda path: ".".join(k if k and "." not in k else json.dumps(k) for k in path)  # noqa: E731
    missing = "(absent)"
    return [
        (name(key), a.get(key, missing), b.get(key, missing))
        for key in sorted(set(a) | set(b))
        if a.get(key, missing) != b.get(key, missing)
    ]


def _compare_figures(claim_id: str, old: dict, new: dict, diff: AuditDiff) -> None:
    """Figures of both records; per-order figures for the orders both computed, and figures
    that depend on the number of orders only when both computed as many."""
    old_orders, new_orders = order_names(old), order_names(new)
    both = bool(old_orders and new_orders)  # an old record without orders: all are new
    if both and len(old_orders) != len(new_orders):
        diff.orders.append((claim_id, len(old_orders), len(new_orders)))

    def kept(figure: Figure) -> bool:
        if both and figure.order is not None:
            return figure.order in old_orders and figure.order in new_orders
        return not (figure.per_count and len(old_orders) != len(new_orders))

    before = {name: f for name, f in figures(old).items() if kept(f)}
    after = {name: f for name, f in figures(new).items() if kept(f)}
    # A figure whose words changed, or that one side lacks, is compared whole, not its numbers.
    texts = {name for name, f in (*before.items(), *after.items()) if f.text is not None}
    whole = {
        name
        for name in texts
        if name not in before or name not in after or before[name].value != after[name].value
    }
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if (a or b).within in whole:  # type: ignore[union-attr]
            continue
        if b is None:
            diff.lost.append((claim_id, name, "disappeared"))
        elif a is None:
            diff.figures_only_in_one.append((claim_id, name, "new"))
        elif isinstance(a.value, str) or isinstance(b.value, str):
            if a.value != b.value:
                diff.moved.append(Moved(claim_id, name, a.text or a.value, b.text or b.value, None))
        elif not math.isfinite(b.value):
            if math.isfinite(a.value):
                diff.lost.append((claim_id, name, f"{_number(a.value)} -> {b.value}"))
        elif a.value != b.value:
            tolerance = a.tolerance if a.tolerance is not None else b.tolerance
            tolerance = tolerance if math.isfinite(a.value) else None
            fold = several_fold(a, b)
            if tolerance is not None and abs(b.value - a.value) > tolerance:
                diff.moved.append(Moved(claim_id, name, a.value, b.value, tolerance))
            elif fold is not None:
                diff.moved.append(Moved(claim_id, name, a.value, b.value, tolerance, fold))
            elif tolerance is None:
                diff.changed_untoleranced.append(Moved(claim_id, name, a.value, b.value, None))


def compare(old: dict, new: dict) -> AuditDiff:
    """What changed from `old` to `new` (two audits as `load` returns them)."""
    diff = AuditDiff()
    old_claims = {c["id"]: c for c in old["claims"]}
    new_claims = {c["id"]: c for c in new["claims"]}
    diff.only_old = [c for i, c in old_claims.items() if i not in new_claims]
    diff.only_new = [c for i, c in new_claims.items() if i not in old_claims]
    for claim_id, a in old_claims.items():
        if (b := new_claims.get(claim_id)) is None:
            continue
        if a["verdict"] != b["verdict"]:
            diff.verdicts.append((a, b))
        defined_a, defined_b = definition(a), definition(b)
        for key in dict.fromkeys([*defined_a, *defined_b]):
            if defined_a.get(key) != defined_b.get(key):
                diff.definitions.append((claim_id, key, defined_a.get(key), defined_b.get(key)))
        _compare_figures(claim_id, a, b, diff)
    diff.metadata = _metadata_changes(old.get("metadata", {}), new.get("metadata", {}))
    return diff


# --------------------------------------------------------------------------- printing


def _number(value: float) -> str:
    return f"{value:.6g}"


def _printable(text: str) -> str:
    """`text` with each character a terminal could act on (ESC, CSI, "\\r", a backspace, a
    bidi override) written as its Python escape."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else f"{text[:SHOWN_CHARS]}... ({len(text):,} characters)"  # fmt: skip


def _value(value: Any, key: str = "") -> str:
    if key == "command" and isinstance(value, list):
        return _cut(shlex.join(map(str, value)))
    if isinstance(value, list):
        return _cut(", ".join(map(str, value)))
    return _cut(value if isinstance(value, str) else json.dumps(value))


def _moved_line(m: Moved) -> str:
    if isinstance(m.old, str) or isinstance(m.new, str):
        old, new = (_cut(json.dumps(v, ensure_ascii=False)) for v in (m.old, m.new))
        return f"  {m.claim_id:<16} {m.figure:<22} {old} -> {new} (changed)"
    change = f"{_number(m.old)} -> {_number(m.new)} (moved {_number(abs(m.new - m.old))}"
    if m.fold is not None:
        change += f", {'changed sign' if math.isinf(m.fold) else f'{m.fold:.3g}-fold'} beyond both runs' orders"  # fmt: skip
    limit = "" if m.tolerance is None else f", tolerance {_number(m.tolerance)}"
    return f"  {m.claim_id:<16} {m.figure:<22} {change}{limit})"


def render(diff: AuditDiff, old_name: str, new_name: str, *, verbose: bool = False) -> list[str]:
    """The lines diff prints, every character printable; `verbose` also lists figures with
    no tolerance that changed."""
    lines = [f"old: {old_name}", f"new: {new_name}", ""]
    if diff.verdicts:
        lines.append(f"Verdicts changed ({len(diff.verdicts)}):")
        for a, b in diff.verdicts:
            lines.append(f"  {b['id']:<16} {a['verdict']} -> {b['verdict']}   [{b.get('document', '?')}] {b.get('section', '?')}")  # fmt: skip
            lines.append(
                f"  {'':<16} published {b.get('published', '?')}; measured "
                f"{a.get('measured', '?')} -> {b.get('measured', '?')}; tolerance {b.get('tolerance', '?')}"
            )
    for claims, side in ((diff.only_old, old_name), (diff.only_new, new_name)):
        if claims:
            lines.append(f"Claims only in {side} ({len(claims)}):")
            lines += [f"  {c['id']:<16} {c['verdict']:<10} [{c.get('document', '?')}] {c.get('section', '?')}" for c in claims]  # fmt: skip
    if diff.lost:
        lines.append(f"Figures lost: non-finite or disappeared ({len(diff.lost)}):")
        lines += [f"  {claim_id:<16} {name:<22} {what}" for claim_id, name, what in diff.lost]
    if not (diff.verdicts_moved or diff.lost):
        lines.append("Verdicts: none changed, no claim appeared or disappeared.")
    lines.append("")
    if diff.moved:
        lines.append(f"Figures that moved beyond their tolerance ({len(diff.moved)}):")
        lines += [_moved_line(m) for m in diff.moved]
    else:
        lines.append("Figures: none moved beyond its tolerance.")
    if count := len(diff.changed_untoleranced):
        if verbose:
            lines.append(f"Figures with no tolerance to judge by that changed ({count}):")
            lines += [_moved_line(m) for m in diff.changed_untoleranced]
        else:
            lines.append(f"{count} figures with no tolerance to judge by changed (-v lists them).")
    if diff.figures_only_in_one:
        lines.append(f"Figures recorded in one file only ({len(diff.figures_only_in_one)}):")
        lines += [f"  {c:<16} {name} (only in {new_name})" for c, name, _ in diff.figures_only_in_one]  # fmt: skip
    if diff.definitions:
        lines.append(
            "Published figures, tolerances, readings, regions, expectations, statements, "
            f"documents or sections changed ({len(diff.definitions)}):"
        )
        lines += [f"  {c:<16} {key}: {_value(a)} -> {_value(b)}" for c, key, a, b in diff.definitions]  # fmt: skip
    lines.append("")
    by_change: dict[tuple[int, int], list[str]] = {}
    for claim_id, a, b in diff.orders:
        by_change.setdefault((a, b), []).append(claim_id)
    orders = [
        f"  orders per claim: {a} -> {b} ({len(ids)} claim{'s' if len(ids) > 1 else ''}: "
        f"{', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''})"
        for (a, b), ids in by_change.items()
    ]
    if diff.metadata or orders:
        lines.append(f"Metadata changed ({len(diff.metadata) + len(orders)}):")
        lines += orders
        lines += [f"  {_cut(key)}: {_value(a, key)} -> {_value(b, key)}" for key, a, b in diff.metadata]  # fmt: skip
    else:
        lines.append("Metadata: unchanged (creation time, wall time and cache activity aside).")
    return [_printable(line) for line in lines]


def main(
    old_path: str, new_path: str, *, verbose: bool = False, verdicts_only: bool = False
) -> int:
    """Print the diff of two audit.json files; the exit status (0 to 3, see the module)."""
    try:
        old, new = load(old_path), load(new_path)
    except AuditFileError as error:
        print(_printable(f"error: {error}"), file=sys.stderr)
        return 2
    diff = compare(old, new)
    try:
        print("\n".join(render(diff, str(old_path), str(new_path), verbose=verbose)), flush=True)
    except BrokenPipeError:  # `| head` closed the pipe: the rest goes nowhere, the code stays
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if diff.gate_fails:
        return 1
    return 3 if diff.figures_moved and not verdicts_only else 0
