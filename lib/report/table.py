"""The claims table for an 80-column terminal, grouped by document and section."""

from __future__ import annotations

from collections import Counter
from itertools import groupby

from lib.report.claim import ClaimRecord

_COLUMNS = (("id", 16), ("published", 16), ("measured", 16), ("tolerance", 14), ("verdict", 9))


def _cell(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def verdict_label(record: ClaimRecord, expected: bool) -> str:
    """holds / REFUTED / ERROR, with '*' for a refutation already recorded as a finding."""
    if record.verdict == "holds":
        return "holds"
    if record.verdict == "refuted":
        return "refuted*" if not expected else "REFUTED"
    return "ERROR"


def summary_line(records: list[ClaimRecord], expected: dict[str, bool]) -> str:
    """One line: how many claims hold, are refuted (known findings among them), errored."""
    counts = Counter(r.verdict for r in records)
    known = sum(1 for r in records if r.verdict == "refuted" and not expected.get(r.id, True))
    return (
        f"{len(records)} claims: {counts['holds']} hold, {counts['refuted']} refuted "
        f"({known} known findings), {counts['error']} errors"
    )


def ordered(records: list[ClaimRecord]) -> list[ClaimRecord]:
    """By document, then sections in the order of their first claim id (health last), then id."""
    first_id: dict[tuple[str, str], str] = {}
    for r in records:
        key = (r.document, r.section)
        first_id[key] = min(first_id.get(key, r.id), r.id)
    health_last = lambda r: r.id.startswith("H-")  # noqa: E731
    return sorted(
        records,
        key=lambda r: (
            r.document,
            health_last(r),
            first_id[r.document, r.section],
            r.section,
            r.id,
        ),
    )


def render(records: list[ClaimRecord], expected: dict[str, bool]) -> list[str]:
    """Lines of the table; each fits in 80 columns."""
    header = " ".join(f"{name:<{width}}" for name, width in _COLUMNS)
    lines = ["", "CLAIMS AUDIT".center(78, "="), header.rstrip()]
    for (document, section), group in groupby(
        ordered(records), key=lambda r: (r.document, r.section)
    ):
        lines.append(_cell(f"[{document}] {section}", 78))
        for record in group:
            cells = (
                record.id,
                record.published,
                record.measured,
                record.tolerance,
                verdict_label(record, expected.get(record.id, True)),
            )
            lines.append(
                " ".join(
                    f"{_cell(c, w):<{w}}" for c, (_, w) in zip(cells, _COLUMNS, strict=True)
                ).rstrip()
            )
    lines.append("-" * 78)
    lines.append(summary_line(records, expected))
    lines.append("* refuted and recorded as a known finding (strict xfail): does not fail the run")
    return lines
