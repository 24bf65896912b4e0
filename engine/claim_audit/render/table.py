"""The terminal's claims table, grouped by document and section, and the robustness tables
printed after it, laid out by rich."""

from __future__ import annotations

import io
import re
import textwrap
from itertools import groupby
from typing import Any

from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from ..engine.claim import VERDICTS, ClaimRecord
from . import robustness
from .robustness import ci_text, holding, interval_text, seed_range

_FIELDS = ("id", "published", "measured", "tolerance", "verdict")
_SHARES = {"published": 5, "measured": 5, "tolerance": 4}  # of the width left after id, verdict
_VERDICT_WIDTH = 12


def _lines(renderables: list[RenderableType], width: int) -> list[str]:
    """`renderables` as plain text `width` columns wide, what is too long cut with "…"."""
    console = Console(file=io.StringIO(), width=width, color_system=None, highlight=False)
    with console.capture() as captured:
        for renderable in renderables:
            console.print(renderable, no_wrap=True, overflow="ellipsis", crop=True)
    return [line.rstrip() for line in captured.get().splitlines()]


def _table(
    columns: list[tuple[str, dict]], rows: list[tuple[str, ...]], header: bool, expand: bool = False
) -> Table:
    """A borderless table, one space between columns, each column with its `add_column` options."""
    options = {"show_header": header, "header_style": "", "pad_edge": False, "expand": expand}
    table = Table(box=None, padding=(0, 1, 0, 0), **options)
    for name, layout in columns:
        table.add_column(name, no_wrap=True, overflow="ellipsis", **layout)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    return table


def verdict_label(record: ClaimRecord, expected: bool) -> str:
    """holds / sensitive / inconclusive / refuted* (a recorded finding) / REFUTED /
    FINDING GONE (a recorded finding not refuted) / ERROR."""
    if record.verdict == "error":
        return "ERROR"
    if record.verdict == "refuted":
        if record.details.get("gates") is False:
            return "refuted†"
        return "refuted*" if not expected else "REFUTED"
    return record.verdict if expected else "FINDING GONE"


_COUNTED = {"document": "document claim", "suite": "suite check"}


def verdict_counts(
    records: list[ClaimRecord], expected: dict[str, bool]
) -> dict[str, dict[str, int]]:
    """Per origin (document, suite): the total, each verdict's count, known findings, timings."""
    out = {}
    for origin in _COUNTED:
        mine = [r for r in records if r.origin == origin]
        refuted = [r for r in mine if r.verdict == "refuted"]
        out[origin] = {
            "total": len(mine),
            **{verdict: sum(r.verdict == verdict for r in mine) for verdict in VERDICTS},
            "known_findings": sum(not expected.get(r.id, True) for r in refuted),
            "timings": sum(r.details.get("gates") is False for r in refuted),
        }
    return out


def summary_line(records: list[ClaimRecord], expected: dict[str, bool]) -> str:
    """`verdict_counts` in a sentence, the documents' claims and the suite's checks apart."""
    parts = []
    for origin, c in verdict_counts(records, expected).items():
        if c["total"] or origin == "document":
            counted = _COUNTED[origin] + ("" if c["total"] == 1 else "s")
            timings = f", {c['timings']} of this machine's timing" if c["timings"] else ""
            parts.append(
                f"{c['total']} {counted}: {c['holds']} hold, "
                f"{c['refuted']} refuted ({c['known_findings']} known findings{timings}), "
                f"{c['sensitive']} sensitive, {c['inconclusive']} inconclusive, {c['error']} errors"
            )
    return "; ".join(parts)


FOOTNOTES = {
    "refuted*": "refuted*: refuted over the float orders, a recorded finding; never fails",
    "sensitive": "sensitive: some valid float orders give the claim and some do not (the "
    "share that do lies confidently between the lines); never fails the run",
    "inconclusive": "inconclusive: the draws cannot yet tell (too few, or collapsed to one), or "
    "a figure's interval cannot tell it from 0 or from one half as large again, or the run "
    "cannot measure the claim; never a pass, never fails the run",
    "FINDING GONE": "FINDING GONE: a recorded finding is no longer refuted; the run fails",
    "refuted†": "refuted†: a benchmark figure of this machine (a timing); never fails the run",
}


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that reads the digits of `text` as numbers: calib-2 before calib-10."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part
    )


def ordered(records: list[ClaimRecord]) -> list[ClaimRecord]:
    """By document, sections by their first id (health last), then id, in natural order."""
    first_id: dict[tuple[str, str], str] = {}
    for r in records:
        key = (r.document, r.section)
        first_id[key] = min(first_id.get(key, r.id), r.id, key=natural_key)

    def key(r: ClaimRecord) -> tuple:
        first = natural_key(first_id[r.document, r.section])
        return (r.document, r.id.startswith("H-"), first, r.section, natural_key(r.id))

    return sorted(records, key=key)


