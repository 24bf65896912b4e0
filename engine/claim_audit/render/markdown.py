"""The report as Markdown: report/audit.md, and the source audit.html is rendered from
(claim_audit.render.html), so that both hold the same sections."""

from __future__ import annotations

import re
import shlex
import time
import urllib.parse
from collections.abc import Callable
from itertools import groupby
from typing import Any

from . import robustness
from .documents import link_address, sources_of, stack_text
from .notes import rule_note, verdict_note
from .robustness import ci_text, interval_text

# A recorded finding whose claim is no longer refuted (the claim's test fails).
FINDING_GONE = "finding gone: the recorded finding no longer reproduces (the run fails)"
_VERDICT = {
    "holds": "holds",
    "refuted": "**refuted**",
    "sensitive": "*sensitive*",
    "inconclusive": "*inconclusive*",
    "error": "**error**",
}


class _Markdown(str):
    """Text this module wrote as Markdown (emphasis around numbers): not escaped again."""


# What Markdown or inline HTML would read as markup in a line of text; newlines would end a
# table row or a heading. Text from claims, documents and metadata is written literally.
_LITERAL = str.maketrans(
    {
        **{c: "\\" + c for c in "\\`*_[]|~#"},
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        "\n": " ",
        "\r": " ",
    }
)


def _escape(text: Any) -> str:
    """`text` as a literal in a Markdown line or table cell (see `_LITERAL`)."""
    if isinstance(text, _Markdown):
        return text.replace("|", "\\|")
    return str(text).translate(_LITERAL)


def _recorded(audit: dict, field: str, heading: str, intro: str) -> list[str]:
    """A section listing the claims whose details carry `field` (a recorded finding), with
    its text; nothing when none does."""
    claims = [c for c in audit["claims"] if c["details"].get(field)]
    if not claims:
        return []
    items = [
        f"- **[{_escape(c['id'])}](#{anchor_of('claim', c['id'])})** "
        f"({_escape(c['document'])}, {_escape(c['section'])}): "
        f"{_escape(c['details'][field])}"
        for c in claims
    ]
    return [f"## {heading}", "", intro, "", *items, ""]


def _source_text(source, suffix: str = "") -> str:
    """A document's title, linked to its address where it has an http(s) one."""
    url = link_address(source.url)
    title = _escape(source.title)
    return f"[{title}]({url}){suffix}" if url else f"{title}{suffix}"


def figure_path(name: str) -> str:
    """A figure's address from audit.md: figures/NAME, quoted."""
    return "figures/" + urllib.parse.quote(name)


