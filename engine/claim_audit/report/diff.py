"""Compare two audit.json files: which verdicts, figures and run metadata moved.

`python -m claim_audit.report diff OLD.json NEW.json` prints

- claims whose verdict changed, and claims present in only one file (verdicts are compared
  as strings, whatever their names);
- the figures every verdict rests on that moved beyond their tolerance, with both values: a
  figure claim's measured figures and prediction intervals, every claim's figure in each
  float order (numbers read from the text the audit prints, the text itself compared
  exactly), a threshold claim's effects; each tolerance is derived from the old record
  (`figures` says how). A draw (a measured figure, a figure in one order, an effect) that
  moved FOLD-fold or more, or changed sign, beyond the range of both runs' orders is moved
  whatever its tolerance: an old run's wide spread must not hide a change of scale;
- published figures, tolerances, readings, regions, expectations, statements, documents or
  sections that changed, and changed run metadata (commit, device, versions, the number of
  orders per claim, ...; creation time, wall time and cache activity are left out: they
  change on every run). Figures in one order are compared for the orders both runs
  computed: a run with more orders (`--orders`) moves the metadata, not the figures.

Exit status, the gate CI reads:
- 0: nothing moved: no verdict, no figure beyond its tolerance (figures may have moved
  within it, or have no tolerance to judge by; -v lists those);
- 1: a verdict moved: a verdict changed, a claim appeared or disappeared, a measured
  figure became NaN or infinite or disappeared (the new audit can no longer judge it), or
  a claim's `expected_to_hold` flipped (a finding was recorded or dropped);
- 2: an input is unreadable or malformed (not JSON, not an audit, a schema_version newer
  than this code, numbers of hundreds of digits, nesting deeper than an audit has), said in
  one line on stderr;
- 3: no verdict moved, but a figure moved beyond its tolerance (or a printed figure's text
  changed): the recipe, the stack or the machine changed a number by more than valid float
  orders do, so "nothing moved" would be false. A code of its own, so that a gate can tell
  it from a moved verdict; `--verdicts-only` makes it 0 (e.g. while moving the lock, when
  figures are expected to move).
"""

from __future__ import annotations

import json
import math
import numbers
import os
import re
import shlex
import statistics
import sys
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from scipy import stats

from ..engine.prediction import FIGURE_ALPHA, half_unit
from ..render.documents import SCHEMA_VERSION

# What defines a claim beside its verdict, compared as recorded (a figure claim's tolerance
# is its prediction interval, compared as figures; a reading and a region are in `details`).
DEFINITION = ("published", "tolerance", "expected_to_hold", "statement", "document", "section")
FOLD = 2.0
"""A draw that moved this many times over (or changed sign), beyond every order's range in
both runs, is moved whatever its tolerance."""
# Metadata that differs between any two runs; comparing it would only add noise.
VOLATILE_METADATA = ("created_unix", "wall_s", "cache")
# An audit nests a handful of levels and its numbers are floats and counts: far more of
# either is no audit (and would overflow the recursion or the float conversion).
MAX_DEPTH = 64
MAX_INT_DIGITS = 20
SHOWN_CHARS = 200  # a metadata value longer than this is printed cut


class AuditFileError(ValueError):
    """A file given to diff cannot be read or does not hold an audit."""


@dataclass(frozen=True)
class Figure:
    """One figure a verdict rests on: where it sits in `details`, its value and tolerance.

    value: a number; or, for a text (a figure rendered as the audit prints it, or a name such
      as an effect's region), the text with its numbers blanked, compared exactly.
    tolerance: how far the number may move from its old value (see `figures`); None when
      there is none to judge by; 0 for a count.
    slack: half a unit of its printed last digit, for a number read from a text.
    text: a text figure's text, as shown.
    within: for a number read from a text, that text's name.
    order: for a figure of one float order, that order's name (compared only when both runs
      computed the order).
    span: for a draw (a figure over the orders), the range of its run's orders, (low, high);
      `FOLD` judges a draw by it.
    per_count: the figure depends on how many orders the run computed (a prediction
      interval's end, the count itself): compared only when both runs computed as many.
    """

    name: str
    value: float | str
    tolerance: float | None
    slack: float = 0.0
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
        """A verdict changed, or a claim appeared or disappeared."""
        return bool(self.verdicts or self.only_old or self.only_new)

    @property
    def gate_fails(self) -> bool:
        """A verdict moved, a figure became non-finite or disappeared, or a claim's
        expectation flipped (a finding recorded or dropped): diff exits 1."""
        flipped = any(key == "expected_to_hold" for _, key, _, _ in self.definitions)
        return self.verdicts_moved or bool(self.lost) or flipped

    @property
    def figures_moved(self) -> bool:
        """A figure moved beyond its tolerance, or a text figure changed: diff exits 3 (when
        nothing exits 1), unless asked to gate on verdicts only."""
        return bool(self.moved)


