"""Hostile text in claims, sections and metadata: audit.md and audit.html show it as text.

audit.md passed claim text through raw: `<img src=x onerror=...>` and `<script>` in a claim's
or section's text reached the Markdown unescaped, and a newline in a section name broke its
heading. Each string below goes through both renderers; the Markdown is then rendered by a
CommonMark parser with raw HTML allowed, as a viewer that trusts it would.
"""

from __future__ import annotations

import html as html_text
import re
import warnings

import pytest
from claim_audit import Claims
from claim_audit.render import markdown
from claim_audit.render.drawing import new_figure, save
from markdown_it import MarkdownIt

pytestmark = pytest.mark.fault

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"
HOSTILE = [
    IMG,
    SCRIPT,
    "a | b | c",  # extra table cells
    "line one\n# injected heading\n\n<b>bold</b>",
    "[click](javascript:alert(3)) ![x](https://evil.example/track.png)",
    "**bold** _it_ `code` ~~gone~~ \\ &amp;",
]


def hostile_audit(text: str) -> dict:
    claim = {
        "id": "c-1",
        "document": "demo",
        "section": f"Section {text}",
        "statement": f"statement {text}",
        "published": f"published {text}",
        "measured": f"measured {text}",
        "tolerance": f"tolerance {text}",
        "verdict": "refuted",
        "details": {"reading": f"reading {text}", "finding": f"finding {text}"},
        "expected_to_hold": False,
    }
    return {
        "schema_version": 2,
        "partial": [f"reason {text}"],
        "missing": {"c-2": f"why {text}"},
        "claims": [claim],
        "summary": f"summary {text}",
        "metadata": {
            "versions": dict.fromkeys(("jax", "flax", "optax", "numpy", "python"), text),
            "platform": {"system": text, "jax_backend": "cpu"},
            "cache": {"hits": 0, "computed": 0},
            "wall_s": 1.0,
            "created_unix": 0.0,
            "git": {"commit": text, "dirty": False},
            "documents": {"demo": {"title": f"title {text}", "kind": text, "url": "javascript:x"}},
        },
        "figures": [{"file": "f.png", "caption": f"caption {text}", "claims": ["c-1"]}],
    }


def rendered_markdown(audit: dict) -> str:
    parser = MarkdownIt("commonmark", {"html": True}).enable("table")
    return parser.render(markdown.render(audit, ["f.png"]))


@pytest.mark.parametrize("text", HOSTILE, ids=["img", "script", "pipes", "newlines", "links", "marks"])  # fmt: skip
def test_hostile_text_is_text_in_markdown_and_html(text):
    """`<img onerror>`, `<script>`, pipes, newlines and links in a claim's or section's text:
    shown as text in audit.md and audit.html, links only to http(s). Bug fixed: the text
    reached audit.md raw, and a newline broke a heading (engine/claim_audit/render/markdown.py `_escape`,
    `_url`)."""
    audit = hostile_audit(text)
    page = rendered_markdown(audit)
    tags = set(re.findall(r"<([a-z0-9]+)", page))
    assert tags <= {"h1", "h2", "h3", "p", "strong", "em", "table", "thead", "tbody", "tr", "th", "td", "a", "img", "ul", "li"}  # fmt: skip
    attributes = re.findall(r'\s([a-z-]+)="([^"]*)"', "".join(re.findall(r"<[^>]*>", page)))
    assert {name for name, _ in attributes} <= {"id", "href", "src", "alt"}
    links = [value for name, value in attributes if name in ("href", "src")]
    assert not [link for link in links if link.startswith("javascript:")]
    assert re.findall(r'<img src="([^"]*)"', page) == ["figures/f.png"]  # only the figure
    flat = text.replace("\n", " ")  # newlines read as spaces
    assert html_text.unescape(re.sub(r"<[^>]*>", "", page)).count(flat) >= 8  # all shown
    assert page.count("<h3>Section") == 1 and "<h1>injected" not in page
    row = re.search(r'<tr>\s*<td><a id="claim-c-1">(.*?)</tr>', page, re.DOTALL).group(1)
    assert row.count("<td>") == 6  # a pipe in the text adds no cell (7 with the id's)

    page = markdown.render_html(audit, {})
    assert IMG not in page and SCRIPT not in page
    assert "<h1>injected" not in page