def render(audit: dict, figure_names: list[str], source: Callable[[str], str] = figure_path) -> str:
    """Markdown for the audit dict built by claim_audit.report.audit, with the
    figures named in `figure_names` (the files drawn) shown from `source(name)` under the
    claims they illustrate."""
    meta = audit["metadata"]
    lines = ["# Claims audit", ""]
    if audit.get("partial"):
        lines += [
            f"**Partial run, not the complete audit** ({_escape('; '.join(audit['partial']))}): only the "
            "claims that ran, without the documents' sections and figures. A complete audit, "
            "one folder up, is left as it was.",
            "",
        ]
    if audit.get("missing"):
        missing = ", ".join(f"{claim_id} ({why})" for claim_id, why in audit["missing"].items())
        lines += [f"Claims without a verdict: {_escape(missing)}.", ""]
    lines += [*_header(audit), ""]
    versions, system = meta.get("versions", {}), meta.get("platform", {})
    backend = f" ({system['jax_backend']})" if system.get("jax_backend") else ""
    method = f" ({_escape(meta['method'])})" if meta.get("method") else ""
    python = f"Python {versions['python']} on {system.get('system')}{backend}; " if "python" in versions else ""  # fmt: skip
    wall = f"; wall time {meta['wall_s']:.1f} s" if "wall_s" in meta else ""
    lines += [
        f"{_escape(audit['summary'])}.",
        "",
        _escape(f"{stack_text(versions)}{python}{cache_text(meta.get('cache', {}))}{wall}."),
        "",
        "".join(f"*{text}*" if emphasised else text for text, emphasised in rule_note(method)),
    ]
    shown = set(figure_names)
    figures = [f for f in audit.get("figures", []) if f["file"] in shown]
    figure_of = {claim: f for f in figures for claim in f["claims"]}
    audited = {c["id"] for c in audit["claims"]}
    placed: set[str] = set()
    for document, claims in groupby(audit["claims"], key=lambda c: c["document"]):
        source_ = sources_of(audit).get(document)
        heading = _escape(document)
        if source_ is not None:
            heading += f": {_source_text(source_)}"
        lines += ["", f"## {heading}", ""]
        for section, rows in groupby(claims, key=lambda c: c["section"]):
            rows = list(rows)
            lines += [
                f"### {_escape(section)}",
                "",
                *(_section_link(source_, section) if rows[0].get("origin") != "suite" else []),
                "| id | claim | published | measured | tolerance | verdict | figure |",
                "|---|---|---|---|---|---|---|",
            ]
            lines += [_claim_row(c, figure_of.get(c["id"])) for c in rows]
            lines.append("")
            # The figures that illustrate this section's claims, right below them.
            for figure in figures:
                if figure["file"] not in placed and any(c["id"] in figure["claims"] for c in rows):
                    placed.add(figure["file"])
                    lines += _figure_block(figure, source, audited)
    lines += _recorded(
        audit,
        "finding",
        "Findings",
        "Claims that do not hold on the faithful reproduction, with what was measured:",
    )
    if "robustness" in audit:
        lines += render_robustness(audit["robustness"])
    rest = [f for f in figures if f["file"] not in placed]
    unindexed = [name for name in figure_names if name not in {f["file"] for f in audit.get("figures", [])}]  # fmt: skip
    if rest or unindexed:
        lines += ["## More figures", ""]
        for figure in rest:
            lines += _figure_block(figure, source, audited)
        lines += [f"![{_escape(name)}]({source(name)})\n" for name in unindexed]
    lines += _run(meta)
    return "\n".join(lines) + "\n"


def _claim_row(c: dict, figure: dict | None) -> str:
    """A claim's row: its anchor and id, statement (and reading), figures, verdict (with how
    the draws bore it out) and the figure that illustrates it."""
    details = c.get("details") or {}
    verdict = _VERDICT[c["verdict"]] + (
        "" if c["expected_to_hold"] or c["verdict"] != "refuted" else " (known finding)"
    )
    if note := verdict_note(details):
        verdict += f" ({_escape(note)})"
    if c["verdict"] not in ("refuted", "error") and not c["expected_to_hold"]:
        verdict = f"**{FINDING_GONE}**"
    if details.get("ci"):
        verdict += f" ({_escape('; '.join(ci_text(ci) for ci in details['ci']))})"
    statement = _escape(c["statement"])
    if details.get("reading"):
        statement += f" *Reading: {_escape(details['reading'])}.*"
    anchor = f'<a id="{anchor_of("claim", c["id"])}"></a>{_escape(c["id"])}'
    link = f"[{_escape(figure['file'])}](#{_figure_anchor(figure['file'])})" if figure else "-"
    cells = (anchor, statement, _escape(c["published"]), _escape(c["measured"]), _escape(c["tolerance"]), verdict, link)  # fmt: skip
    return "| " + " | ".join(cells) + " |"


def _run(meta: dict) -> list[str]:
    """The run's provenance: command, code, device, stack, data, wall time."""
    rows: list[tuple[str, Any]] = [
        ("command", shlex.join(meta.get("command") or []) or None),
        ("git", meta.get("git")),
        ("device", meta.get("device")),
        ("requirements.lock sha256", meta.get("requirements_lock_sha256")),
        ("versions", meta.get("versions")),
        ("platform", meta.get("platform")),
        ("data sha256", meta.get("data_digests") or "none supplied"),
        ("wall time (s)", meta.get("wall_s")),
    ]

    def plain(value: Any) -> str:
        if isinstance(value, dict):
            return "; ".join(f"{k}: {plain(v)}" for k, v in value.items())
        if isinstance(value, list):
            return ", ".join(map(str, value))
        return "-" if value is None else str(value)

    return ["## The run", "", *(f"- **{name}**: {_escape(plain(value))}" for name, value in rows), ""]  # fmt: skip


