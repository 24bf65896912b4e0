"""A section of the report links into its document only where the author named the anchor
(`Source(anchors=...)`) or marked the section's name as one of the document's headings
(`Source(headings=...)`); any other section gets no link, never a guessed one."""

from __future__ import annotations

import pytest
from claim_audit import Source
from claim_audit.render import markdown

URL = "https://example.com/post/#top"


def audit(source: dict, sections: list[str], origin: str = "document") -> dict:
    claims = [
        {
            "id": f"c-{i}",
            "document": "demo",
            "section": section,
            "statement": "a claim",
            "published": "1",
            "measured": "1",
            "tolerance": "-",
            "verdict": "holds",
            "details": {},
            "expected_to_hold": True,
            "origin": origin,
        }
        for i, section in enumerate(sections)
    ]
    metadata = {"documents": {"demo": source}, "cache": {}, "git": {}}
    return {"schema_version": 2, "claims": claims, "summary": "s", "metadata": metadata}


def links(page: str) -> list[str]:
    return [line for line in page.splitlines() if line.startswith("In the document:")]


def test_only_named_sections_link_into_the_document():
    source = {
        "title": "The Post",
        "kind": "post",
        "url": URL,
        "anchors": {"Fit, short": "fitting-the-line"},
        "headings": ["The forecaster's test, in code"],
    }
    sections = ["Fit, short", "The forecaster's test, in code", "An abbreviated name"]
    assert links(markdown.render(audit(source, sections), [])) == [
        "In the document: [Fit, short](https://example.com/post/#fitting-the-line)",
        "In the document: [The forecaster's test, in code](https://example.com/post/#the-forecasters-test-in-code)",
    ]  # fmt: skip
    unmarked = {"title": "The Post", "kind": "post", "url": URL}
    assert links(markdown.render(audit(unmarked, sections), [])) == []
    suite = markdown.render(audit(source, ["Fit, short"], origin="suite"), [])
    assert links(suite) == []  # the project's own checks are no section of the document


def test_an_anchor_is_quoted_into_the_address():
    source = {"title": "T", "kind": "k", "url": URL, "anchors": {"S": 'a b"<c>'}}
    assert markdown.section_link(source, "S") == "https://example.com/post/#a%20b%22%3Cc%3E"


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"anchors": {"S": "s"}}, "need the document's url"),
        ({"url": URL, "headings": "S"}, "headings is a tuple of section names"),
        ({"url": URL, "anchors": {"S": ""}}, "non-empty strings"),
        ({"url": URL, "anchors": ["S"]}, "anchors map section names"),
        ({"url": URL, "anchors": {"S": "s"}, "headings": ("S",)}, "both an anchor and"),
    ],
    ids=["no-url", "headings-str", "empty-anchor", "anchors-list", "both"],
)
def test_a_source_whose_anchors_cannot_link_is_refused(kwargs, says):
    with pytest.raises(ValueError, match=says):
        Source("The Post", "post", **kwargs)