# --------------------------------------------------------------------------- reading


def load(path: str | Path) -> dict:
    """Read an audit.json, checking the parts diff relies on.

    Raises:
      AuditFileError: the file is missing, unreadable, not JSON, or not an audit (no
        `claims` list of objects with string `id` and `verdict`, or an id used twice).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise AuditFileError(f"cannot read {path}: {error.strerror or error}") from error
    except UnicodeDecodeError as error:
        raise AuditFileError(f"{path} is not JSON ({error})") from error
    where = f"{path} is not an audit.json"
    try:
        audit = json.loads(text, parse_int=_bounded_int)
    except RecursionError:
        raise AuditFileError(f"{where}: it nests deeper than {MAX_DEPTH} levels") from None
    except _TooLong as error:
        raise AuditFileError(f"{where}: {error}") from None
    except json.JSONDecodeError as error:
        raise AuditFileError(f"{path} is not JSON ({error})") from error
    if _depth(audit) > MAX_DEPTH:
        raise AuditFileError(f"{where}: it nests deeper than {MAX_DEPTH} levels")
    version = audit.get("schema_version", SCHEMA_VERSION) if isinstance(audit, dict) else None
    if isinstance(audit, dict) and not (type(version) is int and 1 <= version <= SCHEMA_VERSION):
        raise AuditFileError(
            f"{path}: schema_version {_cut(json.dumps(version))} is not one this diff reads "
            f"(1 to {SCHEMA_VERSION}); compare it with the code that wrote it"
        )
    if not isinstance(audit, dict) or not isinstance(audit.get("claims"), list):
        raise AuditFileError(f"{where}: it has no 'claims' list")
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
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _TooLong(f"it holds an integer of {digits} digits")
    return int(text)


def _depth(value: Any) -> int:
    """How deeply lists and objects nest in `value`, counted without recursion."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if depth <= MAX_DEPTH:
                todo += [(child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)]  # fmt: skip
    return deepest


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


def _leaves(value: Any, name: str, index: int | None):
    """(name, index of the innermost list or None, number) for every number in `value`."""
    if _is_number(value):
        yield name, index, float(value)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{name}[{i}]", i)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{name}.{key}" if name else str(key), index)


def draw_gap(sd: float, n_orders: int) -> float:
    """How far apart two valid draws of a figure may lie, judged from `n_orders` draws of sd
    `sd`: t_{n-1}(1 - FIGURE_ALPHA / 2) sd sqrt(2); 0 with one order (no spread to judge by).

    Two draws x, x' of N(mu, sigma^2) differ by N(0, 2 sigma^2), and with s the sd of n other
    draws, (x - x') / (s sqrt(2)) is Student t with n - 1 degrees of freedom: a figure of a
    run of the same recipe (another machine, another valid float order) moves further from
    the old one with probability FIGURE_ALPHA, the engine's false-refutation rate per figure
    (engine/claim_audit/engine/prediction.py).
    """
    if n_orders < 2 or sd == 0:
        return 0.0
    return float(stats.t.ppf(1 - FIGURE_ALPHA / 2, n_orders - 1)) * sd * math.sqrt(2)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def _spread(value: Any) -> float | None:
    ok = _is_number(value) and math.isfinite(value) and value >= 0
    return float(value) if ok else None


def _figure_rule_gaps(published: Any) -> list[float] | None:
    """A figure claim's tolerance per published figure (its `details.figures[i]`): the gap of
    two draws over its orders, plus half a unit of the published figure's last digit, the
    resolution the verdict reads it at (its prediction interval is widened by the same)."""
    if not isinstance(published, list) or not published:
        return None
    gaps = []
    for figure in published:
        if not isinstance(figure, dict):
            return None
        sd, n = _spread(figure.get("sd_over_orders")), _count(figure.get("orders"))
        try:
            printing = half_unit(figure.get("published"))
        except (AttributeError, ValueError, OverflowError):
            return None
        if sd is None or n is None:
            return None
        gaps.append(draw_gap(sd, n) + printing)
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


