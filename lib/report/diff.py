"""Compare two audit.json files: which verdicts, figures and run metadata moved.

`python -m uncertainty_claims.report diff OLD.json NEW.json` prints

- claims whose verdict changed, and claims present in only one file (verdicts are compared
  as strings, whatever their names);
- figures that moved by more than their tolerance, with both values (a figure is a number
  in a claim's `details`: `measured_value`, `measured_values`, per-order `orders`, ...;
  its tolerance is parsed from the claim's `tolerance`, "± 0.36" or "± 0.1, 0.2");
- published figures or tolerances that changed, and changed run metadata (commit, device,
  versions, ...; creation time, wall time and cache activity are left out: they change on
  every run).

Exit status, the gate CI reads:
- 0: no verdict moved (figures may have moved within a verdict; they are listed);
- 1: a verdict moved: a verdict changed, a claim appeared or disappeared, or a measured
  figure became NaN or infinite or disappeared (the new audit can no longer judge it);
- 2: an input is unreadable or malformed (not JSON, not an audit, a schema_version newer
  than this code, numbers of hundreds of digits, nesting deeper than an audit has), said in
  one line on stderr.
"""

from __future__ import annotations

import json
import math
import numbers
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..render.documents import SCHEMA_VERSION

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
    """One number a claim measured: where it sits in `details`, its value and tolerance."""

    name: str
    value: float
    tolerance: float | None


@dataclass(frozen=True)
class Moved:
    claim_id: str
    figure: str
    old: float
    new: float
    tolerance: float | None


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
    metadata: list[tuple[str, Any, Any]] = field(default_factory=list)

    @property
    def verdicts_moved(self) -> bool:
        """A verdict changed, or a claim appeared or disappeared."""
        return bool(self.verdicts or self.only_old or self.only_new)

    @property
    def gate_fails(self) -> bool:
        """A verdict moved, or a figure became non-finite or disappeared: diff exits 1."""
        return self.verdicts_moved or bool(self.lost)


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


_MEASURED = ("measured_value", "measured_values", "orders")


def _interval_half_widths(figures: Any) -> list[float] | None:
    """A figure claim's tolerances: the half widths of its prediction intervals."""
    try:
        widths = [(f["interval"][1] - f["interval"][0]) / 2 for f in figures]
    except (TypeError, KeyError, IndexError):
        return None
    return widths if all(_is_number(w) and math.isfinite(w) and w >= 0 for w in widths) else None


def figures(claim: dict) -> dict[str, Figure]:
    """The measured numbers in a claim's details, each with its tolerance where one applies.

    A figure's tolerance is the claim's tolerance at the figure's list index (one tolerance
    serves every figure); None when the claim has no numeric tolerance or the counts differ.
    """
    details = claim.get("details")
    if not isinstance(details, dict):
        return {}
    tols = tolerances(claim.get("tolerance"))
    if tols is None:
        tols = _interval_half_widths(details.get("figures"))
    out: dict[str, Figure] = {}
    for key in _MEASURED:
        if key not in details:
            continue
        for name, index, value in _leaves(details[key], key, None):
            tolerance = None
            if tols is not None and len(tols) == 1:
                tolerance = tols[0]
            elif tols is not None and index is not None and index < len(tols):
                tolerance = tols[index]
            out[name] = Figure(name, value, tolerance)
    return out


# --------------------------------------------------------------------------- comparing


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for key, item in value.items():
            out.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def _metadata_changes(old: dict, new: dict) -> list[tuple[str, Any, Any]]:
    def flat(meta: dict) -> dict[str, Any]:
        kept = {k: v for k, v in meta.items() if k not in VOLATILE_METADATA}
        return _flatten(kept)

    a, b = flat(old), flat(new)
    missing = "(absent)"
    return [
        (key, a.get(key, missing), b.get(key, missing))
        for key in sorted(set(a) | set(b))
        if a.get(key, missing) != b.get(key, missing)
    ]


def _compare_figures(claim_id: str, old: dict, new: dict, diff: AuditDiff) -> None:
    before, after = figures(old), figures(new)
    for name in sorted(set(before) | set(after)):
        if name not in after:
            diff.lost.append((claim_id, name, "disappeared"))
            continue
        if name not in before:
            diff.figures_only_in_one.append((claim_id, name, "new"))
            continue
        a, b = before[name], after[name]
        if not math.isfinite(b.value):
            if math.isfinite(a.value):
                diff.lost.append((claim_id, name, f"{_number(a.value)} -> {b.value}"))
            continue
        if a.value == b.value:
            continue
        tolerance = b.tolerance if b.tolerance is not None else a.tolerance
        moved = Moved(claim_id, name, a.value, b.value, tolerance)
        if tolerance is None:
            diff.changed_untoleranced.append(moved)
        elif abs(b.value - a.value) > tolerance:
            diff.moved.append(moved)


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
        for key in ("published", "tolerance", "expected_to_hold"):
            if a.get(key) != b.get(key):
                diff.definitions.append((claim_id, key, a.get(key), b.get(key)))
        _compare_figures(claim_id, a, b, diff)
    diff.metadata = _metadata_changes(old.get("metadata", {}), new.get("metadata", {}))
    return diff


# --------------------------------------------------------------------------- printing


def _number(value: float) -> str:
    return f"{value:.6g}"


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
    change = f"{_number(m.old)} -> {_number(m.new)} (moved {_number(abs(m.new - m.old))}"
    limit = "" if m.tolerance is None else f", tolerance {_number(m.tolerance)}"
    return f"  {m.claim_id:<16} {m.figure:<22} {change}{limit})"


def _claim_line(claim: dict) -> str:
    where = f"[{claim.get('document', '?')}] {claim.get('section', '?')}"
    return f"  {claim['id']:<16} {claim['verdict']:<10} {where}"


def render(diff: AuditDiff, old_name: str, new_name: str, *, verbose: bool = False) -> list[str]:
    """The report diff prints; `verbose` also lists figures with no tolerance that changed."""
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
    if not diff.gate_fails:
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
            f"Published figures, tolerances or expectations changed ({len(diff.definitions)}):"
        )
        lines += [
            f"  {claim_id:<16} {key}: {_value(a)} -> {_value(b)}"
            for claim_id, key, a, b in diff.definitions
        ]
    lines.append("")
    if diff.metadata:
        lines.append(f"Metadata changed ({len(diff.metadata)}):")
        lines += [
            f"  {_cut(key)}: {_value(a, key)} -> {_value(b, key)}" for key, a, b in diff.metadata
        ]
    else:
        lines.append("Metadata: unchanged (creation time, wall time and cache activity aside).")
    return lines


def main(old_path: str, new_path: str, *, verbose: bool = False) -> int:
    """Print the diff of two audit.json files; the exit status (0, 1 or 2, see the module)."""
    try:
        old, new = load(old_path), load(new_path)
    except AuditFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    diff = compare(old, new)
    print("\n".join(render(diff, str(old_path), str(new_path), verbose=verbose)))
    return 1 if diff.gate_fails else 0
