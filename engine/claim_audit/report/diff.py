"""Two audit.json files compared: verdicts, figures moved, definitions and run metadata."""

from __future__ import annotations

import json
import math
import numbers
import re
import shlex
import statistics
from dataclasses import dataclass, field
from typing import Any

from scipy import stats

from ..engine.prediction import FIGURE_ALPHA, half_unit

# What defines a claim beside its verdict, compared as recorded.
DEFINITION = ("published", "tolerance", "expected_to_hold", "statement", "document", "section")
FOLD = 2.0  # a draw that moved this many times over, beyond both runs' orders, moved
VOLATILE_METADATA = ("created_unix", "wall_s", "cache")  # differs between any two runs
SHOWN_CHARS = 200  # a value longer than this is printed cut


@dataclass(frozen=True)
class Figure:
    """A figure a verdict rests on: a number, or words (`text` as printed) compared exactly."""

    value: float | str
    tolerance: float | None
    text: str | None = None
    within: str | None = None  # the words a number is part of
    order: str | None = None  # its float order
    span: tuple[float, float] | None = None  # its run's range over orders
    per_count: bool = False  # it depends on how many orders ran


@dataclass(frozen=True)
class Moved:
    claim_id: str
    figure: str
    old: float | str
    new: float | str
    tolerance: float | None  # None for words, which any change moves
    fold: float | None = None  # how many times over a draw moved, when FOLD judged it

    @property
    def words(self) -> bool:
        return isinstance(self.old, str) or isinstance(self.new, str)

    def ratio(self) -> str:
        """new / old, and how many times over it moved where that is `FOLD` or more."""
        a, b = self.old, self.new
        if a == 0 or b == 0:
            return "from 0" if a == 0 else "to 0"
        if (a > 0) != (b > 0):  # type: ignore[operator]
            return f"new/old {b / a:.3g}, changed sign"  # type: ignore[operator]
        fold = max(abs(b / a), abs(a / b))  # type: ignore[operator]
        several = f", {fold:.3g}-fold" if fold >= FOLD else ""
        return f"new/old {b / a:.4g}{several}"  # type: ignore[operator]

    def size(self) -> tuple[float, float]:
        """How far it moved, to rank a claim's moves: words first, then by fold, then by
        tolerances."""
        if self.words:
            return (math.inf, math.inf)
        a, b = abs(self.old), abs(self.new)  # type: ignore[arg-type]
        fold = math.inf if min(a, b) == 0 or (self.old > 0) != (self.new > 0) else max(a, b) / min(a, b)  # type: ignore[operator]  # fmt: skip
        over = abs(self.new - self.old) / self.tolerance if self.tolerance else math.inf  # type: ignore[operator]
        return (fold, over)

    def change(self) -> str:
        """`figure` old -> new, with its ratio (or words changed), its fold and tolerance."""
        if self.words:
            old, new = (cut(json.dumps(v, ensure_ascii=False)) for v in (self.old, self.new))
            return f"{self.figure} {old} -> {new} (changed)"
        beyond = "" if self.fold is None else " beyond both runs' orders"
        limit = "" if self.tolerance is None else f", tolerance {self.tolerance:.6g}"
        return f"{self.figure} {self.old:.6g} -> {self.new:.6g} ({self.ratio()}{beyond}{limit})"

    def line(self) -> str:
        if self.words:
            old, new = (cut(json.dumps(v, ensure_ascii=False)) for v in (self.old, self.new))
            return f"{self.claim_id:<16} {self.figure:<22} {old} -> {new} (changed)"
        change = f"{self.old:.6g} -> {self.new:.6g} (moved {abs(self.new - self.old):.6g}"  # type: ignore[operator]
        if self.fold is not None:
            fold = "changed sign" if math.isinf(self.fold) else f"{self.fold:.3g}-fold"
            change += f", {fold} beyond both runs' orders"
        limit = "" if self.tolerance is None else f", tolerance {self.tolerance:.6g}"
        return f"{self.claim_id:<16} {self.figure:<22} {change}{limit})"


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
    orders: dict[tuple[int, int], list[str]] = field(default_factory=dict)  # counts: ids
    metadata: list[tuple[str, Any, Any]] = field(default_factory=list)
    sweep_seeds: tuple[str, str] | None = None  # the sweeps' seeds, where they differ
    sweeps: list[tuple[str, str, str]] = field(default_factory=list)  # id, old, new: k/n (label)

    @property
    def verdicts_moved(self) -> bool:
        return bool(self.verdicts or self.only_old or self.only_new)

    @property
    def sweep_moved(self) -> bool:
        """The sweep over other seeds differs: its seeds, or a claim's count of seeds."""
        return bool(self.sweep_seeds or self.sweeps)

    @property
    def gate_fails(self) -> bool:
        """A verdict moved, a figure was lost, or an expectation flipped: exit 1."""
        flipped = any(key == "expected_to_hold" for _, key, _, _ in self.definitions)
        return self.verdicts_moved or bool(self.lost) or flipped