# A number as fmt() (engine/claim_audit/engine/verdict.py) renders one, not part of a word ("l1", "twin-1"'s
# "twin") or of a dotted name ("0.12.8").
_NUMBER = re.compile(
    r"(?<![\w.])[-+]?(?:nan|inf|(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)(?![\w.])", re.IGNORECASE
)


def _printed_half_unit(token: str) -> float:
    """Half a unit in the last digit fmt() keeps of a number it rendered: it prints 4
    significant digits and `.4g` drops trailing zeros, so "1.98" is 1.980 +- 5e-4 and "120" is
    120.0 +- 0.05; a token of more digits was printed otherwise and is exact to its last digit
    (an integer, exactly). 0 for zero, nan and inf."""
    try:
        _, digits, exponent = Decimal(token).as_tuple()
    except InvalidOperation:
        return 0.0
    if not isinstance(exponent, int) or not any(digits):
        return 0.0
    if len(digits) <= 4:
        return 0.5 * 10.0 ** min(exponent + len(digits) - 4, 308)
    return 0.0 if exponent >= 0 else 0.5 * 10.0**exponent


def _parse(text: str) -> tuple[str, list[tuple[str, float]]]:
    """A rendered figure's shape (the text between its numbers, as a JSON list: no character
    of the text can pass for a number's place) and its numbers, as printed and read."""
    tokens = [(m.group(), float(m.group())) for m in _NUMBER.finditer(text)]
    return json.dumps(_NUMBER.split(text)), tokens


def _texts(rendered: dict[str, str], gaps: list[float] | None) -> dict[str, Figure]:
    """The figures of rendered texts (a claim's figure in each order, as the audit prints it):
    each text's shape, compared exactly, and each of its numbers.

    A number's tolerance is the claim's (its hand-given one, or its published figure's) where
    the numbers match its figures one to one; else the gap of two draws over the texts of the
    same shape (the orders'), their k-th numbers taken as the figure's draws. Both sides'
    printing slack is added when compared: the old and the new number are each rounded.
    """
    parsed = {name: _parse(text) for name, text in rendered.items()}
    draws: dict[str, list[list[float]]] = {}
    for shape, tokens in parsed.values():
        draws.setdefault(shape, []).append([value for _, value in tokens])
    out: dict[str, Figure] = {}
    for name, (shape, tokens) in parsed.items():
        order = _order_of(name)
        out[name] = Figure(name, shape, 0.0, text=rendered[name], order=order)
        columns = list(zip(*draws[shape], strict=True))
        for k, (token, value) in enumerate(tokens):
            tolerance = _at(gaps, k, len(tokens))
            if tolerance is None:
                tolerance = _spread_gap(columns[k])
            number = f"{name}[{k}]"
            slack = _printed_half_unit(token)
            span = (min(columns[k]), max(columns[k]))
            out[number] = Figure(number, value, tolerance, slack, within=name, order=order, span=span)  # fmt: skip
    return out


def _order_of(name: str) -> str:
    """The order of a per-order figure's name ("orders.NAME.measured" or "orders.NAME")."""
    inner = name.removeprefix("orders.")
    return inner.removesuffix(".measured") if inner != name else name


def _spread_gap(values: tuple[float, ...]) -> float | None:
    """The gap of two draws, the draws given; None when they are not finite numbers."""
    if not all(math.isfinite(v) for v in values):
        return None
    try:
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
    except OverflowError:  # a spread beyond float64: nothing to judge by
        return None
    return draw_gap(sd, len(values))


def _published(published: Any, gaps: list[float] | None) -> dict[str, Figure]:
    """A figure claim's prediction intervals (`details.figures[i]`): the verdict is the
    published figure against its interval, so both ends are compared (with the figure's
    tolerance: an end moves less than a draw unless the orders' spread changed, which the
    ends then show) and the number of orders (a count: exactly)."""
    out: dict[str, Figure] = {}
    for i, figure in enumerate(published if isinstance(published, list) else []):
        if not isinstance(figure, dict):
            continue
        interval = figure.get("interval")
        if isinstance(interval, list) and len(interval) == 2:
            for name, _, value in _leaves(interval, f"figures[{i}].interval", None):
                out[name] = Figure(name, value, _at(gaps, i, len(published)), per_count=True)
        if _is_number(figure.get("orders")):
            name = f"figures[{i}].orders"
            out[name] = Figure(name, figure["orders"], 0.0, per_count=True)
    return out