def cache_text(cache: dict) -> str:
    """The engine cache's activity (`claim_audit.cache.cached` only: a project's own cache,
    joblib.Memory or functools.cache, is not counted), said as such."""
    hits, computed = cache.get("hits", 0), cache.get("computed", 0)
    if not (hits or computed or cache.get("uncached", 0)):
        return "engine cache (claim_audit.cache.cached): not used"
    return f"engine cache (claim_audit.cache.cached): {hits} hits, {computed} computed"


def _header(audit: dict) -> list[str]:
    """Which documents were audited (linked where they are published), the commit, the date."""
    meta = audit.get("metadata", {})
    documents = sorted({c["document"] for c in audit["claims"]})
    named = []
    for document in documents:
        source = sources_of(audit).get(document)
        if source is None:
            named.append(_escape(document))
        else:
            named.append(_source_text(source, f" ({_escape(source.kind)})"))
    git = meta.get("git") or {}
    if git.get("commit") is None:
        code = (
            "A git repository with no commit yet"
            if git.get("no_commit_yet")
            else "Not a git repository"
        )
    else:
        dirty = " (uncommitted changes)" if git.get("dirty") else ""
        code = f"Commit {_escape(git['commit'][:12] + dirty)}"
    created = meta.get("created_unix")
    created = "date unknown" if created is None else time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(created))  # fmt: skip
    return [f"Audit of {'; '.join(named)}.", "", f"{code}, {created}."]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower().replace("'", "").replace("’", "")).strip("-")


def _section_link(source, section: str) -> list[str]:
    """A link to the section in the published document, where the document has an address."""
    url = link_address(source.url) if source is not None else None
    if url is None:
        return []
    return [f"In the document: [{_escape(section)}]({url.split('#')[0]}#{_slug(section)})", ""]


def anchor_of(kind: str, name: str) -> str:
    """An in-page anchor: `kind`-`name` with anything but letters, digits, _ and - dashed."""
    return f"{kind}-" + re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")


def _figure_anchor(file: str) -> str:
    return anchor_of("figure", file.rsplit(".", 1)[0])


def _figure_block(figure: dict, source: Callable[[str], str], audited: set[str]) -> list[str]:
    """A figure with its caption and links to the claims it illustrates (those audited)."""
    claims = ", ".join(f"[{_escape(c)}](#{anchor_of('claim', c)})" for c in figure["claims"] if c in audited)  # fmt: skip
    return [
        f'<a id="{_figure_anchor(figure["file"])}"></a>',
        f"![{_escape(figure['caption'])}]({source(figure['file'])})",
        "",
        f"*{_escape(figure['caption'])}*" + (f" Claims: {claims}." if claims else ""),
        "",
    ]


# --------------------------------------------------------------------------- robustness


def _seeds(seeds: list[int]) -> str:
    return ", ".join(map(str, seeds))  # every seed named, unlike the table's ranges


def _p(value: float | None, b: int) -> str:
    if value is None:
        return "-"
    floor = 2 / (b + 1)  # no resample on the other side of "no difference"
    return f"<= {floor:.2g}" if value <= floor * (1 + 1e-9) else f"{value:.2g}"


def _table(header: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_escape(cell) for cell in row) + " |" for row in rows]
    return [*lines, ""]


def _published_rows(claims: dict[str, dict]) -> list[tuple[Any, ...]]:
    rows = []
    for claim_id, claim in claims.items():
        for ci in claim["published"].get("intervals") or []:
            rows.append(
                (
                    claim_id,
                    ci["effect"],
                    ci["region"],
                    f"{ci['estimate']:.4g}",
                    interval_text(ci),
                    "yes" if ci["within_region"] else _NO,
                    _p(ci["p_value"], ci["b"]),
                )
            )
    return rows


