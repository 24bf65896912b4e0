"""report/audit.html: one page, every figure inlined and decodable, every claim linked."""

from __future__ import annotations

import base64
import copy
import io
import json
import re
import time
import xml.etree.ElementTree as ElementTree
from html.parser import HTMLParser
from pathlib import Path

import matplotlib.image
import pytest
import test_calibration
import test_uncertainty
from claim_audit.engine.claim import ClaimRecord
from claim_audit.render import markdown
from claim_audit.report import audit
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from readings.calibration.document import DOCUMENT as calibration_document
from readings.suite import robustness_section
from readings.uncertainty.document import DOCUMENT as uncertainty_document

VOID = {"meta", "img", "br", "hr", "link", "input", "col", "area", "base", "source", "wbr"}


class Page(HTMLParser):
    """The page's tags checked for nesting, with its ids, internal links and images."""

    def __init__(self, text: str):
        super().__init__()
        self.open: list[str] = []
        self.ids: list[str] = []
        self.links: list[str] = []
        self.images: list[str] = []
        self.tags: list[str] = []
        self.feed(text)
        self.close()
        assert self.open == [], f"unclosed tags: {self.open}"

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if "id" in attrs:
            self.ids.append(attrs["id"])
        if tag == "a" and attrs.get("href", "").startswith("#"):
            self.links.append(attrs["href"][1:])
        if tag == "img":
            self.images.append(attrs["src"])
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open[-1] == tag, f"</{tag}> closes {self.open[-1:]}"
        self.open.pop()


def parse(text: str) -> Page:
    assert text.startswith("<!DOCTYPE html>")
    page = Page(text)
    assert len(page.ids) == len(set(page.ids)), "duplicate ids"
    assert set(page.links) <= set(page.ids), f"dangling links {set(page.links) - set(page.ids)}"
    return page


def inlined(page: Page) -> list[bytes]:
    """The inlined PNGs' bytes, each checked to decode as an image."""
    out = []
    for src in page.images:
        prefix = "data:image/png;base64,"
        assert src.startswith(prefix), src[:40]
        png = base64.b64decode(src.removeprefix(prefix), validate=True)
        image = matplotlib.image.imread(io.BytesIO(png), format="png")
        assert image.ndim == 3 and min(image.shape[:2]) > 10
        out.append(png)
    return out


def png(colour: str) -> bytes:
    fig = Figure(figsize=(1, 1), dpi=40)
    FigureCanvasAgg(fig)
    fig.add_subplot().plot([0, 1], color=colour)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def claim(claim_id: str, document: str, section: str, **fields) -> dict:
    return {
        "id": claim_id,
        "document": document,
        "section": section,
        "statement": f"statement of {claim_id}",
        "published": "1.0",
        "measured": "1.01",
        "tolerance": "± 0.1",
        "verdict": "holds",
        "details": {},
        "expected_to_hold": True,
        **fields,
    }


AUDIT = {
    "claims": [
        claim("cal-1", "calibration", "The forecaster's test"),
        claim(
            "cal-2",
            "calibration",
            "The forecaster's test",
            statement="a <script>alert(1)</script> & more",
            verdict="refuted",
            expected_to_hold=False,
            details={"finding": "measured 2.5 < 3"},
        ),
        claim("unc-1", "uncertainty", "Results", verdict="sensitive"),
    ],
    "summary": "3 claims",
    "figures": [
        {"file": "a.png", "caption": "Figure A.", "claims": ["cal-1", "unc-1"]},
        {"file": "b.png", "caption": "Figure B.", "claims": ["cal-2"]},
    ],
    "metadata": {
        "created_unix": 1_780_000_000.0,
        "git": {"commit": "0123456789abcdef0123", "dirty": True},
        "command": ["pytest", "claims", "-m", "claim or health"],
        "device": {"backend": "gpu", "count": 1, "kinds": ["NVIDIA H200"]},
        "versions": {"jax": "0.10.2", "flax": "0.12.8"},
        "documents": {
            "calibration": {
                "title": "Calibrating a Bounded Net, in JAX/Flax NNX",
                "kind": "blog post",
                "url": "https://tahabouhsine.com/blog/calibration-of-a-bounded-net-jax-flax-nnx/",
            },
            "uncertainty": {"title": "Uncertainty Estimation", "kind": "guide", "url": None},
        },
    },
}


