"""The terminal's claims table, by document and section, and audit.md's robustness tables, by rich."""

from __future__ import annotations

import html
import io
import re
import textwrap
from itertools import groupby
from typing import Any

from rich import box
from rich.console import Console, RenderableType
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

from ..engine.claim import VERDICTS, ClaimRecord
from . import markdown
from .cells import figure_cells
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


def _unrecorded(record: ClaimRecord, expected: dict[str, bool]) -> bool:
    """Refuted, gating the run, and not a recorded finding: what fails the run."""
    gates = record.details.get("gates") is not False
    return record.verdict == "refuted" and gates and expected.get(record.id, True)


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
            "unrecorded": [r.id for r in ordered(refuted) if _unrecorded(r, expected)],
        }
    return out


def summary_line(records: list[ClaimRecord], expected: dict[str, bool]) -> str:
    """`verdict_counts` in a sentence, the documents' claims and the suite's checks apart."""
    parts = []
    for origin, c in verdict_counts(records, expected).items():
        if c["total"] or origin == "document":
            counted = _COUNTED[origin] + ("" if c["total"] == 1 else "s")
            timings = f", {c['timings']} of this machine's timing" if c["timings"] else ""
            named = f"; REFUTED: {', '.join(c['unrecorded'])}" if c["unrecorded"] else ""
            others = [f"{c[v]} {v}" for v in VERDICTS if v not in ("holds", "refuted", "error")]
            parts.append(
                f"{c['total']} {counted}: {c['holds']} hold, "
                f"{c['refuted']} refuted ({c['known_findings']} known findings{timings}{named}), "
                f"{', '.join(others)}, {c['error']} errors"
            )
    return "; ".join(parts)


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """A sort key that reads the digits of `text` as numbers: calib-2 before calib-10."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", text) if part
    )


def ordered(records: list[ClaimRecord]) -> list[ClaimRecord]:
    """By document, the document's own claims before the suite's checks (`origin`), sections
    by their first id, then id, in natural order."""
    by_id = sorted(records, key=lambda r: natural_key(r.id))
    rank: dict[tuple[str, str], int] = {}  # a section's, by its first id
    for r in by_id:
        rank.setdefault((r.document, r.section), len(rank))
    return sorted(
        by_id, key=lambda r: (r.document, r.origin != "document", rank[r.document, r.section])
    )


_SHORT_WORD = 12  # a word up to this long is kept whole where the room allows
_NUMBER = re.compile(r"[\[(<>=-]*\d[\d.,e+-]*[\])%]*,?")  # a figure as a cell prints it


def _grow(widths: list[int], caps: list[int], room: int, shares: list[int]) -> None:
    """Widen `widths` toward `caps` within `room`, the spare split by `shares`."""
    while (spare := room - sum(widths)) > 0:
        wanting = [i for i, w in enumerate(widths) if w < caps[i]]
        if not wanting:
            return
        total = sum(shares[i] for i in wanting)
        for i in wanting:
            widths[i] = min(caps[i], widths[i] + max(1, spare * shares[i] // total))
            if sum(widths) >= room:
                return


def _widths(cells: list[list[str]], room: int, shares: list[int]) -> list[int]:
    """Column widths within `room` for columns of `cells`: their natural widths if they fit;
    else each column's longest number and short word first (a number is never split where the
    room allows; a longer word folds), then widths that hold most cells (four in five) on one
    line, the columns that need least first, then the rest by `shares`."""
    natural = [max(map(len, column)) for column in cells]
    if sum(natural) <= room:
        return natural
    numbers = [max([len(w) for c in column for w in _NUMBER.findall(c)] or [1]) for column in cells]
    longest = [max(len(w) for c in column for w in c.split() or [""]) for column in cells]
    words = [max(n, min(w, _SHORT_WORD)) for n, w in zip(numbers, longest, strict=True)]
    if sum(words) > room:  # the words fold: the numbers alone kept whole
        words = numbers
    if sum(words) > room:  # too narrow for whole numbers: split by shares, folding
        return [max(1, room * share // sum(shares)) for share in shares]
    most = [sorted(map(len, column))[int(0.8 * (len(column) - 1))] for column in cells]
    widths = list(words)
    for i in sorted(range(len(cells)), key=lambda i: most[i] - words[i]):  # cheapest first
        widths[i] += max(0, min(most[i] - widths[i], room - sum(widths)))
    _grow(widths, natural, room, shares)
    return widths


def _row(cells: list[str], widths: list[int], header: bool = False) -> Table:
    """One row (or the header) in columns of `widths`, each cell wrapped, never cut."""
    table = Table(box=None, padding=(0, 1, 0, 0), pad_edge=False, show_header=header)
    table.header_style = ""
    for name, w in zip(_COLUMNS, widths, strict=True):
        table.add_column(name, width=w, no_wrap=False, overflow="fold")
    if not header:
        table.add_row(*(Text(cell.replace("\n", " ")) for cell in cells))
    return table


def render(
    records: list[ClaimRecord], expected: dict[str, bool], *, width: int = 80, verbosity: int = 0
) -> list[str]:
    """Lines of the table `width` columns wide, ids and verdicts whole, the figures sharing the
    rest, each wrapped in its column (a figure shown to its published digits is never cut).
    `verbosity` (pytest's -v / -q count): 1 or more, a row a line, as wide as its cells;
    -1, only the claims that do not hold; -2, the summary line alone."""
    summary = summary_line(records, expected)
    if verbosity <= -2:
        return [summary]
    labels = {r.id: verdict_label(r.verdict, r.details, expected.get(r.id, True)) for r in records}
    shown = [r for r in ordered(records) if verbosity > -1 or labels[r.id] != "holds"]
    cells = {r.id: [r.id, *figure_cells(r.to_json()), labels[r.id]] for r in shown}
    columns = [[row[i] for row in [list(_COLUMNS), *cells.values()]] for i in range(5)]
    natural = [max(map(len, column)) for column in columns]
    natural[4] = max(natural[4], *map(len, NOTES))
    gaps = len(_COLUMNS) - 1
    if verbosity > 0:
        widths = natural
    else:
        room = max(width - natural[0] - natural[4] - gaps, 3)
        shares = [_COLUMNS[name] for name in list(_COLUMNS)[1:4]]
        widths = [natural[0], *_widths(columns[1:4], room, shares), natural[4]]
    rule = max(width, sum(widths) + gaps)
    parts: list[RenderableType] = [_row(list(_COLUMNS), widths, header=True)]
    for (document, section), group in groupby(shown, key=lambda r: (r.document, r.section)):
        parts.append(Text(f"[{document}] {section}"))
        for r in group:
            parts.append(_row(cells[r.id], widths))
            indent = " " * (widths[0] + 1)
            for note in [
                *map(ci_text, r.details.get("ci") or []),
                *second_reading_notes(r.details),
            ]:
                wrapped = textwrap.wrap(note, rule, initial_indent=indent, subsequent_indent=indent)
                parts += map(Text, wrapped)
    lines = ["", " CLAIMS AUDIT ".center(rule, "="), *_lines(parts, rule, wrap=True)]
    lines.append("-" * rule)
    lines.extend(textwrap.wrap(summary, rule))
    for r in (r for r in ordered(records) if _unrecorded(r, expected)):  # what fails the run
        published, measured, tolerance = figure_cells(r.to_json())
        said = f"REFUTED {r.id} ({r.document}, {r.section}): {r.statement} Published {published}"
        said += f", measured {measured}, tolerance {tolerance}."
        lines.extend(textwrap.wrap(said, rule, subsequent_indent="  "))
    for label, text in NOTES.items():
        if label in labels.values():
            lines.extend(textwrap.wrap(text, rule, subsequent_indent="  "))
    return lines


def _cells(line: str) -> list[str]:
    """A Markdown table line's cells as text: escapes and entities undone."""
    cells = re.split(r"(?<!\\)\|", line.strip()[1:-1])
    return [
        html.unescape(re.sub(r"\\(.)", r"\1", cell.strip())).replace("**", "") for cell in cells
    ]


def _blocks(lines: list[str], width: int) -> list[RenderableType]:
    """Markdown `lines` for the terminal: each table a rich Table whose cells wrap (a word too
    long for its column folds, never cut with "…"), the text between as Markdown."""
    out: list[RenderableType] = []
    for is_table, group in groupby(lines, key=lambda line: line.startswith("|")):
        group = list(group)
        if not is_table:
            out.append(Markdown("\n".join(group)))
            continue
        header, _, *rows = map(_cells, group)
        columns = [[row[k] for row in (header, *rows)] for k in range(len(header))]
        room = width - 3 * len(header) + 1  # each cell's padding, a rule between columns
        widths = _widths(columns, room, [1] * len(header))
        grid = Table(box=box.SIMPLE_HEAD, padding=(0, 1), show_edge=False, header_style="bold")
        for name, w in zip(header, widths, strict=True):
            grid.add_column(name, width=w, overflow="fold")
        for row in rows:
            grid.add_row(*row)
        out += [grid, Text("")]
    return out


def render_robustness(section: dict[str, Any], width: int = 80) -> list[str]:
    """audit.md's robustness tables laid out `width` columns wide, each cell wrapped; each
    sweep seed's values and the per-seed figures are audit.md's alone (it says so)."""
    lines = markdown.render_robustness(section, per_seed=False)[1:]
    if section["figure_intervals"] or section["sweep_seeds"]:
        lines += ["Each seed's values and figures: audit.md, section Robustness."]
    body = _blocks(lines, width)  # under our own title
    return ["", " ROBUSTNESS ".center(width, "="), *_lines(body, width, wrap=True), "-" * width]
