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
    if "fails_in_orders" in details or str(details.get("rule", "")).startswith("an identity"):
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
    method = f" ({_escape(meta['method'])})" if meta.get("method") else ""
    git, code = meta.get("git") or {}, "Not a git repository"
    if git.get("commit") is not None:
        dirty = " (uncommitted changes)" if git.get("dirty") else ""
        code = f"Commit {_escape(git['commit'][:12] + dirty)}"
    elif git.get("no_commit_yet"):
        code = "A git repository with no commit yet"
    lines += [f"Audit of {'; '.join(named)}.", "", f"{code}, {when}."]
    counts = meta.get("cache", {})  # the engine cache's only, and said so
    cache = f"{counts.get('hits', 0)} hits, {counts.get('computed', 0)} computed"
    if not any(counts.get(n) for n in ("hits", "computed", "uncached")):
        cache = "not used"
    cache = _escape(f"engine cache (claim_audit.cache.cached): {cache}")
    return [*lines, "", f"{_escape(audit['summary'])}.", "", f"{cache}.", "", _rule(method)]


def render(
    audit: dict,
    figure_names: list[str],
    source: Callable[[str], str] = lambda name: "figures/" + urllib.parse.quote(name),
) -> str:
    """audit.md for `audit`, the drawn figures `figure_names` shown from `source(name)`."""
    lines = ["# Claims audit", "", *_header(audit)]
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
            lines += _table(header, [_claim_row(c, figure_of.get(c["id"])) for c in rows])
            for figure in figures:  # those illustrating this section's claims, right below
                if figure["file"] not in placed and any(c["id"] in figure["claims"] for c in rows):
                    placed.add(figure["file"])
                    lines += _figure_block(figure, source, audited)
    findings = [
        f"- **[{_escape(c['id'])}](#{anchor_of('claim', c['id'])})** ({_escape(c['document'])}, "
        f"{_escape(c['section'])}): {_escape(c['details']['finding'])}"
        for c in audit["claims"]
        if c["details"].get("finding")
    ]
    if findings:
        intro = "Claims that do not hold on the faithful reproduction, with what was measured:"
        lines += ["## Findings", "", intro, "", *findings, ""]
    if "robustness" in audit:
        lines += render_robustness(audit["robustness"])
    if rest := [f for f in figures if f["file"] not in placed]:
        lines += ["## More figures", ""]
        for figure in rest:
            lines += _figure_block(figure, source, audited)
    return "\n".join([*lines, *_provenance(audit["metadata"])]) + "\n"


def _claim_row(c: dict, figure: dict | None) -> tuple[str, ...]:
    details = c.get("details") or {}
    label = verdict_label(c["verdict"], details, c["expected_to_hold"])
    emphasis = {"holds": "{}", "sensitive": "*{}*", "unpinned": "*{}*", "inconclusive": "*{}*"}
    emphasis = emphasis.get(label, "**{}**")
    verdict = emphasis.format(_escape(label))
    for note in (verdict_note(details), "; ".join(map(ci_text, details.get("ci") or []))):
        verdict += f" ({_escape(note)})" if note else ""
    statement = _escape(c["statement"])
    if details.get("reading"):
        statement += f" *Reading: {_escape(details['reading'])}.*"
    for note in second_reading_notes(details):
        statement += f" *{_escape(note[0].upper() + note[1:])}.*"
    anchor = f'<a id="{anchor_of("claim", c["id"])}"></a>{_escape(c["id"])}'
    link = f"[{_escape(figure['file'])}](#{_figure_anchor(figure['file'])})" if figure else "-"
    cells = (c["published"], c["measured"], c["tolerance"])
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
th, td { border: 1px solid #d0d7de; padding: .3em .5em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
tr:has(a:target) { outline: 2px solid #0969da; }
img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
"""

# Raw HTML on: audit.md writes its anchors as <a id>; everything else it escapes itself.
_PARSER = MarkdownIt("commonmark", {"html": True, "xhtmlOut": False}).enable("table")


def render_html(audit: dict, figures: Mapping[str, bytes]) -> str:
    """audit.md as one HTML page, `figures` (PNG bytes by name, in order) inlined once parsed."""
    names = list(figures)
    body = _PARSER.render(render(audit, names, lambda name: f"figure-{names.index(name)}"))
    for i, png in enumerate(figures.values()):
        uri = f"data:image/png;base64,{base64.b64encode(png).decode('ascii')}"
        body = body.replace(f'src="figure-{i}"', f'src="{uri}"')
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Claims audit</title><style>{_CSS}</style></head>\n<body>\n{body}</body></html>\n"
    )


def interval_text(interval: dict[str, Any] | None) -> str:
    """ "3.67 to >4.99": an interval's ends ('<' / '>' beyond the resamples); "-" for none."""
    if interval is None:
        return "-"
    low = f"{'<' if interval['low_at_edge'] else ''}{interval['low']:.3g}"
    return f"{low} to {'>' if interval['high_at_edge'] else ''}{interval['high']:.3g}"


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
    """Each sweep seed's value of effect `k`, bold where the claim does not hold."""
    if sweep["per_seed_values"] is None:
        return "-"
    values = zip(sweep["per_seed_values"], sweep["per_seed_holds"], strict=True)
    return _Markdown(", ".join(f"{v[k]:.3g}" if ok else f"**{v[k]:.3g}**" for v, ok in values))


def _estimate(figure: dict | None) -> str:
    return "-" if figure is None else f"{figure['estimate']:.4g} ({interval_text(figure)})"


def _holding(counts: dict[str, Any]) -> str:
    return f"{counts['holding']}/{counts['total']}"


def render_robustness(section: dict[str, Any]) -> list[str]:
    """Markdown lines of the robustness section (audit.json's `robustness`)."""
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
        header = "claim | effect | holds when | holds on | value | 95% CI | per seed (**not holding**) | label"
        rows, bare = [], False
        for claim_id, claim in claims.items():
            s = claim.get("sweep") or {"effects": ()}
            for k, effect in enumerate(s["effects"]):
                value, ci = f"{s['values'][k]:.4g}", interval_text(s["intervals"][k])
                cells = (effect, s["regions"][k], f"{_holding(s)} {s['unit']}", value, ci)
                rows.append((claim_id, *cells, _per_seed(s, k), s["label"]))
                bare |= s["intervals"][k] is None
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
    if section["figure_intervals"]:
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