def tolerances(text: Any) -> list[float] | None:
    """The numbers of a tolerance as recorded ("± 0.36", "± 0.1, 0.2"); None if it has none."""
    found = re.fullmatch(r"\s*±(.*)", text, re.DOTALL) if isinstance(text, str) else None
    try:
        values = [float(part) for part in found[1].split(",")]  # type: ignore[index]
    except (TypeError, ValueError):  # no "±", or no numbers after it
        return None
    return values if _finite(*values) and min(values) >= 0 else None


def draw_gap(sd: float, n_orders: int) -> float:
    """How far apart two valid draws may lie, from `n_orders` draws of sd `sd`: a valid redraw
    moves further than t_{n-1}(1 - FIGURE_ALPHA / 2) sd sqrt(2) with probability FIGURE_ALPHA."""
    t = stats.t.ppf(1 - FIGURE_ALPHA / 2, n_orders - 1) if n_orders > 1 and sd else 0.0
    return float(t) * sd * math.sqrt(2)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _finite(*values: Any) -> bool:
    return all(_is_number(v) and math.isfinite(v) for v in values)


def _get(record: Any, key: str, kind: type | None = None) -> Any:
    """`record[key]` (None when `record` is no dict); an empty `kind` when it is no `kind`."""
    value = record.get(key) if isinstance(record, dict) else None
    return value if kind is None or isinstance(value, kind) else kind()


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


def _shape(value: Any) -> str:
    """A figure's words: its structure and text with its numbers blanked, as JSON."""
    blank = dict.fromkeys(("parse_int", "parse_float", "parse_constant"), {}.get)
    return json.dumps(json.loads(json.dumps(value), **blank))


def _gap(values: list, figure: Any = None) -> float | None:
    """The gap of two draws of `values`, or of a published `figure` plus its half unit, or None."""
    sd = n = None
    try:
        if figure is not None:
            sd, n = _get(figure, "sd_over_orders"), _get(figure, "orders")
        elif _finite(*values):
            sd, n = statistics.stdev(values) if len(values) > 1 else 0.0, len(values)
        if not (_finite(sd) and sd >= 0 and _is_number(n) and n >= 1):
            return None
        return draw_gap(sd, int(n)) + (0 if figure is None else half_unit(figure.get("published")))
    except (AttributeError, ValueError, OverflowError):  # e.g. a spread beyond float64
        return None