@pytest.mark.parametrize(
    "address",
    [
        "javascript:alert(1)",
        "JavaScript:alert(1)",
        " javascript:alert(1)",
        "java\tscript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        "vbscript:msgbox(1)",
        "ftp://example.com/x",
        "/relative/path",
    ],
    ids=[
        "javascript",
        "mixed-case",
        "leading-space",
        "tab-inside",
        "data",
        "vbscript",
        "ftp",
        "relative",
    ],
)
def test_a_document_address_that_is_not_http_is_no_link(address):
    """A document's source address that is not http(s) (`javascript:`, `data:`, `vbscript:`, a
    relative path...) in audit.md and audit.html: the title is shown, unlinked. Bug fixed:
    audit.html made it a live <a href> (audit.html is now audit.md rendered; both ask
    engine/claim_audit/render/markdown.py `link_address`)."""
    audit = hostile_audit("text")
    audit["metadata"]["documents"]["demo"].update(title="The Post", url=address)
    page = markdown.render_html(audit, {})
    assert "The Post" in page
    assert re.findall(r'href="([^"#][^"]*)"', page) == []  # only in-page anchors
    markdown_page = rendered_markdown(audit)
    assert "The Post" in markdown_page
    assert re.findall(r'href="([^"#][^"]*)"', markdown_page) == []


def test_an_http_address_is_linked_with_its_markup_quoted():
    """An http(s) address is linked in both files, the same destination, with the characters
    HTML or Markdown would read as markup (quotes, angle brackets, spaces) percent-quoted."""
    audit = hostile_audit("text")
    address = 'https://example.com/a b"<c>?q=1&r=2#s'
    audit["metadata"]["documents"]["demo"].update(title="The Post", url=address)
    want = "https://example.com/a%20b%22%3Cc%3E?q=1&r=2#s"
    assert set(
        re.findall(r'<a href="([^"#][^"]*)">The Post</a>', markdown.render_html(audit, {}))
    ) == {html_text.escape(want)}
    assert want in markdown.render(audit, ["f.png"])


@pytest.mark.parametrize("claim_id", ["c-1\x1b[2J", "c-1\r", "c 1", "c-1</td>", "-c"])
def test_a_claim_id_that_is_no_identifier_is_refused_where_defined(claim_id):
    """A claim id holding terminal escapes, markup or spaces: a ValueError when the claim is
    defined. Bug fixed: it went raw into the terminal table, audit.md and audit.html
    (engine/claim_audit/engine/claim.py `ClaimSpec`, `CLAIM_ID`)."""
    with pytest.raises(ValueError, match="is not an identifier"):
        Claims("ids")(claim_id, "S", "a claim", published="> 1")(lambda: None)


def test_control_characters_in_a_figure_label_are_drawn_escaped(tmp_path):
    """A "\\r" or an escape in a legend label or title: the figure is saved, the character
    shown escaped. Bug fixed: matplotlib's "Glyph 13 missing" warning, an error under the
    suite's warning filter, stopped the whole report (engine/claim_audit/render/drawing.py `save`)."""
    fig = new_figure(3, 2)
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], label="left\rright")
    title = ax.set_title("title\x1b[2J\nsecond line")
    legend = ax.legend()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        save(fig, tmp_path / "f.png")
    assert (tmp_path / "f.png").is_file() and (tmp_path / "f.svg").is_file()
    assert legend.get_texts()[0].get_text() == "left\\rright"
    assert title.get_text() == "title\\x1b[2J\nsecond line"
