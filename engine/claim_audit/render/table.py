"""The terminal's claims table, by document and section, and audit.md's robustness tables, by rich."""

from __future__ import annotations

import io
import re
import sys
import textwrap
from itertools import groupby
from typing import Any

from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ..engine.claim import VERDICTS, ClaimRecord
from . import markdown
from .markdown import NOTES, ci_text, second_reading_notes, verdict_label

# The columns, and the figures' shares of the width that id and verdict leave.
_COLUMNS = {"id": 0, "published": 5, "measured": 5, "tolerance": 4, "verdict": 0}


def _lines(renderables: list[RenderableType], width: int, wrap: bool = False) -> list[str]:
    """`renderables` as plain text `width` columns wide, wrapped or cut with "…"."""
    console = Console(file=io.StringIO(), width=width, color_system=None, highlight=False)
    with console.capture() as captured:
        for renderable in renderables:
            console.print(renderable, no_wrap=not wrap, overflow="fold" if wrap else "ellipsis")
    return [line.rstrip() for line in captured.get().splitlines()]


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
                f"{c['sensitive']} sensitive, {c['unpinned']} unpinned, "
                f"{c['inconclusive']} inconclusive, {c['error']} errors"
            )
    return "; ".join(parts)


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that reads the digits of `text` as numbers: calib-2 before calib-10."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part
    )


def ordered(records: list[ClaimRecord]) -> list[ClaimRecord]:
    """By document, sections by their first id (health last), then id, in natural order."""
    by_id = sorted(records, key=lambda r: natural_key(r.id))
    rank: dict[tuple[str, str], int] = {}  # a section's, by its first id
    for r in by_id:
        rank.setdefault((r.document, r.section), len(rank))
    return sorted(
        by_id, key=lambda r: (r.document, r.id.startswith("H-"), rank[r.document, r.section])
    )


def render(
    records: list[ClaimRecord], expected: dict[str, bool], *, width: int = 80, verbosity: int = 0
) -> list[str]:
    """Lines of the table `width` columns wide, ids and verdicts whole, the figures sharing the
    rest, cut with "…". `verbosity` (pytest's -v / -q count): 1 or more, every cell whole;
    -1, only the claims that do not hold; -2, the summary line alone."""
    summary = summary_line(records, expected)
    if verbosity <= -2:
        return [summary]
    labels = {r.id: verdict_label(r.verdict, r.details, expected.get(r.id, True)) for r in records}
    shown = [r for r in ordered(records) if verbosity > -1 or labels[r.id] != "holds"]
    id_width = max(map(len, ["id", *(r.id for r in shown)]))
    whole = verbosity > 0  # every cell whole; else the figures share what id and verdict leave
    table = Table(box=None, padding=(0, 1, 0, 0), header_style="", pad_edge=False, expand=not whole)
    for name, share in _COLUMNS.items():
        share = {"ratio": share} if share and not whole else {}
        widest = {"id": id_width, "verdict": max(map(len, NOTES))}.get(name)  # never cut
        table.add_column(name, no_wrap=True, overflow="ellipsis", min_width=widest, **share)
    for r in shown:  # a row a line: the lines between rows are placed by count
        cells = (r.id, r.published, r.measured, r.tolerance, labels[r.id])
        table.add_row(*(Text(cell.replace("\n", " ")) for cell in cells))
    wide = Console(width=sys.maxsize)
    rule = Measurement.get(wide, wide.options, table).maximum if whole else width
    width = max(width, rule)
    header, *rows = _lines([table], width)
    parts, rows = [header], iter(rows)
    for (document, section), group in groupby(shown, key=lambda r: (r.document, r.section)):
        parts.append(f"[{document}] {section}")
        for r in group:
            notes = [*map(ci_text, r.details.get("ci") or []), *second_reading_notes(r.details)]
            parts += [next(rows), *(f"{'':{id_width + 1}}{note}" for note in notes)]
    lines = ["", " CLAIMS AUDIT ".center(rule, "="), *_lines(list(map(Text, parts)), width)]
    lines.append("-" * rule)
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