def _effects(effects: Any, orders: list[str]) -> dict[str, Figure]:
    """A threshold claim's effects (`details.effects[i]`): its name, compared exactly (its
    region is part of the claim's definition, `_definition`); its faithful figure and one
    figure per order (`values`, in the order of `orders`), with the gap of two draws over
    the orders (the sd of `values`) as tolerance and their `range` as span."""
    out: dict[str, Figure] = {}
    for i, effect in enumerate(effects if isinstance(effects, list) else []):
        if not isinstance(effect, dict):
            continue
        if isinstance(effect.get("effect"), str):
            name = f"effects[{i}].effect"
            out[name] = Figure(name, effect["effect"], 0.0, text=effect["effect"])
        values = effect.get("values")
        values = values if isinstance(values, list) else []
        numbers_ = [float(v) for v in values if _is_number(v) and math.isfinite(v)]
        gap = _spread_gap(tuple(numbers_)) if values and len(numbers_) == len(values) else None
        span = _span(effect.get("range"))
        if _is_number(effect.get("faithful")):
            name = f"effects[{i}].faithful"
            out[name] = Figure(name, float(effect["faithful"]), gap, span=span)
        named = len(values) == len(orders)
        for j, value in enumerate(values):
            if _is_number(value):
                name = f"effects[{i}].values[{j}]"
                order = orders[j] if named else f"#{j}"
                out[name] = Figure(name, float(value), gap, order=order, span=span)
    return out


def _span(value: Any) -> tuple[float, float] | None:
    """A recorded range [low, high] of finite numbers, else None."""
    if isinstance(value, list) and len(value) == 2 and all(_is_number(v) for v in value):
        low, high = float(value[0]), float(value[1])
        return (low, high) if math.isfinite(low) and math.isfinite(high) else None
    return None


def figures(claim: dict) -> dict[str, Figure]:
    """The figures a claim's verdict rests on, each with its tolerance: how far it may move
    from the old run's value before the diff calls it moved (the derivations are beside each
    part; `draw_gap` is the rule).

    - A hand-given tolerance ("± 0.36", "± 0.1, 0.2") is the tolerance of the claim's figures.
    - A figure claim (`details.figures`): its measured figure(s) (`measured_value(s)`) and its
      figure in each order, with the gap of two draws over its orders plus the published
      figure's printing half unit; the ends of each prediction interval and its number of
      orders (`_published`).
    - A qualitative claim: its figure in each order as the audit prints it
      (`details.orders[name].measured`, the faithful order's is the claim's `measured`): the
      text, exactly, and its numbers (`_texts`).
    - A threshold claim's effects (`details.effects`, `_effects`).
    Other details (bootstrap intervals, per-seed figures, notes) never change a verdict and
    are not compared.
    """
    details = claim.get("details")
    if not isinstance(details, dict):
        return {}
    gaps = tolerances(claim.get("tolerance")) or _figure_rule_gaps(details.get("figures"))
    out: dict[str, Figure] = {}
    span = _span(details.get("range_over_orders"))
    for key in ("measured_value", "measured_values"):
        for name, index, value in _leaves(details.get(key), key, None):
            out[name] = Figure(name, value, _at(gaps, index), span=span if index is None else None)  # fmt: skip
    out |= _published(details.get("figures"), gaps)
    out |= _effects(details.get("effects"), order_names(claim))
    rendered: dict[str, str] = {}
    orders = details.get("orders")
    for order, entry in (orders if isinstance(orders, dict) else {}).items():
        measured = entry.get("measured") if isinstance(entry, dict) else entry
        name = f"orders.{order}.measured" if isinstance(entry, dict) else f"orders.{order}"
        if isinstance(measured, str):
            rendered[name] = measured
        for number, index, value in _leaves(measured, name, None):
            out[number] = Figure(number, value, _at(gaps, index), order=order)
    return out | _texts(rendered, gaps)


