"""The terminal's claims table, by document and section, and audit.md's robustness tables, by rich."""

from __future__ import annotations

import io
import re
import textwrap
from itertools import groupby
from typing import Any

from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

from ..engine.claim import VERDICTS, ClaimRecord
from . import markdown
from .markdown import NOTES, ci_text

_FIELDS = ("id", "published", "measured", "tolerance", "verdict")
_SHARES = {"published": 5, "measured": 5, "tolerance": 4}  # of the width left after id, verdict
_VERDICT_WIDTH = 12


def _lines(renderables: list[RenderableType], width: int, wrap: bool = False) -> list[str]:
    """`renderables` as plain text `width` columns wide, wrapped or cut with "…"."""
    console = Console(file=io.StringIO(), width=width, color_system=None, highlight=False)
    with console.capture() as captured:
        for renderable in renderables:
            console.print(renderable, no_wrap=not wrap, overflow="fold" if wrap else "ellipsis")
    return [line.rstrip() for line in captured.get().splitlines()]


def _table(columns: list[tuple[str, dict]], row: tuple[str, ...] | None, expand: bool) -> Table:
    """A borderless table, one space between columns: the header alone (`row` None), or `row`."""
    options = {"show_header": row is None, "header_style": "", "pad_edge": False, "expand": expand}
    table = Table(box=None, padding=(0, 1, 0, 0), **options)
    for name, layout in columns:
        table.add_column(name, no_wrap=True, overflow="ellipsis", **layout)
    if row is not None:
        table.add_row(*map(Text, row))
    return table


_COUNTED = {"document": "document claim", "suite": "suite check"}


def verdict_counts(records: list[ClaimRecord], expected: dict[str, bool]) -> dict[str, dict]:
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
    labels = {
        r.id: markdown.verdict_label(r.verdict, r.details, expected.get(r.id, True))
        for r in records
    }
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

    # A table per row, all of the same widths, between full-width lines (section, intervals).
    parts: list[RenderableType] = [_table(columns, None, expand=not whole)]
    for (document, section), group in groupby(shown, key=lambda r: (r.document, r.section)):
        parts.append(Text(f"[{document}] {section}"))
        for r in group:
            parts.append(_table(columns, rows[r.id], expand=not whole))
            parts += [
                Text(f"{'':{longest[0] + 1}}{ci_text(ci)}") for ci in r.details.get("ci") or []
            ]
    lines = ["", " CLAIMS AUDIT ".center(rule, "="), *_lines(parts, width), "-" * rule]
    lines.extend(textwrap.wrap(summary, width))
    for label, text in NOTES.items():
        if label in labels.values():
            lines.extend(textwrap.wrap(text, width, subsequent_indent="  "))
    return lines


def render_robustness(section: dict[str, Any], width: int = 80) -> list[str]:
    """audit.md's robustness tables but the per-seed figures, laid out `width` columns wide."""
    lines = markdown.render_robustness({**section, "figure_intervals": None})[1:]
    if section["figure_intervals"]:
        lines += ["Each seed's figures with their intervals: audit.md, section Robustness."]
    body = Markdown("\n".join(lines))  # under our own title
    return ["", " ROBUSTNESS ".center(width, "="), *_lines([body], width, wrap=True), "-" * width]
