"""Each claim is one object, defined on its test (claims/test_<document>.py, with `Claims`):
one test per claim, and its facts nowhere else.

Not claims: these tests check the claims' bookkeeping. A claim test exists for every claim
and only for claims; the statement, reading and printed figures of each are written in the
test module that defines it, never restated in another file of lib/, claims/ or tests/;
and a spec becomes the record the audit reads (engine/claim_audit/engine/claim.py).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import test_calibration as calibration
import test_calibration_health as calibration_health
import test_uncertainty
import test_uncertainty_health
from claim_audit.engine.claim import PROPERTY, ClaimRecord, Claims, ClaimSpec, Orders, run_claim
from claim_audit.engine.verdict import Judgement, satisfied
from fault_tools import child_env

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS: dict[Path, Claims] = {
    ROOT / "claims" / "test_calibration.py": calibration.CLAIMS,
    ROOT / "claims" / "test_calibration_health.py": calibration_health.CLAIMS,
    ROOT / "claims" / "test_uncertainty.py": test_uncertainty.CLAIMS,
    ROOT / "claims" / "test_uncertainty_health.py": test_uncertainty_health.CLAIMS,
}
SPECS: dict[str, ClaimSpec] = {i: s for specs in DOCUMENTS.values() for i, s in specs.items()}

PLUGINS = ("--no-report", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "claim_markers")
# claim_markers: prints the claim of every test pytest collects (its marker's spec).
FIELDS = ("id", "document", "section", "statement", "published", "finding", "origin", "gates")
COLLECT_PLUGIN = f"""
import json


def pytest_collection_finish(session):
    for item in session.items:
        marker = item.get_closest_marker("claim")
        if marker is not None:
            fields = {{name: getattr(marker.args[0], name) for name in {FIELDS}}}
            print("CLAIM " + json.dumps({{"test": item.nodeid, **fields}}))
"""


def test_every_spec_has_exactly_one_test_and_every_claim_test_a_spec(tmp_path):
    """Collected as pytest collects the suite: the claim markers of claims/ are the specs'."""
    (tmp_path / "claim_markers.py").write_text(COLLECT_PLUGIN)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "claims", "--collect-only", "-q", *PLUGINS],
        cwd=ROOT,
        env=child_env(PYTHONPATH=os.pathsep.join([str(tmp_path), *_pythonpath()])),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    markers = [json.loads(line[6:]) for line in result.stdout.splitlines() if line[:6] == "CLAIM "]
    tests = Counter(m["id"] for m in markers)
    assert {
        "several tests": sorted(i for i, n in tests.items() if n > 1),
        "a test without a spec": sorted(set(tests) - set(SPECS)),
        "a spec without a test": sorted(set(SPECS) - set(tests)),
    } == {"several tests": [], "a test without a spec": [], "a spec without a test": []}
    for marker in markers:
        spec = SPECS[marker["id"]]
        test = marker.pop("test")
        expected = {name: getattr(spec, name) for name in FIELDS}
        assert json.loads(json.dumps(expected)) == marker, f"{test} is not marked from its spec"


def _pythonpath() -> list[str]:
    return [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]


# --- each fact once ------------------------------------------------------------------------

NUMBER = re.compile(r"[+-]?\d+(\.\d+)?")
# Files outside the spec modules that may hold a spec's figure, and why; each entry must
# still match (a stale entry fails), so the list only shrinks.
ALLOWED: dict[tuple[str, str], str] = {
    **{
        (path, calibration.CLAIMS["cal-08b"].published): "a worked fault's NLL (at T = 20), "
        "not the post's temperature"
        for path in ("lib/calibration/health.py", "tests/test_faults_metrics.py")
    },
    ("tests/test_data.py", calibration.CLAIMS["cal-12a"].published): "an image size in an "
    "IDX header, not the post's field magnitude",
    # Short round numbers that the post prints as seed spreads (cal-09e, cal-11e) and that
    # code and tests use for other things.
    **{
        (path, calibration.CLAIMS["cal-09e"].published): reason
        for path, reason in (
            ("claims/readings/calibration/figures.py", "a label's height on a reliability plot"),
            ("tests/test_figures.py", "a toy interval's upper offset"),
            ("engine/tests/test_diff.py", "a toy tolerance"),
            ("tests/test_sweep_subsets.py", "the sd of toy ECEs"),
        )
    },
    **{
        (path, calibration.CLAIMS["cal-11e"].published): reason
        for path, reason in (
            ("claims/properties/test_figure_rule.py", "printing's half unit"),
            ("engine/tests/test_audit_faults.py", "a sleep in seconds"),
            ("engine/tests/test_plugin.py", "a toy tolerance"),
            ("engine/tests/test_diff.py", "a toy figure's move"),
        )
    },
}


def _figures(spec: ClaimSpec) -> list[str]:
    """The spec's printed figures: its published strings that are numbers. (A qualitative
    claim's published short form, e.g. "crashes", is not a figure; its statement is the fact.)"""
    published = spec.published if isinstance(spec.published, tuple) else (spec.published,)
    return [p for p in published if p is not None and NUMBER.fullmatch(p)]


def _pattern(text: str, figure: bool) -> re.Pattern:
    """`text` itself; a figure as a whole number ("3.14" not in "13.14", "3.145", "3.14.1")."""
    if not figure:
        return re.compile(re.escape(text))
    return re.compile(rf"(?<![\w.]){re.escape(text)}(?!\w|\.\d)")