def figures(claim: dict) -> dict[str, Figure]:
    """The figures a claim's verdict rests on by name, with their tolerance: the claim's own
    ("± 0.36"), else the gap of two draws (plus a published figure's half unit)."""
    details = _get(claim, "details", dict)
    published, orders = _get(details, "figures", list), _get(details, "orders", dict)
    gaps = tolerances(claim.get("tolerance")) or [_gap([], f) for f in published]
    gaps = [] if None in gaps else gaps
    out: dict[str, Figure] = {}

    def at(index: int | None, count: int | None = None) -> float | None:
        if len(gaps) == 1 or (index is not None and index < len(gaps) == (count or len(gaps))):
            return gaps[0 if len(gaps) == 1 else index]
        return None

    def add(name: str, value: Any, tolerance: float | None, **fields: Any) -> None:
        if _is_number(value):
            out[name] = Figure(float(value), tolerance, **fields)

    span = details.get("range_over_orders")
    ok = isinstance(span, list) and len(span) == 2 and _finite(*span)
    span = (float(span[0]), float(span[1])) if ok else None
    for key in ("measured_value", "measured_values"):
        for name, index, value in _leaves(details.get(key), key):
            add(name, value, at(index), span=span if index is None else None)
    for i, figure in enumerate(published):
        ends = _get(figure, "interval", list)
        for name, _, end in _leaves(ends if len(ends) == 2 else [], f"figures[{i}].interval"):
            add(name, end, at(i, len(published)), per_count=True)
        add(f"figures[{i}].orders", _get(figure, "orders"), 0.0, per_count=True)
    for i, effect in enumerate(_get(details, "effects", list)):
        if isinstance(name := _get(effect, "effect"), str):
            out[f"effects[{i}].effect"] = Figure(name, 0.0)
    measured = {o: e.get("measured") for o, e in orders.items() if isinstance(e, dict)}
    columns: dict[tuple[str, str], list[Any]] = {}  # a number over the orders of one shape
    for value in measured.values():
        for name, _, leaf in _leaves(value, ""):
            columns.setdefault((_shape(value), name), []).append(leaf)
    for order, value in measured.items():
        whole, text = f"orders.{order}", value if isinstance(value, str) else json.dumps(value)
        out[whole] = Figure(_shape(value), 0.0, orders[order].get("printed") or text, order=order)
        for name, index, leaf in _leaves(value, ""):
            column = columns[_shape(value), name]
            finite = [v for v in column if _finite(v)]
            tolerance = at(index, len(value) if isinstance(value, list) else None)
            tolerance = _gap(column) if tolerance is None else tolerance
            span = (min(finite), max(finite)) if finite else None
            add(f"{whole}.measured{name}", leaf, tolerance, within=whole, order=order, span=span)
    return out


def _definition(claim: dict) -> dict[str, Any]:
    """`DEFINITION` (but a figure claim's tolerance: a figure), reading and regions."""
    details = _get(claim, "details", dict)
    figure_claim = isinstance(details.get("figures"), list)
    out = {key: claim.get(key) for key in DEFINITION if not (figure_claim and key == "tolerance")}
    out["reading"] = details.get("reading")
    for i, effect in enumerate(_get(details, "effects", list)):
        if isinstance(effect, dict) and "region" in effect:
            out[f"effects[{i}].region"] = effect["region"]
    return out


def several_fold(old: Figure, new: Figure) -> float | None:
    """How many times over a draw moved beyond both runs' orders (inf: sign), if >= `FOLD`."""
    a, b = old.value, new.value
    if not _finite(a, b) or old.span == new.span is None or not (a and b):
        return None
    (low_a, high_a), (low_b, high_b) = old.span or (a, a), new.span or (b, b)
    if low_b <= high_a and low_a <= high_b:  # the ranges meet
        return None
    fold = math.inf if (a > 0) != (b > 0) else max(abs(a), abs(b)) / min(abs(a), abs(b))
    return fold if fold >= FOLD else None


