"""report/audit.md: the audit as a readable document."""

from __future__ import annotations

from itertools import groupby

_VERDICT = {"holds": "holds", "refuted": "**refuted**", "error": "**error**"}


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(audit: dict, figure_names: list[str]) -> str:
    """Markdown for the audit dict built by lib/report/audit.py, figures linked from figures/."""
    meta = audit["metadata"]
    lines = [
        "# Claims audit",
        "",
        f"{audit['summary']}.",
        "",
        f"jax {meta['versions']['jax']}, flax {meta['versions']['flax']}, optax {meta['versions']['optax']}, "
        f"numpy {meta['versions']['numpy']}, Python {meta['versions']['python']} on {meta['platform']['system']} "
        f"({meta['platform']['jax_backend']}); cache: {meta['cache']['hits']} hits, {meta['cache']['computed']} computed; "
        f"wall time {meta['wall_s']:.1f} s.",
        "",
        "A claim *holds* when the reproduction's figure lies within the tolerance of the published one "
        "(tolerances: fixtures/TOLERANCES.md). *refuted* rows marked 'known finding' are recorded as strict "
        "xfails and do not fail the run; any other refutation does.",
    ]
    for document, claims in groupby(audit["claims"], key=lambda c: c["document"]):
        lines += ["", f"## {document}", ""]
        for section, rows in groupby(claims, key=lambda c: c["section"]):
            lines += [
                f"### {section}",
                "",
                "| id | claim | published | measured | tolerance | verdict |",
                "|---|---|---|---|---|---|",
            ]
            for c in rows:
                verdict = _VERDICT[c["verdict"]] + (
                    "" if c["expected_to_hold"] or c["verdict"] != "refuted" else " (known finding)"
                )
                lines.append(
                    f"| {c['id']} | {_escape(c['statement'])} | {_escape(c['published'])} | {_escape(c['measured'])} "
                    f"| {_escape(c['tolerance'])} | {verdict} |"
                )
            lines.append("")
    findings = [c for c in audit["claims"] if c["details"].get("finding")]
    if findings:
        lines += [
            "## Findings",
            "",
            "Claims that do not hold on the faithful reproduction, with what was measured:",
            "",
        ]
        lines += [
            f"- **{c['id']}** ({c['document']}, {c['section']}): {_escape(c['details']['finding'])}"
            for c in findings
        ]
        lines.append("")
    if figure_names:
        lines += ["## Figures", ""]
        lines += [f"![{name}](figures/{name})\n" for name in figure_names]
    return "\n".join(lines) + "\n"