def order_names(claim: dict) -> list[str]:
    """The float orders a claim was judged in (`details.orders`), the faithful first."""
    details = claim.get("details")
    orders = details.get("orders") if isinstance(details, dict) else None
    return list(orders) if isinstance(orders, dict) else []


def definition(claim: dict) -> dict[str, Any]:
    """What defines a claim beside its verdict: `DEFINITION` (less a figure claim's
    tolerance, its prediction intervals, compared as figures), its reading and each
    threshold's region."""
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
    """How many times over a draw moved (inf: it changed sign), when that is `FOLD` or more,
    beyond both printings' slack and outside the range of either run's orders; else None."""
    a, b = old.value, new.value
    if isinstance(a, str) or isinstance(b, str) or (old.span is None and new.span is None):
        return None
    if not (math.isfinite(a) and math.isfinite(b)) or abs(b - a) <= old.slack + new.slack:
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
        out: dict[tuple[str, ...], Any] = {}
        for key, item in value.items():
            out.update(_flatten(item, (*path, str(key))))
        return out
    return {path: value}


def _key_name(path: tuple[str, ...]) -> str:
    """A metadata path as shown: keys joined by dots, a key that holds a dot (or is empty)
    quoted, so that {"a.b": 1} and {"a": {"b": 1}} read apart."""
    return ".".join(key if key and "." not in key else json.dumps(key) for key in path)