def _flatten(value: Any, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    if not (isinstance(value, dict) and value):
        return {path: value}
    return {k: v for key, item in value.items() for k, v in _flatten(item, (*path, key)).items()}


def compare(old: dict, new: dict) -> AuditDiff:
    """What changed from `old` to `new` (two audits as claim_audit.__main__.load reads them)."""
    old_claims, new_claims = ({c["id"]: c for c in audit["claims"]} for audit in (old, new))
    meta_a, meta_b = (
        _flatten({k: v for k, v in a.get("metadata", {}).items() if k not in VOLATILE_METADATA})
        for a in (old, new)
    )
    diff = AuditDiff(
        only_old=[c for i, c in old_claims.items() if i not in new_claims],
        only_new=[c for i, c in new_claims.items() if i not in old_claims],
        metadata=[  # a key holding a dot is quoted: {"a.b": 1} is not {"a": {"b": 1}}
            (".".join(k if k and "." not in k else json.dumps(k) for k in key), *values)
            for key in sorted(set(meta_a) | set(meta_b))
            if (values := (meta_a.get(key, "(absent)"), meta_b.get(key, "(absent)")))[0]
            != values[1]
        ],
    )
    _compare_sweeps(old, new, diff)
    for claim_id, was in old_claims.items():
        if (now := new_claims.get(claim_id)) is None:
            continue
        if was["verdict"] != now["verdict"]:
            diff.verdicts.append((was, now))
        defined_a, defined_b = _definition(was), _definition(now)
        for key in dict.fromkeys([*defined_a, *defined_b]):
            if defined_a.get(key) != defined_b.get(key):
                diff.definitions.append((claim_id, key, defined_a.get(key), defined_b.get(key)))
        ran_a, ran_b = (list(_get(_get(c, "details"), "orders", dict)) for c in (was, now))
        both, same_count = bool(ran_a and ran_b), len(ran_a) == len(ran_b)  # no orders: all new
        if both and not same_count:
            diff.orders.setdefault((len(ran_a), len(ran_b)), []).append(claim_id)
        before, after = figures(was), figures(now)
        whole: set[str] = set()  # words changed, appeared or disappeared: their numbers are not
        for name in sorted(set(before) | set(after)):  # compared (sorted: words before numbers)
            a, b = before.get(name), after.get(name)
            first: Figure = a or b  # type: ignore[assignment]
            if both and first.order is not None:  # an order's figure: of an order both ran
                kept = first.order in ran_a and first.order in ran_b
            else:  # a figure that counts the orders: only if as many ran
                kept = same_count or not first.per_count
            if first.within in whole or not kept:
                continue
            if first.text is not None and (a is None or b is None or a.value != b.value):
                whole.add(name)
            if a is None or b is None:
                listed = diff.lost if b is None else diff.figures_only_in_one
                listed.append((claim_id, name, "disappeared" if b is None else "new"))
            elif a.value == b.value:
                continue
            elif isinstance(a.value, str) or isinstance(b.value, str):
                diff.moved.append(Moved(claim_id, name, a.text or a.value, b.text or b.value, None))
            elif not math.isfinite(b.value):
                if math.isfinite(a.value):
                    diff.lost.append((claim_id, name, f"{a.value:.6g} -> {b.value}"))
            else:
                tolerance = a.tolerance if a.tolerance is not None else b.tolerance
                tolerance = tolerance if math.isfinite(a.value) else None
                beyond = tolerance is not None and abs(b.value - a.value) > tolerance
                fold = None if beyond else several_fold(a, b)
                if beyond or fold is not None or tolerance is None:
                    listed = diff.moved if beyond or fold is not None else diff.changed_untoleranced
                    listed.append(Moved(claim_id, name, a.value, b.value, tolerance, fold))
    return diff


def _sweep(audit: dict) -> tuple[list | None, dict[str, str]]:
    """A run's sweep seeds (None: no sweep) and each claim's result on them: "k/n (label)"."""
    section = _get(audit, "robustness", dict)
    seeds = section.get("sweep_seeds")
    seeds = seeds if isinstance(seeds, list) and seeds else None
    out = {}
    for claim_id, claim in _get(section, "claims", dict).items():
        sweep = _get(claim, "sweep", dict)
        holding, total, label = (sweep.get(key) for key in ("holding", "total", "label"))
        if _is_number(holding) and _is_number(total):
            out[claim_id] = f"{holding:g}/{total:g}" + (f" ({label})" if isinstance(label, str) else "")  # fmt: skip
    return seeds, out


def seeds_text(seeds: list | None) -> str:
    """A sweep's seeds as `--seeds` takes them ("0-9", "0,3,5-7"), or "none"."""
    if not seeds:
        return "none"
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        return cut(seeds)
    runs: list[list[int]] = []
    for seed in sorted(seeds):
        if runs and seed == runs[-1][1] + 1:
            runs[-1][1] = seed
        else:
            runs.append([seed, seed])
    text = ",".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs)
    return f"{cut(text)} ({len(seeds)} seed{'s' * (len(seeds) != 1)})"


