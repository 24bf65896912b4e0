"""The claims table at the terminal's width, grouped by document and section, and the
robustness tables printed after it."""

from __future__ import annotations

import re
import textwrap
from collections import Counter
from itertools import groupby
from typing import Any

from ..engine.claim import VERDICTS, ClaimRecord
from . import robustness
from .robustness import ci_text, interval_text

_FIELDS = ("id", "published", "measured", "tolerance", "verdict")
_SHARES = {"published": 5, "measured": 5, "tolerance": 4}  # of the width left after id, verdict
_VERDICT_WIDTH = 12


def _cell(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


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


_COUNTED = {
    "document": ("document claim", "document claims"),
    "suite": ("suite check", "suite checks"),
}


def verdict_counts(
    records: list[ClaimRecord], expected: dict[str, bool]
) -> dict[str, dict[str, int]]:
    """Per origin (the documents' claims, the suite's own checks): how many there are and how
    many hold, are refuted (known findings among them), sensitive, inconclusive, errored."""
    out = {}
    for origin in _COUNTED:
        mine = [r for r in records if r.origin == origin]
        counts = Counter(r.verdict for r in mine)
        out[origin] = {
            "total": len(mine),
            **{verdict: counts[verdict] for verdict in VERDICTS},
            "known_findings": sum(
                1 for r in mine if r.verdict == "refuted" and not expected.get(r.id, True)
            ),
            "timings": sum(
                1 for r in mine if r.verdict == "refuted" and r.details.get("gates") is False
            ),
        }
    return out


def summary_line(records: list[ClaimRecord], expected: dict[str, bool]) -> str:
    """The documents' claims and the suite's own checks counted apart: how many hold, are
    refuted (known findings among them), are sensitive to the float order, cannot be told
    by this run (inconclusive), errored."""
    parts = []
    for origin, c in verdict_counts(records, expected).items():
        if not c["total"] and origin == "suite":
            continue
        one, many = _COUNTED[origin]
        timings = f", {c['timings']} of this machine's timing" if c["timings"] else ""
        parts.append(
            f"{c['total']} {one if c['total'] == 1 else many}: {c['holds']} hold, {c['refuted']} "
            f"refuted ({c['known_findings']} known findings{timings}), {c['sensitive']} "
            f"sensitive, {c['inconclusive']} inconclusive, {c['error']} errors"
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
    """By document, then sections in the order of their first claim id (health last), then
    id; ids in natural order (calib-2 before calib-10)."""
    first_id: dict[tuple[str, str], str] = {}
    for r in records:
        key = (r.document, r.section)
        first_id[key] = min(first_id.get(key, r.id), r.id, key=natural_key)
    health_last = lambda r: r.id.startswith("H-")  # noqa: E731
    return sorted(
        records,
        key=lambda r: (
            r.document,
            health_last(r),
            natural_key(first_id[r.document, r.section]),
            r.section,
            natural_key(r.id),
        ),
    )


def _widths(rows: list[tuple[str, ...]], width: int, verbosity: int) -> tuple[int, ...]:
    """Column widths: every cell whole with -v; otherwise ids and verdicts whole and the
    terminal's width shared by the figures (never under 8 columns each)."""
    longest = [max([len(name), *(len(row[i]) for row in rows)]) for i, name in enumerate(_FIELDS)]
    if verbosity > 0:
        return tuple(longest)
    id_width, verdict_width = longest[0], max(longest[4], _VERDICT_WIDTH)
    rest = max(width - id_width - verdict_width - len(_FIELDS) + 1, 3 * 8)
    total = sum(_SHARES.values())
    shares = [max(8, rest * _SHARES[name] // total) for name in _FIELDS[1:4]]
    return (id_width, *shares, verdict_width)


def render(
    records: list[ClaimRecord], expected: dict[str, bool], *, width: int = 80, verbosity: int = 0
) -> list[str]:
    """Lines of the table, `width` columns wide (pytest's terminal width).

    verbosity (pytest's -v / -q count): 1 or more prints every cell whole (lines may run
    past `width`); -1 lists only the claims that do not hold; -2 the summary line alone.
    """
    summary = summary_line(records, expected)
    if verbosity <= -2:
        return [summary]
    labels = {r.id: verdict_label(r, expected.get(r.id, True)) for r in records}
    shown = [r for r in ordered(records) if verbosity > -1 or labels[r.id] != "holds"]
    rows = [(r.id, r.published, r.measured, r.tolerance, labels[r.id]) for r in shown]
    widths = _widths(rows or [_FIELDS], width, verbosity)
    rule = min(width, sum(widths) + len(widths) - 1)
    fit = (lambda text, w: text) if verbosity > 0 else _cell

    def line(cells: tuple[str, ...]) -> str:
        return " ".join(f"{fit(c, w):<{w}}" for c, w in zip(cells, widths, strict=True)).rstrip()

    lines = ["", " CLAIMS AUDIT ".center(rule, "="), line(_FIELDS)]
    for (document, section), group in groupby(shown, key=lambda r: (r.document, r.section)):
        lines.append(fit(f"[{document}] {section}", rule))
        for record in group:
            lines.append(
                line(
                    (
                        record.id,
                        record.published,
                        record.measured,
                        record.tolerance,
                        labels[record.id],
                    )
                )
            )
            for ci in record.details.get("ci", []):
                lines.append(fit(f"{'':{widths[0] + 1}}{ci_text(ci)}", max(rule, widths[0] + 1)))
    lines.append("-" * rule)
    lines.extend(textwrap.wrap(summary, width))
    for label, text in FOOTNOTES.items():
        if label in set(labels.values()):
            lines.extend(textwrap.wrap(text, width, subsequent_indent="  "))
    return lines


# --------------------------------------------------------------------------- robustness


def _row(cells: tuple[str, ...], widths: tuple[int, ...]) -> str:
    return " ".join(f"{_cell(c, w):<{w}}" for c, w in zip(cells, widths, strict=True)).rstrip()


_SWEEP = (("id", 16), ("effect", 21), ("holds on", 8), ("value", 7), ("95% CI", 16), ("label", 7))
_SENSITIVITY = (("claim", 8), ("variant", 28), ("value", 7), ("holds", 6), ("holds on", 9), ("value", 7))  # fmt: skip


def _sweep_rows(claims: dict[str, dict]) -> list[str]:
    widths = tuple(w for _, w in _SWEEP)
    lines = [_row(tuple(name for name, _ in _SWEEP), widths)]
    for row in robustness.sweep_rows(claims):
        ci = "-" if row.interval is None else interval_text(row.interval)
        if len(ci) > 16 and row.interval is not None:
            ci = interval_text(row.interval, digits=2)
        cells = (
            row.claim_id if row.first else "",
            row.effect,
            row.holding if row.first else "",
            f"{row.value:.4g}",
            ci,
            row.label if row.first else "",
        )
        lines.append(_row(cells, widths))
    return lines


def _sensitivity_rows(rows: list[dict], swept: bool) -> list[str]:
    columns = _SENSITIVITY if swept else _SENSITIVITY[:4]
    widths = tuple(w for _, w in columns)
    lines = [_row(tuple(name for name, _ in columns), widths)]
    for row in robustness.sensitivity_rows(rows):
        cells = (
            row.claim_id,
            f"{row.variant}{' *' if row.post_choice else ''}",
            f"{row.value:.4g}",
            "yes" if row.holds else "no",
        )
        if swept:
            cells += (row.sweep_holding, f"{row.sweep_value:.4g}")
        lines.append(_row(cells, widths))
    return lines


def render_robustness(section: dict[str, Any]) -> list[str]:
    """Lines of the robustness tables (audit.json's `robustness`); each fits in 80 columns."""
    published = robustness.seed_range(section["published_seeds"])
    sweep = section["sweep_seeds"]
    lines = [
        "",
        "ROBUSTNESS".center(78, "="),
        *textwrap.wrap(
            "Beside the audit; no verdict above depends on it. "
            + robustness.methods_text(section["methods"]),
            78,
        ),
    ]
    if sweep is None:
        lines += [
            "",
            "Across other seeds: not run (e.g. --seeds 0-9 re-runs the recipes on seeds 0-9).",
        ]
    else:
        seeds = robustness.seed_range(sweep)
        lines += ["", f"Each comparative claim on seeds {seeds}"]
        lines += _sweep_rows(section["claims"])
        lines += [
            *textwrap.wrap(f"holds on: {section['methods']['holds_on']}", 78),
            *textwrap.wrap(f"value: {section['methods']['value']}", 78),
            *textwrap.wrap(section["methods"]["labels"], 78),
        ]
    if section["sensitivity"]:
        where = f"seeds {published}" + ("" if sweep is None else f"; holds on, value: seeds {robustness.seed_range(sweep)}")  # fmt: skip
        lines += ["", f"Choices the document fixed (value, holds: {where})"]
        lines += _sensitivity_rows(section["sensitivity"], sweep is not None)
        lines.append("* the document's choice")
    lines.append("-" * 78)
    return lines