def test_page_parses_inlines_every_figure_and_links_every_claim():
    figures = {"a.png": png("red"), "b.png": png("blue")}
    text = markdown.render_html(AUDIT, figures)
    page = parse(text)
    assert inlined(page) == [figures["a.png"], figures["b.png"]]
    assert {"claim-cal-1", "claim-cal-2", "claim-unc-1", "figure-a", "figure-b"} <= set(page.ids)
    assert page.links.count("figure-a") == 2 and page.links.count("figure-b") == 1
    assert {"claim-cal-1", "claim-unc-1", "claim-cal-2"} <= set(page.links)  # captions link back
    assert "Calibrating a Bounded Net" in text and "Uncertainty Estimation" in text
    assert "0123456789ab" in text and "uncommitted changes" in text
    run_day = time.strftime("%Y-%m-%d", time.gmtime(AUDIT["metadata"]["created_unix"]))
    assert run_day in text  # the run's date, from created_unix
    assert "<h3>The forecaster's test</h3>" in text and "<h3>Results</h3>" in text
    assert "script" not in page.tags and "&lt;script&gt;" in text
    assert "✗ refuted*</span>" in text and "~ sensitive</span>" in text  # marks, coloured
    assert "pytest claims -m 'claim or health'" in text


def test_a_figure_not_given_is_not_linked():
    text = markdown.render_html(AUDIT, {"b.png": png("blue")})
    page = parse(text)
    assert "figure-a" not in page.links and len(page.images) == 1


def test_outside_a_checkout_the_page_says_so():
    outside = copy.deepcopy(AUDIT)
    outside["metadata"]["git"] = {"commit": None, "dirty": None}
    del outside["metadata"]["created_unix"]
    text = markdown.render_html(outside, {})
    parse(text)
    assert "Not a git repository" in text and "date unknown" in text


@pytest.mark.slow
def test_written_report_has_every_figure_inline_and_an_svg_beside_each(
    calibration, uncertainty, tmp_path: Path
):
    """The report as the plugin writes it: audit.html holds every PNG of figures/, byte for
    byte and decodable; each PNG has an SVG twin; audit.json indexes the figures."""
    records = [
        ClaimRecord("cal-02a", "calibration", "S", "a claim", "1.5", "1.7", "± 0.4", "holds", {}),
        ClaimRecord("unc-04b", "uncertainty", "S", "a claim", "0.27", "0.27", "± 0.1", "holds", {}),
    ]
    robustness = robustness_section(
        {"calibration", "uncertainty"},
        None,
        {"calibration": test_calibration.COMPARISONS, "uncertainty": test_uncertainty.COMPARISONS},
    )
    written = audit.write_report(
        tmp_path / "report",
        records=records,
        expected={},
        cache_events=[],
        wall_s=1.0,
        robustness=robustness,
        documents=[calibration_document, uncertainty_document],
    )
    report = tmp_path / "report"
    pngs = sorted((report / "figures").glob("*.png"))
    assert {p.name for p in pngs} >= {"reliability_seed0.png", "auroc_per_seed.png", "uncertainty_band.png", "robustness.png"}  # fmt: skip
    assert set(written) == {
        report / "audit.json",
        report / "audit.md",
        report / "audit.html",
        *pngs,
        *(p.with_suffix(".svg") for p in pngs),
    }
    page = parse((report / "audit.html").read_text(encoding="utf-8"))
    assert sorted(inlined(page)) == sorted(p.read_bytes() for p in pngs)
    for path in pngs:
        root = ElementTree.parse(path.with_suffix(".svg")).getroot()
        assert root.tag.endswith("svg")
    index = json.loads((report / "audit.json").read_text())["figures"]
    assert sorted(entry["file"] for entry in index) == [p.name for p in pngs]
    assert "figure-reliability_seed0" in page.links and "figure-uncertainty_band" in page.links
    assert not re.search(r"https?://(?!tahabouhsine\.com)", (report / "audit.html").read_text())


def test_each_claims_reading_is_shown_as_in_audit_md():
    """A claim's `reading=` (the rule behind a qualitative verdict) is on the page beside its
    statement, escaped, as audit.md shows it. Bug fixed: audit.html left every reading out."""
    read = copy.deepcopy(AUDIT)
    read["claims"][0]["details"]["reading"] = "'close to <1>': the ratio lies in [0.9, 1.1]"
    text = markdown.render_html(read, {})
    parse(text)
    assert "Reading: 'close to &lt;1&gt;': the ratio lies in [0.9, 1.1]." in text
    assert text.count("Reading:") == 1