def _compare_sweeps(old: dict, new: dict, diff: AuditDiff) -> None:
    """A sweep run against one without, or on other seeds: its seeds; on the same seeds,
    each claim whose count of seeds it holds on (or label) changed, or that one run swept."""
    (seeds_a, claims_a), (seeds_b, claims_b) = _sweep(old), _sweep(new)
    if seeds_a != seeds_b:
        diff.sweep_seeds = (seeds_text(seeds_a), seeds_text(seeds_b))
        return
    for claim_id in dict.fromkeys([*claims_a, *claims_b]):
        a, b = claims_a.get(claim_id, "not swept"), claims_b.get(claim_id, "not swept")
        if a != b:
            diff.sweeps.append((claim_id, a, b))


def cut(value: Any, key: str = "") -> str:
    """`value` as text (a list joined, a `command` as a shell reads it), cut to `SHOWN_CHARS`."""
    if isinstance(value, list):
        value = shlex.join(map(str, value)) if key == "command" else ", ".join(map(str, value))
    text = value if isinstance(value, str) else json.dumps(value)
    long = len(text) > SHOWN_CHARS
    return f"{text[:SHOWN_CHARS]}... ({len(text):,} characters)" if long else text


def render(diff: AuditDiff, old_name: str, new_name: str, *, verbose: bool = False) -> list[str]:
    """The lines diff prints: a line per changed claim (`verbose`: a line per figure, with
    the figures that have no tolerance to judge by), then the run's metadata."""
    if verbose:
        return _render_every_figure(diff, old_name, new_name)
    lines = [f"old: {old_name}", f"new: {new_name}", ""]
    changed = claim_lines(diff, old_name, new_name)
    if changed:
        lines += [f"Claims changed ({len(changed)}):", *(f"  {line}" for line in changed)]
    else:
        lines.append("Claims: none changed (verdict, figures, definition or sweep).")
    if diff.changed_untoleranced:
        lines.append(
            f"{len(diff.changed_untoleranced)} figures with no tolerance to judge by changed "
            "(-v lists them)."
        )
    lines += ["", *_metadata_lines(diff)]
    return lines


def claim_lines(diff: AuditDiff, old_name: str, new_name: str) -> list[str]:
    """One line per claim that changed: its verdict (or the run it is only in), its
    most-moved figure with old -> new and the ratio, what else moved, counted."""
    parts: dict[str, list[str]] = {}
    verdict: dict[str, str] = {}
    for a, b in diff.verdicts:
        verdict[b["id"]] = (
            f"{a['verdict']} -> {b['verdict']} (measured {a.get('measured', '?')} -> "
            f"{b.get('measured', '?')}, published {b.get('published', '?')}, tolerance "
            f"{b.get('tolerance', '?')})"
        )
    for claims, side in ((diff.only_old, old_name), (diff.only_new, new_name)):
        for c in claims:
            verdict[c["id"]] = f"{c['verdict']}, only in {side} [{c.get('document', '?')}] {c.get('section', '?')}"  # fmt: skip

    def add(claim_id: str, text: str) -> None:
        parts.setdefault(claim_id, []).append(text)

    lost: dict[str, list[tuple[str, str]]] = {}
    for claim_id, name, what in diff.lost:
        lost.setdefault(claim_id, []).append((name, what))
    for claim_id, figures in lost.items():
        more = f" and {len(figures) - 1} more" if len(figures) > 1 else ""
        add(claim_id, f"lost {figures[0][0]} ({figures[0][1]}){more}")
    moved: dict[str, list[Moved]] = {}
    for m in diff.moved:
        moved.setdefault(m.claim_id, []).append(m)
    for claim_id, ms in moved.items():
        most = max(ms, key=Moved.size)
        more = f"; {len(ms) - 1} more figures moved" if len(ms) > 1 else ""
        add(claim_id, f"{most.change()}{more}")
    for claim_id, a, b in diff.sweeps:
        add(claim_id, f"seeds holding {a} -> {b}")
    new_figures: dict[str, list[str]] = {}
    for claim_id, name, _ in diff.figures_only_in_one:
        new_figures.setdefault(claim_id, []).append(name)
    for claim_id, names in new_figures.items():
        add(claim_id, f"new figures {cut(', '.join(names))}")
    definitions: dict[str, list[tuple[str, Any, Any]]] = {}
    for claim_id, key, a, b in diff.definitions:
        definitions.setdefault(claim_id, []).append((key, a, b))
    for claim_id, changes in definitions.items():
        shown = "; ".join(f"{key}: {cut(a)} -> {cut(b)}" for key, a, b in changes)
        add(claim_id, shown)
    ids = dict.fromkeys([*verdict, *parts])
    return [
        f"{claim_id:<16} " + "; ".join(filter(None, [verdict.get(claim_id), *parts.get(claim_id, [])]))
        for claim_id in ids
    ]  # fmt: skip