def _facts(spec: ClaimSpec) -> list[tuple[str, bool]]:
    """(text, is a figure) of each fact the spec states."""
    texts = [(spec.statement, False)] + ([(spec.reading, False)] if spec.reading else [])
    return texts + [(figure, True) for figure in _figures(spec)]


def restated(files: list[Path], specs: dict[Path, Claims]) -> dict[tuple[Path, str], str]:
    """(file, fact) -> claim id, for each fact of a spec found in a file other than the
    spec's own module."""
    found = {}
    sources = {path: path.read_text() for path in files}
    for module, document in specs.items():
        for spec in document.values():
            for text, figure in _facts(spec):
                pattern = _pattern(text, figure)
                for path, source in sources.items():
                    if path != module and pattern.search(source):
                        found[(path, text)] = spec.id
    return found


def _scanned() -> list[Path]:
    return sorted(
        path
        for folder in ("lib", "claims", "tests", "engine/tests")
        for path in (ROOT / folder).rglob("*")
        if path.suffix in (".py", ".md") and path.is_file()
    )


def test_each_statement_reading_and_figure_is_written_once():
    """Outside its spec module, no file of lib/, claims/, tests/ or engine/tests/ restates a
    claim's statement, the reading of its words or a figure it publishes (test data uses
    other numbers)."""
    files = _scanned()
    assert len(files) > 50 and all(module in files for module in DOCUMENTS)
    found = {
        (str(p.relative_to(ROOT)), text): i for (p, text), i in restated(files, DOCUMENTS).items()
    }
    stale = sorted(set(ALLOWED) - set(found))
    assert stale == [], "allowed restatements that are gone: delete their ALLOWED entries"
    assert {k: v for k, v in found.items() if k not in ALLOWED} == {}


def test_figures_are_found_where_they_are_written():
    """The figure pattern matches each printed figure in its own spec module, so a scan
    that finds nothing elsewhere has looked."""
    for module, document in DOCUMENTS.items():
        source = module.read_text()
        figures = [figure for spec in document.values() for figure in _figures(spec)]
        assert len(figures) >= 10 or all(s.published is None for s in document.values())
        missing = [f for f in figures if not _pattern(f, figure=True).search(source)]
        assert missing == [], module.name


@pytest.mark.parametrize("fact", ["statement", "reading", "figure"])
def test_a_restated_fact_is_found(tmp_path, fact):
    """A file that restates a statement, a reading or a figure is named by the scan."""
    spec = calibration.CLAIMS["cal-02a"] if fact == "figure" else calibration.CLAIMS["cal-14"]
    text = {"statement": spec.statement, "reading": spec.reading, "figure": spec.published}[fact]
    assert isinstance(text, str)
    copy = tmp_path / "test_copy.py"
    copy.write_text(f"EXAMPLE = {text!r}  # said again\n")
    found = restated([copy], DOCUMENTS)
    assert found == {(copy, text): spec.id}


# --- a spec becomes a record ---------------------------------------------------------------


def close(v: float) -> Judgement:
    return satisfied(abs(v - 1.0) <= 0.1, published="1.0", measured=v, tolerance="± 0.1")


def toy_spec(id: str, **kw) -> ClaimSpec:
    """A claim of the toy document; `checked` judges it with a body (`close` unless given)."""
    return ClaimSpec(id, "toy", "Toy", f"claim {id}", kw.pop("published", None), **kw)


def checked(spec: ClaimSpec, orders: Orders | None, body=close) -> tuple[ClaimRecord, list]:
    """The record of `spec` with `body` judged over `orders` (no argument: judged once)."""
    properties: list = []
    arguments = {} if orders is None else {"v": orders}
    return run_claim(spec, body, arguments, properties), properties


def test_a_spec_is_judged_on_every_order_with_its_published_figure_and_reading():
    spec = toy_spec("t-spec-orders", reading="'recovers': within 0.1")
    record, properties = checked(spec, Orders({"faithful": 1.05, "other": 1.3}))
    assert (record.published, record.measured, record.verdict) == ("1.0", "1.05", "inconclusive")
    assert record.details["reading"] == "'recovers': within 0.1"
    assert list(record.details["orders"]) == ["faithful", "other"]
    assert [name for name, _ in properties] == [PROPERTY]


def test_no_record_sets_a_verdict():
    """A spec cannot carry a verdict of its own: the verdict comes from the run's orders."""
    with pytest.raises(TypeError, match="sensitive"):
        toy_spec("t-spec-recorded", sensitive="held on machine A, not on B")


def test_a_spec_judged_once_reads_the_faithful_order_or_nothing():
    seen = []

    def judge(v=None) -> Judgement:
        seen.append(v)
        return satisfied(True, published="1.0", measured=1.0)

    record, _ = checked(toy_spec("t-spec-once", once=True), Orders({"faithful": 7, "x": 8}), judge)
    assert (seen, list(record.details["orders"])) == ([7], ["faithful"])
    checked(toy_spec("t-spec-nothing"), None, judge)
    assert seen == [7, None]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"published": 1.0}, r"t-bad: published must be the figure as printed .* got 1.0"),
        ({"published": ("1.0", "")}, r"t-bad: published must be the figure as printed"),
        ({"statement": ""}, r"t-bad: statement must be a non-empty string"),
    ],
)
def test_a_malformed_spec_is_refused(change, message):
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(toy_spec("t-bad"), **change)


def test_one_id_defined_twice_is_refused():
    with pytest.raises(ValueError, match="claim id 't-twice' is defined twice"):
        claims = Claims("toy")
        for _ in range(2):
            claims("t-twice", "Toy", "claim t-twice")(close)