def render(
    records: list[ClaimRecord], expected: dict[str, bool], *, width: int = 80, verbosity: int = 0
) -> list[str]:
    """Lines of the table `width` columns wide, ids and verdicts whole, the figures sharing the
    rest, cut with "…". `verbosity` (pytest's -v / -q count): 1 or more, every cell whole;
    -1, only the claims that do not hold; -2, the summary line alone."""
    summary = summary_line(records, expected)
    if verbosity <= -2:
        return [summary]
    labels = {r.id: verdict_label(r, expected.get(r.id, True)) for r in records}
    shown = [r for r in ordered(records) if verbosity > -1 or labels[r.id] != "holds"]
    rows = {r.id: (r.id, r.published, r.measured, r.tolerance, labels[r.id]) for r in shown}
    longest = [
        max([len(name), *(len(row[i]) for row in rows.values())]) for i, name in enumerate(_FIELDS)
    ]
    longest[4] = max(longest[4], _VERDICT_WIDTH)
    whole = verbosity > 0
    columns = [
        (name, {"min_width": n} if whole or name in ("id", "verdict") else {"ratio": _SHARES[name]})
        for name, n in zip(_FIELDS, longest, strict=True)
    ]
    rule = sum(longest) + len(_FIELDS) - 1 if whole else width
    width = max(width, rule)

    # A table per row, all of the same column widths, between full-width lines (a section's
    # name, a claim's intervals).
    parts: list[RenderableType] = [_table(columns, [], header=True, expand=not whole)]
    for (document, section), group in groupby(shown, key=lambda r: (r.document, r.section)):
        parts.append(Text(f"[{document}] {section}"))
        for r in group:
            parts.append(_table(columns, [rows[r.id]], header=False, expand=not whole))
            parts += [
                Text(f"{'':{longest[0] + 1}}{ci_text(ci)}") for ci in r.details.get("ci") or []
            ]
    lines = ["", " CLAIMS AUDIT ".center(rule, "="), *_lines(parts, width), "-" * rule]
    lines.extend(textwrap.wrap(summary, width))
    for label, text in FOOTNOTES.items():
        if label in labels.values():
            lines.extend(textwrap.wrap(text, width, subsequent_indent="  "))
    return lines


# --------------------------------------------------------------------------- robustness


_SWEEP = (("id", "effect", "holds on", "value", "95% CI", "label"), (16, 21, 8, 7, 16, 7))
_SENSITIVITY = (("claim", "variant", "value", "holds", "holds on", "value"), (8, 28, 7, 6, 9, 7))


def _fixed(
    columns: tuple[tuple[str, ...], tuple[int, ...]], rows: list[tuple], n: int
) -> list[str]:
    """`rows` under the first `n` of `columns` (names, widths), each of a fixed width."""
    layout = [(name, {"width": width}) for name, width in zip(*columns, strict=True)][:n]
    return _lines([_table(layout, rows, header=True)], 80)


def render_robustness(section: dict[str, Any]) -> list[str]:
    """Lines of the robustness tables (audit.json's `robustness`); each fits in 80 columns."""
    sweep, methods = section["sweep_seeds"], section["methods"]
    beside = f"{robustness.BESIDE} {robustness.methods_text(methods)}"
    lines = ["", "ROBUSTNESS".center(78, "="), *textwrap.wrap(beside, 78), ""]
    if sweep is None:
        lines += textwrap.wrap(f"Across other seeds. {robustness.NOT_RUN}", 78)
    else:
        rows = []
        for claim_id, k, s in robustness.sweep_effects(section["claims"]):
            ci = interval_text(s["intervals"][k])
            ci = ci if len(ci) <= 16 else interval_text(s["intervals"][k], digits=2)
            first = (claim_id, holding(s), s["label"]) if k == 0 else ("", "", "")
            rows.append(
                (first[0], s["effects"][k], first[1], f"{s['values'][k]:.4g}", ci, first[2])
            )
        lines += [f"Each comparative claim on seeds {seed_range(sweep)}", *_fixed(_SWEEP, rows, 6)]
        for text in (
            f"holds on: {methods['holds_on']}",
            f"value: {methods['value']}",
            methods["labels"],
        ):
            lines += textwrap.wrap(text, 78)
    if section["sensitivity"]:
        where = f"seeds {seed_range(section['published_seeds'])}"
        if sweep is not None:
            where += f"; holds on, value: seeds {seed_range(sweep)}"
        rows = []
        for row in section["sensitivity"]:
            value, holds, after = robustness.sensitivity_cells(row, sweep is not None)
            variant = row["variant"] + (" *" if row["post_choice"] else "")
            rows.append((row["claim_id"], variant, value, "yes" if holds else "no", *after))
        lines += ["", f"Choices the document fixed (value, holds: {where})"]
        lines += [*_fixed(_SENSITIVITY, rows, 4 if sweep is None else 6), "* the document's choice"]
    return [*lines, "-" * 78]
