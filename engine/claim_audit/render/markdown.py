"""audit.md, the report's one source, and audit.html: it as one page, figures inlined."""

from __future__ import annotations

import base64
import re
import shlex
import time
import urllib.parse
from collections.abc import Callable, Mapping
from itertools import groupby
from typing import Any

from markdown_it import MarkdownIt

from ..engine.prediction import POWER_TARGET
from ..engine.share import HOLDS_AT, REFUTED_AT, SENSITIVE_BETWEEN, SHARE_ALPHA
from . import reading
from .cells import figure_cells
from .documents import heading_anchor

_DATE = "%Y-%m-%d %H:%M UTC"


class _Markdown(str):
    """Markdown this module wrote, its text escaped already: not escaped again."""


# Claims', documents' and metadata's text is written literally: markup escaped, newlines spaces.
_LITERAL = str.maketrans(
    {c: "\\" + c for c in "\\`*_[]|~#"}
    | {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\n": " ", "\r": " "}
)


def _escape(text: Any) -> str:
    return text if isinstance(text, _Markdown) else str(text).translate(_LITERAL)


# The verdict column's labels beyond holds, sensitive and inconclusive (the terminal's too).
NOTES = {
    "refuted*": "refuted*: refuted over the float orders, a recorded finding; never fails the run",
    "sensitive": "sensitive: the share of valid computations that give the claim lies "
    f"confidently between {SENSITIVE_BETWEEN[0]:.0%} and {SENSITIVE_BETWEEN[1]:.0%} (it "
    "depends on the machine); never fails the run",
    "unpinned": "unpinned: the recipe's own spread over valid computations is wider than the "
    "printed figure can be checked against (no number of draws would pin it); the figure lies "
    "inside the recipe's range, shown as its tolerance; a figure outside it is refuted; never "
    "fails the run",
    "inconclusive": "inconclusive: the draws cannot yet tell (too few, or collapsed to one), or "
    "a figure's interval holds 0 or is wider than half the figure either way, or the run "
    "cannot measure the claim; never a pass, never fails the run",
    "FINDING GONE": "FINDING GONE: a recorded finding is no longer refuted; the run fails",
    "refuted†": "refuted†: a benchmark figure of this machine (a timing); never fails the run",
}


def verdict_label(verdict: str, details: dict, expected: bool) -> str:
    """holds, sensitive, inconclusive, REFUTED, ERROR, or one of `NOTES`."""
    if verdict == "refuted":
        return (
            "refuted†" if details.get("gates") is False else "REFUTED" if expected else "refuted*"
        )
    return "ERROR" if verdict == "error" else verdict if expected else "FINDING GONE"


def _rule(method: str) -> str:
    """How a verdict is taken (`method`: how the orders were computed, escaped)."""
    return (
        "Every claim is judged on the reproduction in several valid float orders, each a draw "
        "of what another valid computation gives (the documents' own order first: its figures "
        "are the ones shown; an order that repeats another bit for bit counts once). A printed "
        "figure *holds* when it is a plausible draw of the recipe over those draws: inside the "
        "prediction interval shown as its tolerance, computed on the quantity's own scale (log "
        "for a positive quantity, logit for a share), at a false-refutation rate of 1 in 5,000 "
        f"per figure{method}; otherwise it is REFUTED. A qualitative claim (a ratio in a range, "
        "a value above a bound, an identity) is judged by the share of valid computations that "
        f"give it, bounded at {1 - SHARE_ALPHA:.0%} from the count of draws it holds in and the "
        f"draws' margins: it *holds* when at least {HOLDS_AT:.0%} of valid computations give "
        f"it, is REFUTED when at most {REFUTED_AT:.0%} do; each row says in how many draws it "
        "holds. REFUTED and ERROR fail the run. "
        + " ".join(f"{_escape(note)}." for note in NOTES.values())
    )


def _figure_note(figure: dict) -> str:
    """A published figure (`FigureVerdict.to_json()`) against its orders, and the shift caught."""
    n, published = figure["orders"], figure["published"]
    if figure.get("copies") and n == 1:
        return f"{published}: the draws collapsed to one"
    if figure["t_score"] is None and n == 1 and figure.get("copies_by_value"):
        agreeing = n + figure["copies_by_value"]
        text = f"{published}: all {agreeing} orders agree to float noise, one draw: exact to the printed digits"
    elif figure["t_score"] is None:
        text = f"{published}: all {n} orders agree, exact to the printed digits"
    else:
        t, p, scale = figure["t_score"], figure["p_value"], figure.get("scale", "linear")
        text = f"{published}: t = {t:+.2f}, p = {p:.2g} over {n} orders"
        text += "" if scale == "linear" else f" on the {scale} scale"
    shift = figure.get(f"relative_shift_caught_{POWER_TARGET:g}")
    if shift is not None:
        text += f"; catches a shift of {shift:.0%} with p = {POWER_TARGET:g}"
    if figure.get("verdict") == "inconclusive":
        needed = figure["orders_to_conclude"]
        text += f"; inconclusive: {needed or 'no number of'} orders would conclude it"
    if figure.get("recipe_range"):
        low, high = figure["recipe_range"]
        text += f"; unpinned: the recipe's range {low:.4g} to {high:.4g} is wider than the figure can be checked against"
    return text


def _effect_note(effect: dict) -> str:
    (low, high), (k, n) = effect["range"], effect["in_region"]
    name = f"{effect['effect']}: " if effect["effect"] else ""
    scale = "" if effect.get("scale", "linear") == "linear" else f", {effect['scale']} scale"
    return f"{name}{low:.4g} to {high:.4g} over the draws, {k} of {n} {effect['region']}{scale}"


def _share_note(details: dict) -> str:
    (k, n), (low, high) = details["holds_in_orders"], details["share_interval"]
    copies = f" ({details['copies']} copies left out)" if details.get("copies") else ""
    text = f"holds in {k} of {n} draws{copies}; share of valid computations {low:.0%} to {high:.0%} ({details['share_method']})"
    if details.get("copies_by_value"):
        text += (
            f"; {details['copies_by_value']} orders equal to another's to float noise counted once"
        )
    if "draws_to_conclude" in details:
        needed = details["draws_to_conclude"]
        text += f"; {f'about {needed}' if needed else 'no number of'} draws would conclude it"
    return text


def second_reading_notes(details: dict) -> list[str]:
    """Each second reading of the claim's sentence (`second_reading`): its own verdict by the
    share rule and its result, shown beside the claim's verdict and never counted."""
    notes = []
    for name, r in (details.get("second_readings") or {}).items():
        (k, n), (low, high) = r["holds_in_orders"], r["range_over_orders"]
        spread = f"{low:.4g}" if low == high else f"{low:.4g} to {high:.4g}"
        verdict = f"{r['verdict']}: " if "verdict" in r else ""
        notes.append(
            f"second reading ({name}), {r['reading']}: {verdict}{r['region']} holds in {k} of "
            f"{n} draws ({spread}); not counted"
        )
    return notes


def verdict_note(details: dict) -> str:
    """How the draws bore a verdict out: its figures, or a qualitative claim's share and ranges."""
    figures = details.get("figures")
    notes = [details.get("inconclusive")] if figures is None else [*map(_figure_note, figures)]
    notes.append(details.get("collapsed"))
    if "share_interval" in details and figures is None:
        notes += [_share_note(details), *map(_effect_note, details.get("effects", ()))]
    if details.get("fact"):
        k, n = details["holds_in_orders"]
        failing = ", ".join(details.get("fails_in_orders", ()))
        notes.append(
            f"a fact, judged once: holds in {k} of {n} orders"
            + (f", fails in {failing}" if failing else "")
        )
    notes.append(_look_note(details))
    return "; ".join(filter(None, notes))


def _look_note(details: dict) -> str | None:
    """How many draws the claim took: its first look's, and the budget's where it took more."""
    first = details.get("first_look")
    if not first:
        return None
    if first.get("extended"):
        return f"undecided over the first {first['orders']} orders: judged over {first['budget']}"
    return None


def link_address(url: str | None) -> str | None:
    """An http(s) `url` with what Markdown or HTML would read as markup percent-quoted, else None."""
    if not url or urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        return None
    return urllib.parse.quote(url, safe=":/?#@!$&*+,;=%~-._")


def section_link(source: dict | None, section: str) -> str | None:
    """The address of `section` in its document, where the source names its anchor (its
    `anchors`, or its `headings`: sections named as the document's headings), else None."""
    url = link_address((source or {}).get("url"))
    if url is None:
        return None
    if section in (source.get("headings") or ()):  # type: ignore[union-attr]
        anchor = heading_anchor(section)
    elif (anchor := (source.get("anchors") or {}).get(section)) is None:  # type: ignore[union-attr]
        return None
    return f"{url.split('#')[0]}#{urllib.parse.quote(anchor, safe='')}"


def anchor_of(kind: str, name: str) -> str:
    """An in-page anchor: `kind`-`name`, anything but letters, digits, _ and - dashed."""
    return f"{kind}-" + re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")


def _source_text(source: dict, kind: bool = False) -> str:
    url, title = link_address(source.get("url")), _escape(source["title"])
    suffix = f" ({_escape(source['kind'])})" if kind else ""
    return f"[{title}]({url}){suffix}" if url else f"{title}{suffix}"


def _header(audit: dict) -> list[str]:
    meta, lines = audit["metadata"], []
    if audit.get("partial"):
        lines += [
            f"**Partial run, not the complete audit** ({_escape('; '.join(audit['partial']))}): "
            "only the claims that ran, without the documents' sections and figures. A complete "
            "audit, one folder up, is left as it was.",
            "",
        ]
    if audit.get("missing"):
        missing = ", ".join(f"{claim_id} ({why})" for claim_id, why in audit["missing"].items())
        lines += [f"Claims without a verdict: {_escape(missing)}.", ""]
    sources = meta.get("documents") or {}  # name -> title, kind, url
    named = [
        _source_text(sources[d], kind=True) if d in sources else _escape(d)
        for d in sorted({c["document"] for c in audit["claims"]})
    ]
    created = meta.get("created_unix")
    when = "date unknown" if created is None else time.strftime(_DATE, time.gmtime(created))
    git, code = meta.get("git") or {}, "Not a git repository"
    if git.get("commit") is not None:
        dirty = " (uncommitted changes)" if git.get("dirty") else ""
        code = f"Commit {_escape(git['commit'][:12] + dirty)}"
    elif git.get("no_commit_yet"):
        code = "A git repository with no commit yet"
    return [*lines, f"Audit of {'; '.join(named)}.", "", f"{code}, {when}."]


def _method_lines(audit: dict, page: bool) -> list[str]:
    """The engine cache's counts and how a verdict is taken (folded on the page)."""
    meta = audit["metadata"]
    method = f" ({_escape(meta['method'])})" if meta.get("method") else ""
    counts = meta.get("cache", {})  # the engine cache's only, and said so
    cache = f"{counts.get('hits', 0)} hits, {counts.get('computed', 0)} computed"
    if not any(counts.get(n) for n in ("hits", "computed", "uncached")):
        cache = "not used"
    cache = _escape(f"engine cache (claim_audit.cache.cached): {cache}")
    if not page:
        return ["### How a verdict is taken", "", f"{cache}.", "", _rule(method), ""]
    summary = "<details><summary>How a verdict is taken</summary>"
    return [summary, "", f"{cache}.", "", _rule(method), "", "</details>", ""]


def labels_of(audit: dict) -> dict[str, str]:
    """Each claim's row label (`verdict_label`), by id."""
    return {
        c["id"]: verdict_label(c["verdict"], c.get("details") or {}, c["expected_to_hold"])
        for c in audit["claims"]
    }


def _shown_mark(label: str, page: bool) -> str:
    """A label behind its mark: plain text in audit.md, coloured on the page."""
    if not page:
        return _Markdown(_escape(reading.marked(label)))
    m = reading.mark(label)
    return _Markdown(
        f'<span class="mark" style="--c:{m.colour}" title="{m.meaning}">{m.symbol} '
        f"{_escape(label)}</span>"
    )


def _how_to_read(page: bool) -> str:
    """What a row shows, said once."""
    marks = ", ".join(
        reading.marked(label)
        for label in ("holds", "REFUTED", "sensitive", "inconclusive", "unpinned", "ERROR")
    )
    text = f"Each claim's row gives its verdict behind a mark ({marks}), in one sentence, "
    if not page:
        return _escape(text + "then the statistics behind it.")
    return _escape(
        text + "a picture of its draws where it is judged over them (dots: the draws; black "
        "bar: the published figure; shaded: the recipe's range for a figure, or the region "
        "where a threshold claim holds, its dots red outside it), and its statistics, folded."
    )


def _glance(audit: dict, page: bool) -> list[str]:
    """The counts per verdict for each document, and the claims to look at, linked."""
    labels = labels_of(audit)
    verdicts = list(reading.counts_by_label(list(labels.values())))
    origins, groups = {"document": "", "suite": ", suite checks"}, {}
    first = {d: i for i, d in reversed(list(enumerate(c["document"] for c in audit["claims"])))}
    for claim in sorted(  # each document, then its suite's checks
        audit["claims"], key=lambda c: (first[c["document"]], c.get("origin") != "document")
    ):
        origin = claim.get("origin", "document")
        name = f"{claim['document']}{origins.get(origin, f', {origin}')}"
        groups.setdefault(name, []).append(labels[claim["id"]])
    rows = [
        (_shown_mark(label, page), *(str(shown.count(label) or "-") for shown in groups.values()))
        for label in verdicts
    ]
    rows.append(("claims", *(str(len(shown)) for shown in groups.values())))
    header = " | ".join(["verdict", *(_escape(name) for name in groups)])
    title = '<h2 id="at-a-glance">At a glance</h2>' if page else "## At a glance"
    lines = [title, "", *_table(header, rows)]
    lines += [f"{_escape(audit['summary'])}.", ""]
    lines += [_how_to_read(page), ""]
    look = [c for c in audit["claims"] if labels[c["id"]] not in reading.HOLDING]
    if look:
        lines += [f"Not holding or undecided ({len(look)}):", ""]
        for label in verdicts:
            ids = [c["id"] for c in look if labels[c["id"]] == label]
            if ids:
                linked = ", ".join(f"[{_escape(i)}](#{anchor_of('claim', i)})" for i in ids)
                lines.append(f"- {_shown_mark(label, page)} ({len(ids)}): {linked}")
        lines.append("")
    return lines


def render(
    audit: dict,
    figure_names: list[str],
    source: Callable[[str], str] = lambda name: "figures/" + urllib.parse.quote(name),
    *,
    page: bool = False,
) -> str:
    """audit.md for `audit`, the drawn figures `figure_names` shown from `source(name)`;
    `page`: the Markdown audit.html is parsed from (marks coloured, statistics folded,
    the draws drawn inline)."""
    lines = ["# Claims audit", "", *_header(audit), "", *_glance(audit, page)]
    lines += _method_lines(audit, page)
    figures = [f for f in audit.get("figures", []) if f["file"] in set(figure_names)]
    figure_of = {claim: f for f in figures for claim in f["claims"]}
    audited, placed = {c["id"] for c in audit["claims"]}, set()
    sources = audit["metadata"].get("documents") or {}
    for document, claims in groupby(audit["claims"], key=lambda c: c["document"]):
        document_source = sources.get(document)
        linked = f": {_source_text(document_source)}" if document_source else ""
        lines += ["", f"## {_escape(document)}{linked}", ""]
        for section, rows in groupby(claims, key=lambda c: c["section"]):
            rows = list(rows)
            lines += [f"### {_escape(section)}", ""]
            if rows[0].get("origin") != "suite" and (
                link := section_link(document_source, section)
            ):
                lines += [f"In the document: [{_escape(section)}]({link})", ""]
            header = "id | claim | published | measured | tolerance | verdict | figure"
            lines += _table(header, [_claim_row(c, figure_of.get(c["id"]), page) for c in rows])
            for figure in figures:  # those illustrating this section's claims, right below
                if figure["file"] not in placed and any(c["id"] in figure["claims"] for c in rows):
                    placed.add(figure["file"])
                    lines += _figure_block(figure, source, audited)
    lines += _findings(audit)
    if "robustness" in audit:
        lines += render_robustness(audit["robustness"])
    if rest := [f for f in figures if f["file"] not in placed]:
        lines += ["## More figures", ""]
        for figure in rest:
            lines += _figure_block(figure, source, audited)
    return "\n".join([*lines, *_provenance(audit["metadata"])]) + "\n"


def _findings(audit: dict) -> list[str]:
    """Every refuted claim: those not recorded (they fail the run) first, then the findings."""
    labels = labels_of(audit)
    unrecorded = [c for c in audit["claims"] if labels[c["id"]] == "REFUTED"]
    recorded = [c for c in audit["claims"] if (c.get("details") or {}).get("finding")]
    if not unrecorded and not recorded:
        return []

    def named(c: dict) -> str:
        where = f"({_escape(c['document'])}, {_escape(c['section'])})"
        return f"- **[{_escape(c['id'])}](#{anchor_of('claim', c['id'])})** {where}"

    lines = ["## Findings", ""]
    if unrecorded:
        intro = "Refuted and not a recorded finding (these fail the run):"
        lines += [intro, ""]
        for c in unrecorded:
            published, measured, tolerance = map(_escape, figure_cells(c))
            figures = f"published {published}, measured {measured}, tolerance {tolerance}"
            lines.append(f"{named(c)}: {_escape(c['statement'])} {figures}.")
        lines.append("")
    if recorded:
        intro = "Claims that do not hold on the faithful reproduction, with what was measured:"
        lines += [intro, ""]
        lines += [f"{named(c)}: {_escape(c['details']['finding'])}" for c in recorded]
        lines.append("")
    return lines


def _claim_row(c: dict, figure: dict | None, page: bool = False) -> tuple[str, ...]:
    details = c.get("details") or {}
    label = verdict_label(c["verdict"], details, c["expected_to_hold"])
    notes = (verdict_note(details), "; ".join(map(ci_text, details.get("ci") or [])))
    statistics = "; ".join(_escape(note) for note in notes if note)
    said = _escape(reading.sentence(c))
    if page:
        pictures = "".join(f'<span class="strip">{svg}</span>' for svg in reading.pictures(c))
        folded = f"<details><summary>statistics</summary>{statistics}</details>"
        verdict = f"{_shown_mark(label, True)} {said}{pictures}{folded if statistics else ''}"
    else:
        emphasis = "{}" if label in reading.HOLDING else "**{}**"
        verdict = f"{emphasis.format(_escape(reading.marked(label)))}: {said}"
        verdict += f" (statistics: {statistics})" if statistics else ""
    statement = _escape(c["statement"])
    if details.get("reading"):
        statement += f" *Reading: {_escape(details['reading'])}.*"
    for note in second_reading_notes(details):
        statement += f" *{_escape(note[0].upper() + note[1:])}.*"
    anchor = f'<a id="{anchor_of("claim", c["id"])}"></a>{_escape(c["id"])}'
    link = f"[{_escape(figure['file'])}](#{_figure_anchor(figure['file'])})" if figure else "-"
    cells = figure_cells(c)
    return tuple(map(_Markdown, [anchor, statement, *map(_escape, cells), verdict, link]))


def _plain(value: Any) -> str:
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_plain(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return "-" if value is None else str(value)


def _provenance(meta: dict) -> list[str]:
    rows = {
        "command": shlex.join(meta.get("command") or []) or None,
        "git": meta.get("git"),
        "device": meta.get("device"),
        "requirements.lock sha256": meta.get("requirements_lock_sha256"),
        "versions": meta.get("versions"),
        "platform": meta.get("platform"),
        "data sha256": meta.get("data_digests") or "none supplied",
        "wall time (s)": meta.get("wall_s"),
    }
    return ["## The run", "", *(f"- **{k}**: {_escape(_plain(v))}" for k, v in rows.items()), ""]


def _figure_anchor(file: str) -> str:
    return anchor_of("figure", file.rsplit(".", 1)[0])


def _figure_block(figure: dict, source: Callable[[str], str], audited: set[str]) -> list[str]:
    claims = [f"[{_escape(c)}](#{anchor_of('claim', c)})" for c in figure["claims"] if c in audited]
    caption, anchor = _escape(figure["caption"]), _figure_anchor(figure["file"])
    claims_text = f" Claims: {', '.join(claims)}." if claims else ""
    image = f"![{caption}]({source(figure['file'])})"
    return [f'<a id="{anchor}"></a>', image, "", f"*{caption}*{claims_text}", ""]


_CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328;
       max-width: 1180px; margin: 0 auto; padding: 1.2em 1.5em 4em; }
h2 { margin-top: 2em; border-bottom: 1px solid #d0d7de; }
h3 { margin: 1.6em 0 .4em; font-size: 1.05em; }
table { border-collapse: collapse; width: 100%; font-size: .9em; margin-bottom: 1em; }
th, td { border: 1px solid #d0d7de; padding: .3em .5em; text-align: left; vertical-align: top;
         overflow-wrap: break-word; }
th { background: #f6f8fa; }
td:first-child { white-space: nowrap; }
td:nth-child(6) { min-width: 16em; }
@media (max-width: 1000px) {  /* narrow: a long word or figure may break to fit */
  td { overflow-wrap: anywhere; }
  td:first-child { white-space: normal; }
  td:nth-child(2) { min-width: 8em; }
  td:nth-child(6) { min-width: 10em; }
}
#at-a-glance + table { width: auto; }
#at-a-glance + table td:not(:first-child) { text-align: right; }
tr:has(a:target) { outline: 2px solid #0969da; }
img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
.mark { color: var(--c); border: 1.5px solid var(--c); border-radius: .3em; padding: 0 .3em;
        font-weight: 600; white-space: nowrap; }
.strip { display: block; margin-top: .2em; }
.strip svg { width: 100%; max-width: 240px; height: auto; }
details { margin-top: .2em; color: #57606a; font-size: .92em; }
summary { cursor: pointer; }
"""

# Raw HTML on: audit.md writes its anchors as <a id>; everything else it escapes itself.
_PARSER = MarkdownIt("commonmark", {"html": True, "xhtmlOut": False}).enable("table")


def render_html(audit: dict, figures: Mapping[str, bytes]) -> str:
    """audit.md as one HTML page, `figures` (PNG bytes by name, in order) inlined once parsed."""
    names = list(figures)
    text = render(audit, names, lambda name: f"figure-{names.index(name)}", page=True)
    body = _PARSER.render(text)
    for i, png in enumerate(figures.values()):
        uri = f"data:image/png;base64,{base64.b64encode(png).decode('ascii')}"
        body = body.replace(f'src="figure-{i}"', f'src="{uri}"')
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Claims audit</title><style>{_CSS}</style></head>\n<body>\n{body}</body></html>\n"
    )


def interval_text(interval: dict[str, Any] | None) -> str:
    """ "3.67 to >4.99": an interval's ends ('<' / '>' beyond the resamples), in as many
    significant digits as keep them apart; "-" for none."""
    if interval is None:
        return "-"
    low, high = interval["low"], interval["high"]
    digits = next((d for d in range(3, 17) if f"{low:.{d}g}" != f"{high:.{d}g}"), 17)
    return (
        f"{'<' if interval['low_at_edge'] else ''}{low:.{digits}g} to "
        f"{'>' if interval['high_at_edge'] else ''}{high:.{digits}g}"
    )


def value_text(value: float, region: str) -> str:
    """An effect's value in four significant digits, or as many more as place it in or out of
    `region` as it lies (1.9996 against [1.995, 2.01] is not "2")."""
    inside = reading.in_region(value, region)
    for digits in range(4, 17):
        text = f"{value:.{digits}g}"
        if inside is None or reading.in_region(float(text), region) == inside:
            return text
    return repr(value)


def ci_text(ci: dict[str, Any]) -> str:
    """One effect's interval as recorded beside a claim's verdict."""
    text = f"95% CI {interval_text(ci)}: {ci['effect']}"
    return text if ci["within_region"] else f"{text} (not all {ci['region']})"


def methods_text(methods: dict[str, Any]) -> str:
    """The section's intervals in one sentence (`published` only where a project gives it)."""
    level = f"Intervals are {methods['level']:.0%}"
    if methods.get("published") is None:
        return f"{level}, across seeds: {methods['seeds']}."
    return f"{level}: {methods['published']}; across seeds, {methods['seeds']}."


def _table(header: str, rows: list[tuple[Any, ...]]) -> list[str]:
    """A table under `header` (its columns' names joined by " | "), each cell escaped."""
    lines = [f"| {header} |", "|" + "---|" * (header.count(" | ") + 1)]
    return [*lines, *("| " + " | ".join(map(_escape, row)) + " |" for row in rows), ""]


def _holds(holds: bool) -> str:
    return "yes" if holds else _Markdown("**no**")


def _p(value: float | None, b: int) -> str:
    if value is None:
        return "-"
    floor = 2 / (b + 1)  # no resample on the other side of "no difference"
    return f"<= {floor:.2g}" if value <= floor * (1 + 1e-9) else f"{value:.2g}"


def _per_seed(sweep: dict, k: int) -> str:
    """Each sweep seed's value of effect `k`, "✗" after those outside the effect's region."""
    if sweep["per_seed_values"] is None:
        return "-"
    region = sweep["regions"][k]

    def shown(value: float) -> str:
        return value_text(value, region) + (
            " ✗" if reading.in_region(value, region) is False else ""
        )

    return ", ".join(shown(v[k]) for v in sweep["per_seed_values"])


def _not_holding(sweep: dict) -> str:
    """The sweep's seeds on which the claim (every effect) does not hold, once per claim."""
    if sweep.get("per_seed_holds") is None:
        return "-"
    seeds = [
        str(s) for s, ok in zip(sweep["seeds"], sweep["per_seed_holds"], strict=True) if not ok
    ]
    return f"not on {', '.join(seeds)}" if seeds else "on every seed"


def sweep_label(sweep: dict) -> str:
    """A sweep's label behind its mark, the bounds on its share and the seeds it would need."""
    text = reading.marked(sweep["label"])
    if share := sweep.get("share_interval"):
        text += f" (share {share[0]:.0%} to {share[1]:.0%})"
    if sweep["label"] == "inconclusive" and "seeds_to_conclude" in sweep:
        needed = sweep["seeds_to_conclude"]
        text += f"; {f'about {needed}' if needed else 'no number of'} seeds would conclude it"
    return text


def sweep_rows(claims: dict[str, Any], per_seed: bool = True) -> tuple[str, list[tuple], bool]:
    """The sweep's table: a claim's row (its count, label and seeds not holding, once), then
    each effect's (its own count); whether some effect has no interval."""
    columns = ["claim", "effect", "holds when", "holds on", "value", "95% CI"]
    columns += ["per seed (✗: outside the effect's region)"] if per_seed else []
    rows, bare = [], False
    for claim_id, claim in claims.items():
        s = claim.get("sweep")
        if not s:
            continue
        n, counts = len(s["effects"]), s.get("effect_holding")
        claim_row = [claim_id, "", "", f"{_holding(s)} {s['unit']}", "", ""]
        if n > 1:
            claim_row[1:3] = [f"the claim: all {n} effects", "each effect in its region"]
            rows.append((*claim_row, *([_not_holding(s)] if per_seed else []), sweep_label(s)))
        for k, effect in enumerate(s["effects"]):
            value, ci = (
                value_text(s["values"][k], s["regions"][k]),
                interval_text(s["intervals"][k]),
            )
            held = f"{counts[k]}/{s['total']}" if counts else "-"
            if n == 1:
                cells = (claim_id, effect, s["regions"][k], claim_row[3], value, ci)
                seeds = f"{_per_seed(s, k)} ({_not_holding(s)})"
                rows.append((*cells, *([seeds] if per_seed else []), sweep_label(s)))
            else:
                cells = ("", effect, s["regions"][k], held, value, ci)
                rows.append((*cells, *([_per_seed(s, k)] if per_seed else []), ""))
            bare |= s["intervals"][k] is None
    return " | ".join([*columns, "label"]), rows, bare


def _estimate(figure: dict | None) -> str:
    return "-" if figure is None else f"{figure['estimate']:.4g} ({interval_text(figure)})"


def _holding(counts: dict[str, Any]) -> str:
    return f"{counts['holding']}/{counts['total']}"


def render_robustness(section: dict[str, Any], per_seed: bool = True) -> list[str]:
    """Markdown lines of the robustness section (audit.json's `robustness`); `per_seed`: with
    each sweep seed's values and the per-seed figures (else where to find them)."""
    methods, claims, sweep = section["methods"], section["claims"], section["sweep_seeds"]
    published = ", ".join(map(str, section["published_seeds"]))  # every seed named
    beside = "Statistics beside the faithful audit: no verdict above depends on them."
    lines = ["## Robustness", "", f"{beside} {methods_text(methods)} {methods['note']}", ""]
    intervals = []
    for claim_id, claim in claims.items():
        for ci in claim["published"].get("intervals") or []:
            cells = (ci["effect"], ci["region"], f"{ci['estimate']:.4g}", interval_text(ci))
            p = _p(ci["p_value"], ci["b"])
            intervals.append((claim_id, *cells, _holds(ci["within_region"]), p))
    if intervals:
        header = "claim | effect | holds when | value | 95% CI | CI inside | p (no difference)"
        lines += [f"### Intervals on the published seeds ({published})", ""]
        lines += _table(header, intervals)
    if sweep is None:
        not_run = "Not run: --seeds 0-9 re-runs the recipes on seeds 0-9 and re-evaluates every comparative claim."
        lines += ["### Across other seeds", "", not_run, ""]
    else:
        swept = ", ".join(map(str, sweep))
        lines += [f"### Across seeds {swept}", "", f"{methods['labels']}.", ""]
        header, rows, bare = sweep_rows(claims, per_seed)
        note = f"holds on: {methods['holds_on']}. value: {methods['value']}."
        if bare:
            note += (
                " No interval (-) where the statistic reads the most extreme seed (a maximum, "
                "an argmin), for which a bootstrap over seeds does not hold, or where the "
                "sweep has too few seeds for one."
            )
        lines += [*_table(header, rows), note, ""]
    if section["sensitivity"]:
        header = f"claim | variant | effect | holds when | value ({published}) | holds"
        if sweep is not None:
            header += f" | holds on ({swept}) | value ({swept})"
        rows = []
        for row in section["sensitivity"]:
            variant = row["variant"] + (" (the document's)" if row["post_choice"] else "")
            cells = [row["effect"], row["region"], f"{row['published']['values'][0]:.4g}"]
            cells.append(_holds(row["published"]["holds"]))
            if sweep is not None:
                cells += [_holding(row["sweep"]), f"{row['sweep']['values'][0]:.4g}"]
            rows.append((row["claim_id"], variant, *cells))
        lines += ["### Choices the document fixed", "", *_table(header, rows)]
    if section["figure_intervals"] and per_seed:
        lines += [f"### Per-seed figures with {methods['level']:.0%} intervals", ""]
        columns = [tuple(column) for column in section["figure_columns"]]
        for start in range(0, len(columns), 6):  # at most eight columns: each reads on a laptop
            part = columns[start : start + 6]
            header = " | ".join([section["figure_group"], "seed", *(label for _, label in part)])
            rows = [
                (group, entry["seed"], *(_estimate(entry.get(n)) for n, _ in part))
                for group, seeds in section["figure_intervals"].items()
                for entry in seeds
            ]
            lines += _table(header, rows)
    return lines