def _metadata_lines(diff: AuditDiff) -> list[str]:
    metadata = [
        f"orders per claim: {a} -> {b} ({len(ids)} claim{'s' * (len(ids) > 1)}: "
        f"{', '.join(ids[:3])}{', ...' * (len(ids) > 3)})"
        for (a, b), ids in diff.orders.items()
    ]
    if diff.sweep_seeds:
        a, b = diff.sweep_seeds
        metadata.append(f"sweep seeds (--seeds): {a} -> {b}; the sweeps are not compared")
    metadata += [f"{cut(key)}: {cut(a, key)} -> {cut(b, key)}" for key, a, b in diff.metadata]
    if not metadata:
        return ["Metadata: unchanged (creation time, wall time and cache activity aside)."]
    return [f"Metadata changed ({len(metadata)}):", *(f"  {row}" for row in metadata)]


def _render_every_figure(diff: AuditDiff, old_name: str, new_name: str) -> list[str]:
    """`render`'s lines with every figure that moved its own line (`--verbose`)."""
    lines = [f"old: {old_name}", f"new: {new_name}", ""]

    def section(title: str, rows: list[str], otherwise: str | None = None) -> None:
        if rows:
            lines.extend([f"{title} ({len(rows)}):", *(f"  {row}" for row in rows)])
        elif otherwise:
            lines.append(otherwise)

    verdicts = [
        f"{b['id']:<16} {a['verdict']} -> {b['verdict']}: measured {a.get('measured', '?')} -> "
        f"{b.get('measured', '?')}, published {b.get('published', '?')}, tolerance "
        f"{b.get('tolerance', '?')} [{b.get('document', '?')}] {b.get('section', '?')}"
        for a, b in diff.verdicts
    ]
    section("Verdicts changed", verdicts)
    for claims, side in ((diff.only_old, old_name), (diff.only_new, new_name)):
        only = [
            f"{c['id']:<16} {c['verdict']:<10} [{c.get('document', '?')}] {c.get('section', '?')}"
            for c in claims
        ]
        section(f"Claims only in {side}", only)
    none = "Verdicts: none changed, no claim appeared or disappeared."
    lost = [f"{c:<16} {n:<22} {w}" for c, n, w in diff.lost]
    section("Figures lost: non-finite or disappeared", lost, None if diff.verdicts_moved else none)
    moved, none = [m.line() for m in diff.moved], "Figures: none moved beyond its tolerance."
    lines.append("")
    section("Figures that moved beyond their tolerance", moved, none)
    untoleranced = [m.line() for m in diff.changed_untoleranced]
    section("Figures with no tolerance to judge by that changed", untoleranced)
    sweeps = [f"{c:<16} seeds holding {a} -> {b}" for c, a, b in diff.sweeps]
    section("Sweeps over other seeds that changed", sweeps)
    new_figures = [f"{c:<16} {n} (only in {new_name})" for c, n, _ in diff.figures_only_in_one]
    section("Figures recorded in one file only", new_figures)
    title = "Published figures, tolerances, readings, regions, expectations, statements, documents or sections changed"
    section(title, [f"{c:<16} {k}: {cut(a)} -> {cut(b)}" for c, k, a, b in diff.definitions])
    return [*lines, "", *_metadata_lines(diff)]
