"""Verdict and report faults: a NaN figure, a known finding whose experiment crashed, a report
folder that cannot be written. None may pass quietly or cost the user the previous report.
"""

from __future__ import annotations

import errno
import math
from pathlib import Path

import pytest
from fault_tools import run_audit_pytest, write_test_folder

from lib.data import DataError
from lib.report import audit
from lib.report.claim import PROPERTY, Claim, ClaimMeta, ClaimRecord

pytestmark = pytest.mark.fault

NAN, INF = math.nan, math.inf


def new_claim() -> tuple[Claim, list]:
    properties: list = []
    return Claim(ClaimMeta("t-1", "demo", "Demo", "a claim"), properties), properties


@pytest.mark.parametrize(
    "check",
    [
        lambda c: c.close_to(NAN, "1.0", 0.1),
        lambda c: c.close_to(1.0, "1.0", NAN),
        lambda c: c.close_to(1.0, "1.0", INF),  # would make anything hold
        lambda c: c.all_close([1.0, NAN], ["1.0", "2.0"], 0.1),
        lambda c: c.all_close([1.0, 2.0], ["1.0", "2.0"], [0.1, NAN]),
        lambda c: c.all_close([1.0], ["1.0"], [INF]),
        lambda c: c.holds(NAN >= 2, published="ratio >= 2", measured=NAN),
        lambda c: c.holds(False, published="x", measured=[0.5, -INF]),
        lambda c: c.holds(False, published="x", measured="outside", ranges={"a": [0.0, NAN]}),
    ],
    ids=[
        "close_to-measured",
        "close_to-tolerance-nan",
        "close_to-tolerance-inf",
        "all_close-measured",
        "all_close-tolerance-nan",
        "all_close-tolerance-inf",
        "holds-measured",
        "holds-measured-list",
        "holds-details",
    ],
)
def test_non_finite_figure_is_an_error_not_a_refutation(check):
    """A NaN or infinite figure raises ValueError and records nothing, so it can never be
    read as "refuted" (which a known finding would accept quietly)."""
    claim, properties = new_claim()
    with pytest.raises(ValueError, match=r"NaN|finite"):
        check(claim)
    assert not [name for name, _ in properties if name == PROPERTY]


FINDINGS_MODULE = """
    import math
    import pytest

    def claim_marker(id):
        return pytest.mark.claim(
            id=id, document="demo", section="Demo", statement=f"claim {id}",
            finding="refuted on the reproduction",
        )

    @claim_marker("f-ok")
    def test_finding_reproduces(claim):
        claim.close_to(2.5, "2.0", 0.1)

    @claim_marker("f-crash")
    def test_finding_whose_experiment_crashed(claim):
        raise KeyError("the spread entry lacks mc_nll_100")

    @claim_marker("f-nan")
    def test_finding_measured_as_nan(claim):
        ratio = math.nan
        claim.holds(ratio >= 2, published="ratio >= 2", measured=ratio)
"""


def test_known_finding_that_errors_fails_the_run(tmp_path):
    """A recorded finding whose test crashes or measures NaN is an ERROR that fails the run
    (a strict xfail would count it as the expected failure). test_report.py shows that a run
    whose finding reproduces still exits 0."""
    folder = write_test_folder(tmp_path, FINDINGS_MODULE)
    failing = run_audit_pytest(folder, "--no-report")
    assert failing.returncode == 1, failing.stdout
    rows = {
        line.split()[0]: line.split()[-1]
        for line in failing.stdout.splitlines()
        if line[:2] == "f-"
    }
    assert (rows["f-ok"], rows["f-crash"], rows["f-nan"]) == ("refuted*", "ERROR", "ERROR")
    assert "ERROR in f-crash: KeyError: 'the spread entry lacks mc_nll_100'" in failing.stdout
    assert "ERROR in f-nan: ValueError: f-nan: measured is NaN or infinite" in failing.stdout


def demo_records() -> list[ClaimRecord]:
    """Records of a document without sections or figures, so no experiment runs."""
    return [ClaimRecord("d-1", "demo", "Demo", "a claim", "1.0", "1.0", "± 0.1", "holds", {})]


def write(report_dir: Path) -> list[Path]:
    return audit.write_report(
        report_dir, records=demo_records(), expected={}, cache_events=[], wall_s=0.0
    )


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (hidden ones included), by relative path, with its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_report_dir_that_is_a_file_is_refused_and_left_alone(tmp_path):
    """--report-dir naming an existing regular file: a clear error; the file is not moved."""
    notes = tmp_path / "notes.txt"
    notes.write_text("the user's notes")
    with pytest.raises(audit.ReportError, match=r"notes.txt exists and is not a folder"):
        write(notes)
    assert snapshot(tmp_path) == {"notes.txt": b"the user's notes"}


@pytest.mark.parametrize(
    ("stage", "error", "match"),
    [
        ("render", OSError(errno.ENOSPC, "No space left on device"), r"cannot write the report"),
        ("build", DataError("mnist files not found"), r"cannot build the report \(DataError"),
    ],
    ids=["disk-full-while-writing", "experiment-failed-while-building"],
)
def test_failed_report_keeps_the_previous_one(tmp_path, monkeypatch, stage, error, match):
    """The report cannot be finished (disk full, an experiment fails): a clear ReportError,
    the previous report byte for byte as it was, no staging folder left behind."""
    report_dir = tmp_path / "report"
    write(report_dir)
    before = snapshot(tmp_path)

    def fail(*args, **kwargs):
        raise error

    monkeypatch.setattr(audit.markdown if stage == "render" else audit, stage, fail)
    with pytest.raises(audit.ReportError, match=match):
        write(report_dir)
    assert snapshot(tmp_path) == before
    assert [p.name for p in tmp_path.iterdir()] == ["report"]


DEMO_MODULE = """
    import pytest

    @pytest.mark.claim(id="d-1", document="demo", section="Demo", statement="a claim")
    def test_holds(claim):
        claim.close_to(1.0, "1.0", 0.1)
"""


def test_report_dir_under_a_regular_file_fails_the_run_clearly(tmp_path):
    """--report-dir below a regular file: the run says why and how to fix it, exits non-zero,
    and the file and an earlier report elsewhere are untouched."""
    folder = write_test_folder(tmp_path / "run", DEMO_MODULE)
    write(folder / "report")
    blocker = folder / "blocker"
    blocker.write_text("a regular file")
    before = snapshot(folder)
    result = run_audit_pytest(folder, "--report-dir", "blocker/report")
    assert result.returncode == 1
    assert "report not written: cannot create the report folder" in result.stdout
    assert "pass --report-dir to a writable place or --no-report" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr
    assert snapshot(folder) == before