def _metadata_changes(old: dict, new: dict) -> list[tuple[str, Any, Any]]:
    def flat(meta: dict) -> dict[tuple[str, ...], Any]:
        kept = {k: v for k, v in meta.items() if k not in VOLATILE_METADATA}
        return _flatten(kept)

    a, b = flat(old), flat(new)
    missing = "(absent)"
    return [
        (_key_name(key), a.get(key, missing), b.get(key, missing))
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
    # A text that changed shape or that one side lacks is compared whole, not its numbers.
    whole = {
        name
        for name, figure in (*before.items(), *after.items())
        if figure.text is not None
        and (name not in before or name not in after or before[name].value != after[name].value)
    }
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if (a if a is not None else b).within in whole:  # type: ignore[union-attr]
            continue
        if b is None:
            diff.lost.append((claim_id, name, "disappeared"))
            continue
        if a is None:
            diff.figures_only_in_one.append((claim_id, name, "new"))
            continue
        if isinstance(a.value, str) or isinstance(b.value, str):
            if a.value != b.value:
                diff.moved.append(Moved(claim_id, name, a.text or a.value, b.text or b.value, None))
            continue
        if not math.isfinite(b.value):
            if math.isfinite(a.value):
                diff.lost.append((claim_id, name, f"{_number(a.value)} -> {b.value}"))
            continue
        if a.value == b.value:
            continue
        tolerance = a.tolerance if a.tolerance is not None else b.tolerance
        if tolerance is not None and math.isfinite(a.value):
            tolerance += a.slack + b.slack
        else:  # no tolerance, or no old number to measure a move from
            tolerance = None
        moved = Moved(claim_id, name, a.value, b.value, tolerance)
        fold = several_fold(a, b)
        if tolerance is not None and abs(b.value - a.value) > tolerance:
            diff.moved.append(moved)
        elif fold is not None:
            diff.moved.append(Moved(claim_id, name, a.value, b.value, tolerance, fold))
        elif tolerance is None:
            diff.changed_untoleranced.append(moved)


def compare(old: dict, new: dict) -> AuditDiff:
    """What changed from `old` to `new` (two audits as `load` returns them)."""
    diff = AuditDiff()
    old_claims = {c["id"]: c for c in old["claims"]}
    new_claims = {c["id"]: c for c in new["claims"]}
    diff.only_old = [c for i, c in old_claims.items() if i not in new_claims]
    diff.only_new = [c for i, c in new_claims.items() if i not in old_claims]
    for claim_id, a in old_claims.items():
        b = new_claims.get(claim_id)
        if b is None:
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
    """`text` with each character a terminal could act on (an escape sequence's ESC or CSI,
    "\r", a backspace, a bidi override) written as its Python escape: an audit.json from
    elsewhere cannot erase, rewrite or hide a line of the diff."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def _cut(text: str) -> str:
    """`text`, cut to SHOWN_CHARS with its length said when longer."""
    if len(text) <= SHOWN_CHARS:
        return text
    return f"{text[:SHOWN_CHARS]}... ({len(text):,} characters)"


def _value(value: Any, key: str = "") -> str:
    if key == "command" and isinstance(value, list):
        text = shlex.join(map(str, value))
    elif isinstance(value, list):
        text = ", ".join(map(str, value))
    else:
        text = json.dumps(value) if not isinstance(value, str) else value
    return _cut(text)


def _moved_line(m: Moved) -> str:
    if isinstance(m.old, str) or isinstance(m.new, str):
        old, new = (_cut(json.dumps(v, ensure_ascii=False)) for v in (m.old, m.new))
        change = f"{old} -> {new} (changed)"
        return f"  {m.claim_id:<16} {m.figure:<22} {change}"
    change = f"{_number(m.old)} -> {_number(m.new)} (moved {_number(abs(m.new - m.old))}"
    if m.fold is not None:
        fold = "changed sign" if math.isinf(m.fold) else f"{m.fold:.3g}-fold"
        change += f", {fold} beyond both runs' orders"
    limit = "" if m.tolerance is None else f", tolerance {_number(m.tolerance)}"
    return f"  {m.claim_id:<16} {m.figure:<22} {change}{limit})"


def _claim_line(claim: dict) -> str:
    where = f"[{claim.get('document', '?')}] {claim.get('section', '?')}"
    return f"  {claim['id']:<16} {claim['verdict']:<10} {where}"


def _orders_lines(changes: list[tuple[str, int, int]]) -> list[str]:
    """One line per change of the number of orders (e.g. `--orders 3` -> 6), with its claims."""
    by_change: dict[tuple[int, int], list[str]] = {}
    for claim_id, a, b in changes:
        by_change.setdefault((a, b), []).append(claim_id)
    lines = []
    for (a, b), ids in by_change.items():
        shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
        count = f"{len(ids)} claim" + ("s" if len(ids) > 1 else "")
        lines.append(f"  orders per claim: {a} -> {b} ({count}: {shown})")
    return lines


def render(diff: AuditDiff, old_name: str, new_name: str, *, verbose: bool = False) -> list[str]:
    """The report diff prints, every character printable (`_printable`); `verbose` also lists
    figures with no tolerance that changed."""
    lines = [f"old: {old_name}", f"new: {new_name}", ""]
    if diff.verdicts:
        lines.append(f"Verdicts changed ({len(diff.verdicts)}):")
        for a, b in diff.verdicts:
            where = f"[{b.get('document', '?')}] {b.get('section', '?')}"
            lines.append(f"  {b['id']:<16} {a['verdict']} -> {b['verdict']}   {where}")
            lines.append(
                f"  {'':<16} published {b.get('published', '?')}; measured "
                f"{a.get('measured', '?')} -> {b.get('measured', '?')}; tolerance {b.get('tolerance', '?')}"
            )
    for claims, side in ((diff.only_old, old_name), (diff.only_new, new_name)):
        if claims:
            lines.append(f"Claims only in {side} ({len(claims)}):")
            lines += [_claim_line(c) for c in claims]
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
    if diff.changed_untoleranced:
        count = len(diff.changed_untoleranced)
        if verbose:
            lines.append(f"Figures with no tolerance to judge by that changed ({count}):")
            lines += [_moved_line(m) for m in diff.changed_untoleranced]
        else:
            lines.append(f"{count} figures with no tolerance to judge by changed (-v lists them).")
    if diff.figures_only_in_one:
        lines.append(f"Figures recorded in one file only ({len(diff.figures_only_in_one)}):")
        lines += [
            f"  {claim_id:<16} {name} (only in {new_name})"
            for claim_id, name, _ in diff.figures_only_in_one
        ]
    if diff.definitions:
        lines.append(
            "Published figures, tolerances, readings, regions, expectations, statements, "
            f"documents or sections changed ({len(diff.definitions)}):"
        )
        lines += [
            f"  {claim_id:<16} {key}: {_value(a)} -> {_value(b)}"
            for claim_id, key, a, b in diff.definitions
        ]
    lines.append("")
    orders = _orders_lines(diff.orders)
    if diff.metadata or orders:
        lines.append(f"Metadata changed ({len(diff.metadata) + len(orders)}):")
        lines += orders
        lines += [
            f"  {_cut(key)}: {_value(a, key)} -> {_value(b, key)}" for key, a, b in diff.metadata
        ]
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