_NO = _Markdown("**no**")


def _per_seed(values: list[tuple[float, bool]] | None) -> str:
    if values is None:
        return "-"
    return _Markdown(
        ", ".join(f"{value:.3g}" if holds else f"**{value:.3g}**" for value, holds in values)
    )


def _sweep_rows(claims: dict[str, dict]) -> list[tuple[Any, ...]]:
    return [
        (
            row.claim_id,
            row.effect,
            row.region,
            f"{row.holding} {row.unit}",
            f"{row.value:.4g}",
            "-" if row.interval is None else interval_text(row.interval),
            _per_seed(row.per_seed),
            row.label,
        )
        for row in robustness.sweep_rows(claims)
    ]


def _sensitivity_rows(rows: list[dict], swept: bool) -> list[tuple[Any, ...]]:
    out = []
    for row in robustness.sensitivity_rows(rows):
        cells = (
            row.claim_id,
            row.variant + (" (the document's)" if row.post_choice else ""),
            row.effect,
            row.region,
            f"{row.value:.4g}",
            "yes" if row.holds else _NO,
        )
        if swept:
            cells += (row.sweep_holding, f"{row.sweep_value:.4g}")
        out.append(cells)
    return out


def _figure_rows(figures: dict[str, list[dict]], columns) -> list[tuple[Any, ...]]:
    rows = []
    for group, seeds in figures.items():
        for entry in seeds:
            cells = [
                f"{entry[name]['estimate']:.4g} ({interval_text(entry[name])})"
                if name in entry
                else "-"
                for name, _ in columns
            ]
            rows.append((group, entry["seed"], *cells))
    return rows


def render_robustness(section: dict[str, Any]) -> list[str]:
    """Markdown lines of the robustness section (audit.json's `robustness`)."""
    methods = section["methods"]
    published = _seeds(section["published_seeds"])
    sweep = section["sweep_seeds"]
    lines = [
        "## Robustness",
        "",
        f"{robustness.BESIDE} {robustness.methods_text(methods)} {methods['note']}",
        "",
    ]
    published_rows = _published_rows(section["claims"])
    if published_rows:
        lines += [f"### Intervals on the published seeds ({published})", ""]
        lines += _table(
            ("claim", "effect", "holds when", "value", "95% CI", "CI inside", "p (no difference)"),
            published_rows,
        )
    if sweep is None:
        lines += ["### Across other seeds", "", _escape(robustness.NOT_RUN), ""]
    else:
        lines += [f"### Across seeds {_seeds(sweep)}", "", f"{methods['labels']}.", ""]
        lines += _table(
            ("claim", "effect", "holds when", "holds on", "value", "95% CI", "per seed (**not holding**)", "label"),
            _sweep_rows(section["claims"]),
        )  # fmt: skip
        note = f"value: {methods['value']}."
        if any(row.interval is None for row in robustness.sweep_rows(section["claims"])):
            note += (
                " No interval (-) where the statistic reads the most extreme seed (a maximum, "
                "an argmin), for which a bootstrap over seeds does not hold, or where the "
                "sweep has too few seeds for one."
            )
        lines += [note, ""]
    if section["sensitivity"]:
        header = ("claim", "variant", "effect", "holds when", f"value ({published})", "holds")
        if sweep is not None:
            header += (f"holds on ({_seeds(sweep)})", f"value ({_seeds(sweep)})")
        lines += ["### Choices the document fixed", ""]
        lines += _table(header, _sensitivity_rows(section["sensitivity"], sweep is not None))
    if section["figure_intervals"]:
        lines += [f"### Per-seed figures with {methods['level']:.0%} intervals", ""]
        columns = [tuple(column) for column in section["figure_columns"]]
        # Tables of at most eight columns, so that each reads on a laptop screen.
        for start in range(0, len(columns), 6):
            part = columns[start : start + 6]
            lines += _table(
                (section["figure_group"], "seed", *(label for _, label in part)),
                _figure_rows(section["figure_intervals"], part),
            )
    return lines
