"""report/audit.html: the audit as one self-contained page, figures inlined.

`render(audit, figures)` is a pure function of the audit dict (what audit.json holds) and
the figures' PNG bytes; it reads no file and needs no network, so the page can be attached
to a CI run or mailed as it is.
"""

from __future__ import annotations

import base64
import datetime
import re
import shlex
from collections.abc import Mapping
from html import escape
from itertools import groupby
from typing import Any

from .documents import link_address, sources_of, stack_text
from .notes import rule_note, verdict_note
from .table import ci_text

_CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328;
       max-width: 1180px; margin: 0 auto; padding: 1.2em 1.5em 4em; }
h1 { margin-bottom: .2em; } h2 { margin-top: 2em; border-bottom: 1px solid #d0d7de; }
h3 { margin: 1.6em 0 .4em; font-size: 1.05em; }
.meta, .note { color: #59636e; font-size: .92em; }
.summary { font-size: 1.1em; font-weight: 600; }
table { border-collapse: collapse; width: 100%; font-size: .9em; }
th, td { border: 1px solid #d0d7de; padding: .3em .5em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .92em;
         overflow-wrap: anywhere; max-width: 16em; }
td.id { white-space: nowrap; font-family: ui-monospace, monospace; }
tr:target { outline: 2px solid #0969da; }
.verdict { display: inline-block; padding: 0 .5em; border-radius: 1em; font-weight: 600;
           white-space: nowrap; background: #eaeef2; }
.v-holds { background: #dafbe1; color: #116329; }
.v-refuted { background: #ffebe9; color: #a40e26; }
.v-finding { background: #fff8c5; color: #7d4e00; }
.v-error { background: #a40e26; color: #fff; }
.ci { display: block; color: #59636e; font-size: .85em; margin-top: .2em; }
figure { margin: 2em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #d0d7de; }
figcaption { color: #59636e; margin-top: .4em; }
dl.meta-list { display: grid; grid-template-columns: max-content 1fr; gap: .2em 1em; }
dl.meta-list dd { margin: 0; font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
"""


def _anchor(kind: str, name: str) -> str:
    return f"{kind}-" + re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-")


def _figure_id(file: str) -> str:
    return _anchor("figure", file.rsplit(".", 1)[0])


def _verdict(claim: dict) -> str:
    """The verdict as a badge; a refutation recorded as a known finding is marked so."""
    verdict = claim["verdict"]
    if verdict == "refuted" and not claim.get("expected_to_hold", True):
        return '<span class="verdict v-finding">refuted (known finding)</span>'
    return f'<span class="verdict {_anchor("v", verdict)}">{escape(verdict)}</span>'


def _header(audit: dict) -> list[str]:
    meta = audit.get("metadata", {})
    git = meta.get("git") or {}
    commit = git.get("commit")
    if commit is None:
        code = (
            "a git repository with no commit yet"
            if git.get("no_commit_yet")
            else "not a git repository"
        )
    else:
        dirty = ", with uncommitted changes" if git.get("dirty") else ""
        code = f"commit <code>{escape(commit[:12])}</code>{dirty}"
    created = meta.get("created_unix")
    when = (
        datetime.datetime.fromtimestamp(created, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        if isinstance(created, int | float)
        else "date unknown"
    )
    documents = sorted({c["document"] for c in audit["claims"]})
    items = []
    for name in documents:
        source = sources_of(audit).get(name)
        if source is None:
            items.append(f"<li><b>{escape(name)}</b></li>")
            continue
        title = f"“{escape(source.title)}”"
        if url := link_address(source.url):
            title = f'<a href="{escape(url)}">{title}</a>'
        items.append(f"<li><b>{escape(name)}</b>: {title}, {escape(source.kind)}</li>")
    versions = meta.get("versions", {})
    device = meta.get("device") or {}
    runtime = escape(stack_text(versions).removesuffix(", "))
    if device:
        kinds = ", ".join(device.get("kinds", []))
        runtime += f" on {escape(str(device.get('backend')))} ({escape(kinds)})"
    method = f"; {meta['method']}" if meta.get("method") else ""
    return [
        "<h1>Claims audit</h1>",
        f'<p class="summary">{escape(str(audit.get("summary", "")))}</p>',
        "<p>The recipes of these documents, re-run, and each of their claims judged:</p>",
        f"<ul>{''.join(items)}</ul>",
        f'<p class="meta">{code} · {when} · {runtime}</p>',
        '<p class="note">'
        + "".join(
            f"<i>{escape(text)}</i>" if emphasised else escape(text)
            for text, emphasised in rule_note(method)
        )
        + "</p>",
    ]


def _claims(audit: dict, figures_of: dict[str, list[str]], shown: set[str]) -> list[str]:
    lines: list[str] = []
    for document, claims in groupby(audit["claims"], key=lambda c: c["document"]):
        lines.append(f'<h2 id="{_anchor("document", document)}">{escape(document)}</h2>')
        for section, rows in groupby(claims, key=lambda c: c["section"]):
            anchor = _anchor("section", f"{document}-{section}")
            lines += [
                f'<h3 id="{anchor}">{escape(section)}</h3>',
                "<table><thead><tr><th>id</th><th>claim</th><th>published</th><th>measured</th>"
                "<th>tolerance</th><th>verdict</th><th>figure</th></tr></thead><tbody>",
            ]
            for claim in rows:
                details = claim.get("details") or {}
                cis = "".join(
                    f'<span class="ci">{escape(ci_text(ci))}</span>' for ci in details.get("ci", [])
                )
                if note := verdict_note(details):
                    cis = f'<span class="ci">{escape(note)}</span>{cis}'

                links = [
                    f'<a href="#{_figure_id(f)}">{escape(f.rsplit(".", 1)[0])}</a>'
                    for f in figures_of.get(claim["id"], [])
                    if f in shown
                ]
                statement = escape(claim["statement"])
                if reading := details.get("reading"):
                    statement += f' <em class="reading">Reading: {escape(str(reading))}.</em>'
                lines.append(
                    f'<tr id="{_anchor("claim", claim["id"])}">'
                    f'<td class="id">{escape(claim["id"])}</td>'
                    f"<td>{statement}</td>"
                    f'<td class="num">{escape(str(claim["published"]))}</td>'
                    f'<td class="num">{escape(str(claim["measured"]))}</td>'
                    f'<td class="num">{escape(str(claim["tolerance"]))}</td>'
                    f"<td>{_verdict(claim)}{cis}</td>"
                    f"<td>{'<br>'.join(links) or '-'}</td></tr>"
                )
            lines.append("</tbody></table>")
    return lines


def _recorded(audit: dict, field: str) -> list[dict]:
    return [c for c in audit["claims"] if (c.get("details") or {}).get(field)]


def _claim_list(claims: list[dict], field: str) -> str:
    return "".join(
        f'<li><a href="#{_anchor("claim", c["id"])}"><b>{escape(c["id"])}</b></a> '
        f"({escape(c['document'])}, {escape(c['section'])}): {escape(c['details'][field])}</li>"
        for c in claims
    )


def _findings(audit: dict) -> list[str]:
    lines = []
    if findings := _recorded(audit, "finding"):
        lines += [
            '<h2 id="findings">Findings</h2>',
            "<p>Claims that do not hold on the faithful reproduction, with what was measured:</p>",
            f"<ul>{_claim_list(findings, 'finding')}</ul>",
        ]
    return lines


def _figures(audit: dict, figures: Mapping[str, bytes]) -> list[str]:
    if not figures:
        return []
    index = {entry["file"]: entry for entry in audit.get("figures", [])}
    audited = {c["id"] for c in audit["claims"]}
    lines = ['<h2 id="figures">Figures</h2>']
    for file, png in figures.items():
        entry = index.get(file, {})
        caption = escape(entry.get("caption", file))
        claims = [c for c in entry.get("claims", []) if c in audited]  # e.g. a run with -k
        if claims:
            caption += " Illustrates " + ", ".join(
                f'<a href="#{_anchor("claim", c)}">{escape(c)}</a>' for c in claims
            )
            caption += "."
        data = base64.b64encode(png).decode("ascii")
        lines.append(
            f'<figure id="{_figure_id(file)}">'
            f'<img src="data:image/png;base64,{data}" alt="{escape(file)}">'
            f"<figcaption><b>{escape(file)}</b>: {caption}</figcaption></figure>"
        )
    return lines


def _plain(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return escape(", ".join(map(str, value)))
    return escape(str(value))


def _metadata(audit: dict) -> list[str]:
    meta = audit.get("metadata", {})
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
    cells = []
    for name, value in rows:
        if isinstance(value, dict):
            text = "<br>".join(f"{escape(str(k))}: {_plain(v)}" for k, v in value.items())
        else:
            text = _plain(value)
        cells.append(f"<dt>{escape(name)}</dt><dd>{text}</dd>")
    return ['<h2 id="run">The run</h2>', f'<dl class="meta-list">{"".join(cells)}</dl>']


def render(audit: dict, figures: Mapping[str, bytes]) -> str:
    """The audit as one HTML page.

    Args:
      audit: the dict written as audit.json (engine/claim_audit/report/audit.py `build`, plus the
        `figures` index of captions and the claims each figure illustrates, if any).
      figures: PNG bytes by file name (e.g. "reliability_seed0.png"), in display order;
        each is inlined as a data URI.

    Returns:
      A complete HTML document (UTF-8 text) that loads nothing from elsewhere.
    """
    figures_of: dict[str, list[str]] = {}
    for entry in audit.get("figures", []):
        for claim_id in entry.get("claims", []):
            figures_of.setdefault(claim_id, []).append(entry["file"])
    body = [
        *_header(audit),
        *_claims(audit, figures_of, set(figures)),
        *_findings(audit),
        *_figures(audit, figures),
        *_metadata(audit),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>Claims audit</title><style>{_CSS}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )
