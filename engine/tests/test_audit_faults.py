"""Verdict and report faults: a NaN figure, a known finding whose experiment crashed, a report
folder that cannot be written. None may pass quietly or cost the user the previous report.
"""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from claim_audit import Claims, Region, figure, satisfied, within
from claim_audit.engine.claim import (
    FAITHFUL,
    PROPERTY,
    ClaimRecord,
    ClaimRefuted,
    Orders,
    judge_body,
    run_claim,
)
from claim_audit.engine.prediction import half_unit
from claim_audit.engine.share import share_bounds
from claim_audit.render.markdown import NOTES
from claim_audit.report import audit
from fault_tools import (
    REPO_ROOT,
    TIMEOUT_S,
    pytest_command,
    run_audit_pytest,
    run_pytest,
    tiny_pytest_env,
    write_test_folder,
)

pytestmark = pytest.mark.fault

NAN, INF = math.nan, math.inf


class DataError(Exception):
    """A project's own error, as an experiment raises it while the report is built."""


GAPS = np.array([-0.1, NAN, -0.2])


CHECKS = Claims("checks")


def judged_once(body) -> ClaimRecord:
    """The record of a new claim of `CHECKS` whose body (no arguments) is judged once."""
    claim_id = f"chk-{len(CHECKS)}"
    CHECKS(claim_id, "S", "a claim", published="x")(body)
    return judge_body(CHECKS[claim_id], body, {})


@pytest.mark.parametrize(
    "check",
    [
        lambda: satisfied(True, published="x", measured=1.0, tolerance=INF),
        lambda: satisfied(NAN >= 2, published="ratio >= 2", measured=NAN),
        lambda: satisfied(False, published="x", measured=[0.5, -INF]),
        lambda: satisfied(False, published="x", measured="outside", ranges={"a": [0.0, NAN]}),
        # One empty bin: np.all(gaps < 0) is False, which read as a reproduced finding.
        lambda: satisfied(bool(np.all(GAPS < 0)), published="gaps < 0", measured=GAPS),
        lambda: satisfied(True, published="x", measured="inside", gap=np.array(NAN)),
        lambda: satisfied(True, published="x", measured="inside", gaps={"a": GAPS[None]}),
        lambda: satisfied(True, published="x", measured="in", bins=np.array([1.0, GAPS], object)),
        lambda: satisfied(False, published="x", measured=Decimal("NaN")),
        lambda: satisfied(False, published="x", measured=Decimal("sNaN")),
        lambda: satisfied(False, published="x", measured=complex(NAN, 0.0)),
        lambda: satisfied(False, published="x", measured=10**400),  # inf as a float
    ],
    ids=[
        "holds-tolerance-inf",
        "holds-measured",
        "holds-measured-list",
        "holds-details",
        "holds-array",
        "holds-details-0d-array",
        "holds-details-2d-array",
        "holds-details-object-array",
        "holds-decimal",
        "holds-decimal-signalling",
        "holds-complex",
        "holds-int-too-large-for-a-float",
    ],
)
def test_non_finite_figure_is_an_error_not_a_refutation(check):
    """A NaN or infinite published, measured, tolerance or details value reaching a claim (a
    diverged run, a NaN in a spread): ValueError, nothing recorded, so it can never be read
    as "refuted". Bug fixed: NaN compares false, so it read as refuted and a known finding
    passed quietly; an infinite tolerance made anything hold; a NaN inside a numpy array, a
    Decimal or a complex went through (a 0-d NaN array in the details stopped the whole
    report without naming the claim) (engine/claim_audit/engine/claim.py `_nonfinite_at`,
    `_refuse_unjudgeable`)."""
    with pytest.raises(ValueError, match=r"NaN|finite"):
        judged_once(check)


@pytest.mark.parametrize("worst", [NAN, INF, -INF])
def test_within_a_value_that_is_not_finite_is_an_error_not_a_refutation(worst):
    """`within` comparing NaN or an infinity while `measured` is text (the largest gap over
    bins, one of them empty): ValueError naming the claim and the value, never "refuted" (a
    known finding would read as reproduced). Bug fixed: only `measured` was checked, so a
    NaN lay in no region and every order "did not hold" (claim.py `_refuse_unjudgeable`)."""
    body = lambda: within(  # noqa: E731
        worst, Region(high=0.005), name="largest gap", measured=f"largest gap {worst:.3f}"
    )
    with pytest.raises(ValueError, match=r"largest gap = (nan|-?inf), is NaN or infinite"):
        judged_once(body)


@pytest.mark.parametrize("value", [True, np.bool_(False), np.array(True)])
def test_within_refuses_a_bool_as_figure_does(value):
    """A bool handed to `within` is a TypeError, as `figure(...)` refuses one. Bug fixed: True
    was taken as 1.0 and held in [0.5, 1.5] (verdict.py `within`)."""
    with pytest.raises(TypeError, match=r"within.*compares a number; got the bool"):
        within(value, Region(0.5, 1.5), name="flag")


def test_within_an_int_too_large_for_a_float_is_worded():
    """10**400 given to `within`: the figure path's ValueError, not Python's raw
    OverflowError (verdict.py `within`, `as_float`)."""
    with pytest.raises(
        ValueError, match=r"within\(\.\.\.\) was given size: .* too large for a float"
    ):
        within(10**400, Region(0.0), name="size")


INPUTS = Claims("inputs")


def judged(claim_id: str, body, *values: float) -> dict:
    """The record of a claim of `INPUTS` whose body is judged over `values`, one per order."""
    if claim_id not in INPUTS:
        published = "> 1" if claim_id.endswith("-q") else "5.0"
        INPUTS(claim_id, "S", "a claim", published=published)(body)
    orders = Orders({FAITHFUL: values[0], **{f"o{i}": v for i, v in enumerate(values[1:])}})
    properties: list = []  # the record as its test carries it to the plugin
    with contextlib.suppress(ClaimRefuted):
        run_claim(INPUTS[claim_id], body, {"v": orders}, properties)
    return json.loads(dict(properties)[PROPERTY])


@pytest.mark.parametrize("printed", ["1e309", "-1e400", "inf", "nan", "1e300"])
def test_published_figure_beyond_the_engine_is_refused_where_defined(printed):
    """A published figure that is not finite, or too large to spread over orders: a
    ValueError naming the claim when it is defined. Bug fixed: "1e309" was an OverflowError
    from inside the engine when judged (engine/claim_audit/engine/claim.py `ClaimSpec`)."""
    with pytest.raises(ValueError, match=rf"in-pub: published figure '{printed}' is (not finite|too large)"):  # fmt: skip
        Claims("inputs-pub")("in-pub", "S", "a claim", published=printed)(lambda v: v)


@pytest.mark.parametrize(
    ("kind", "body"),
    [("n", lambda v: 10**400), ("seq", lambda v: [10**400]), ("fig", lambda v: figure(-(10**400)))],
)
def test_figure_too_large_for_a_float_is_a_clear_error(kind, body):
    """A body returning an int beyond a float's range: a ValueError naming the claim and the
    problem. Bug fixed: an OverflowError from inside the engine (claim.py `_as_float`)."""
    with pytest.raises(ValueError, match=rf"in-huge-{kind}: its body returned the figure .* too large for a float"):  # fmt: skip
        judged(f"in-huge-{kind}", body, 5.0, 5.1)


def test_figures_whose_spread_overflows_are_refused_naming_the_claim():
    """Orders at ±1e300: a ValueError naming the claim, order and limit. Bug fixed: an
    overflow RuntimeWarning inside the interval's sd ended the claim as an ERROR without
    saying why (claim.py `_refuse_unjudgeable`)."""
    with pytest.raises(ValueError, match=r"in-far: measured 1e\+300 in order 'faithful' is beyond ±1e\+150"):  # fmt: skip
        judged("in-far", lambda v: v, 1e300, -1e300, 1e300)
    with pytest.raises(ValueError, match=r"in-far-q: measured -1e\+300 in order 'faithful'"):
        judged("in-far-q", lambda v: within(v, Region(1.0)), -1e300, 1e300)


def test_agreement_whose_draws_barely_moved_gets_a_verdict():
    """|A - B| = 0 in 10 orders and 1.36e-20 in 4, against <= 1e-9: holds, under the suite's
    warnings-as-errors. Bug fixed: a range above the engine's relative "unmoved" test but
    below Shapiro-Wilk's absolute 1e-19 reached it, whose "Input data has range zero"
    warning made the claim an ERROR (share.py `margin_bounds`)."""
    body = lambda v: within(v, Region(high=1e-9), name="|A - B|")  # noqa: E731
    record = judged("in-unmoved-q", body, *[0.0] * 10, *[1.36e-20] * 4)
    assert record["verdict"] == "holds", record["details"]


DRAWS = 1 + 0.01 * np.random.default_rng(0).standard_normal(14)


@pytest.mark.parametrize(
    ("unit", "exact"), [(2.0**-1000, True), (2.0**1000, True), (2.0**-1060, False)]
)
def test_agreement_share_bounds_are_the_same_at_any_magnitude(unit, exact):
    """Draws about 1 (1% spread) against a region ending among them, and the same draws and
    region scaled by `unit`: the same verdict, by the same method; the same bounds, bit for
    bit, where the scaled draws are exact (a normal power of two), whereas subnormal draws
    keep only about 14 of their bits. Bug fixed: draws of size 1e-300 or subnormal ended in
    Shapiro-Wilk's "range zero" warning or a zero sd (share.py `margin_bounds`)."""

    def bounds(scale: float, high: float):
        values, region = DRAWS * scale, Region(high=high * scale)
        return share_bounds([region.contains(v) for v in values], values[:, None], [region], ["linear"])  # fmt: skip

    for high in (1.0, 1.02):
        scaled, at_one = bounds(unit, high), bounds(1.0, high)
        assert (scaled.verdict, scaled.method) == (at_one.verdict, at_one.method)
        if exact:
            assert scaled == at_one


def test_numpy_arrays_from_a_body_are_judged_and_recorded():
    """A 0-d numpy array returned (or handed to figure) is judged as its number; a 1-d array
    among the details is recorded as a list. Bug fixed: both were TypeErrors ("len() of
    unsized object", "only 0-dimensional arrays can be converted")."""
    record = judged("in-0d", lambda v: np.array(v), 5.0, 5.01, 4.99)
    assert (record["verdict"], record["measured"]) == ("holds", "5")
    record = judged("in-1d", lambda v: figure(np.float32(v), per=np.array([1.0, 2.0])), 5.0, 5.01)
    assert record["details"]["per"] == [1.0, 2.0]
    body = lambda v: satisfied(v > 1, measured=np.array([v, v]), per=np.arange(2))  # noqa: E731
    record = judged("in-1d-q", body, 5.0)
    assert (record["measured"], record["details"]["per"]) == ("5, 5", [0, 1])


@pytest.mark.parametrize(
    ("printed", "half"), [("1e3", 500.0), ("1.0e3", 50.0), ("1.00E+3", 5.0), ("1000", 0.5)]
)
def test_exponent_notation_is_printed_to_its_mantissas_digits(printed, half):
    """The printed-digit rule for a figure in exponent notation, as documented
    (docs/VERDICTS.md): half a unit of the mantissa's last digit."""
    assert half_unit(printed) == half


FINDINGS_MODULE = """
    import math
    from claim_audit import Claims, satisfied

    CLAIMS = Claims("demo")

    def claim_marker(id, published="2.0"):
        return CLAIMS(
            id, "Demo", f"claim {id}", published=published, finding="refuted on the reproduction"
        )

    @claim_marker("f-ok")
    def test_finding_reproduces():
        return 2.5

    @claim_marker("f-crash")
    def test_finding_whose_experiment_crashed():
        raise KeyError("the spread entry lacks mc_nll_100")

    @claim_marker("f-nan", published="ratio >= 2")
    def test_finding_measured_as_nan():
        ratio = math.nan
        return satisfied(ratio >= 2, measured=ratio)
"""


def test_known_finding_that_errors_fails_the_run(tmp_path):
    """A recorded finding whose test crashes or measures NaN is an ERROR that fails the run,
    each error printed once under the table (test_plugin.py shows that a run whose finding
    reproduces still exits 0). Bug fixed: pytest counted the exception as the expected
    failure, so the table said ERROR but the run exited 0 (engine/claim_audit/report/plugin.py
    `AuditCollector.pytest_sessionfinish`, `pytest_terminal_summary`)."""
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
    """--report-dir naming an existing regular file: ReportError "exists and is not a folder
    (left as it is)"; the file is untouched. Bug fixed: the file was renamed to a hidden
    `.name.old-<pid>` and replaced by a report folder (engine/claim_audit/report/audit.py `write_report`)."""
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
    """The report cannot be finished (the disk fills while it is written, an experiment fails
    while it is built): a clear ReportError, the previous report byte for byte as it was, no
    staging folder left behind."""
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
    from claim_audit import Claims

    CLAIMS = Claims("demo")

    @CLAIMS("d-1", "Demo", "a claim", published="1.0")
    def test_holds():
        return 1.0
"""


def test_report_dir_under_a_regular_file_fails_the_run_clearly(tmp_path):
    """--report-dir below a regular file: "report not written: cannot create the report folder",
    with the fix (another --report-dir or --no-report), exit 1 without a traceback; the file
    and an earlier report elsewhere are untouched."""
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


def claim_rows(stdout: str) -> dict[str, str]:
    """Claim id -> verdict, read from the claims table of a child run."""
    table = stdout.split("CLAIMS AUDIT")[1].split("-" * 78)[0]
    return {
        line.split()[0]: line.split()[-1]
        for line in table.splitlines()[3:]
        if line[:1] not in ("", " ")
    }


SETUP_MODULE = """
    import pytest
    from claim_audit import Claims

    CLAIMS = Claims("demo")

    @pytest.fixture
    def experiment():
        raise FileNotFoundError("CLAIMS_DATA_DIR=/empty has no fashion-mnist/ subdirectory")

    @CLAIMS("f-setup", "Demo", "claim f-setup", published="2.0", finding="refuted on the reproduction")
    def test_finding_whose_experiment_cannot_start(experiment):
        return 2.5

    @CLAIMS("c-ok", "Demo", "claim c-ok", published="1.0")
    def test_claim_holds():
        return 1.0
"""


def test_known_finding_whose_fixture_fails_at_setup_is_an_error(tmp_path):
    """A recorded finding whose experiment (a fixture) raises during setup: an ERROR row naming
    the exception, and the run fails. Bug fixed: with findings as strict xfails pytest
    counted this as "XFAIL at setup" and nothing was recorded, so the run exited 0 with the
    claim missing from the table (findings are now `finding=` on the claim marker, not
    xfails)."""
    result = run_audit_pytest(write_test_folder(tmp_path, SETUP_MODULE), "--no-report")
    assert result.returncode == 1, result.stdout
    assert claim_rows(result.stdout) == {"c-ok": "holds", "f-setup": "ERROR"}
    assert (
        "2 document claims: 1 hold, 0 refuted (0 known findings), 0 sensitive, 0 unpinned, 0 inconclusive, 1 errors"
        in " ".join(result.stdout.split())
    )
    assert (
        "ERROR in f-setup: FileNotFoundError: CLAIMS_DATA_DIR=/empty has no fashion-mnist/"
        in result.stdout
    )


GONE_MODULE = """
    from claim_audit import Claims

    CLAIMS = Claims("demo")

    @CLAIMS("f-gone", "Demo", "claim f-gone", published="2.0", finding="measured 2.5")
    def test_finding_that_no_longer_reproduces():
        return 2.0
"""


def test_finding_that_no_longer_reproduces_says_so(tmp_path):
    """A recorded finding whose claim now holds in every order: the run fails, the table says
    FINDING GONE with its footnote and audit.md that the finding no longer reproduces. Bug
    fixed: both said plain "holds" (engine/claim_audit/render/markdown.py `verdict_label`)."""
    folder = write_test_folder(tmp_path, GONE_MODULE)
    result = run_audit_pytest(folder, "--report-dir", "out")
    assert result.returncode == 1, result.stdout
    assert claim_rows(result.stdout) == {"f-gone": "GONE"}
    assert NOTES["FINDING GONE"] in " ".join(result.stdout.split())
    markdown = (folder / "out" / "audit.md").read_text()
    assert "| **! FINDING GONE**" in markdown and NOTES["FINDING GONE"] in markdown


CRASH_MODULE = """
    import os, signal
    import pytest
    from claim_audit import Claims

    CLAIMS = Claims("demo")

    def claim_marker(id):
        return CLAIMS(id, "Demo", f"claim {id}", published="1.0")

    @pytest.fixture
    def experiment_that_kills_its_worker():
        os.kill(os.getpid(), signal.SIGKILL)

    @claim_marker("c-1")
    def test_one():
        return 1.0

    @claim_marker("c-killed")
    def test_worker_killed_in_the_test():
        os.kill(os.getpid(), signal.SIGKILL)

    @claim_marker("c-killed-setup")
    def test_worker_killed_in_setup(experiment_that_kills_its_worker):
        return 1.0

    @claim_marker("c-4")
    def test_four():
        return 1.0
"""


def test_killed_xdist_worker_is_an_error_of_its_claim_and_the_run_goes_on(tmp_path):
    """An xdist worker killed (SIGKILL) in a claim's test or in its fixture: that claim is an
    ERROR naming the crash (a crash during setup is matched to its claim), the other tests
    run, the table is printed, the report goes to the partial folder, exit 1. Bug fixed: the
    plugin read the dead worker's `workeroutput` and crashed the session, exit 3 with no
    table, no report and the other tests never run (engine/claim_audit/report/plugin.py
    `pytest_testnodedown`, `AuditCollector.pytest_sessionfinish`)."""
    folder = write_test_folder(tmp_path, CRASH_MODULE)
    result = run_audit_pytest(folder, "-n", "2", "--report-dir", "out")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "INTERNALERROR" not in result.stdout + result.stderr
    assert claim_rows(result.stdout) == {
        "c-1": "holds",
        "c-4": "holds",
        "c-killed": "ERROR",
        "c-killed-setup": "ERROR",
    }
    assert re.search(r"ERROR in c-killed: worker 'gw\d+' crashed while running", result.stdout)
    written = json.loads((folder / "out" / "partial" / "audit.json").read_text())
    assert written["partial"] == ["2 claims in error: c-killed, c-killed-setup"]
    assert len(written["claims"]) == 4


PARTIAL_MODULE = """
    import os, time
    from pathlib import Path
    import pytest

    from claim_audit import Claims

    CLAIMS = Claims("demo")

    def claim_marker(id):
        return CLAIMS(id, "Demo", f"claim {id}", published="1.0")

    @claim_marker("c-1")
    def test_one():
        return 1.0

    @claim_marker("c-2")
    def test_two():
        if os.environ.get("STOP_HERE"):  # an experiment that is running when Ctrl-C comes
            deadline = time.monotonic() + 30  # c-1's record reaches the report first
            while not Path("c-1-recorded").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            Path("running").touch()
            time.sleep(60)
        return 1.0

    @claim_marker("c-3")
    def test_three():
        return float(os.environ.get("C3_MEASURES", "1.0"))
"""
# The robustness section is computed after the claims; this records that it was asked for.
# And the process writing the report (the xdist controller) marks when it has c-1's result.
SPY_CONFTEST = """
    from pathlib import Path

    def pytest_claims_audit_robustness(config, documents, sweep):
        Path("robustness-asked").touch()

    IN_A_WORKER = []

    def pytest_configure(config):
        IN_A_WORKER.append(hasattr(config, "workerinput"))

    def pytest_runtest_logreport(report):
        if not IN_A_WORKER[0] and report.when == "call" and report.nodeid.endswith("test_one"):
            Path("c-1-recorded").touch()
"""


def partial_run_folder(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A folder whose complete audit is in out/; and that audit's files."""
    folder = write_test_folder(tmp_path, PARTIAL_MODULE)
    (folder / "conftest.py").write_text(textwrap.dedent(SPY_CONFTEST))
    complete = run_audit_pytest(folder, "--report-dir", "out")
    assert complete.returncode == 0, complete.stdout
    (folder / "robustness-asked").unlink()
    (folder / "c-1-recorded").unlink()
    return folder, snapshot(folder / "out")


@pytest.mark.parametrize(
    ("args", "env", "reason"),
    [
        (["-k", "one or two"], {}, "1 claims deselected (-k, -m, --deselect)"),
        (
            ["test_module.py::test_one"],
            {},
            "only part of the suite named: test_module.py::test_one",
        ),
        (["-x"], {"C3_MEASURES": "5.0"}, "stopped early: "),
        (["-x", "-n", "2"], {"C3_MEASURES": "5.0"}, "interrupted"),
    ],
    ids=[
        "deselected",
        "one-test-named",
        "stopped-at-first-failure",
        "stopped-at-first-failure-xdist",
    ],
)
def test_partial_run_keeps_the_complete_report(tmp_path, args, env, reason):
    """A run of part of the suite (`-k`, `-m` or `--deselect` leaving claims out, a test named,
    `-x` stopping it, with and without xdist): the complete audit is left byte for byte; the
    partial one (claims only: no sections, figures or robustness) goes to the partial folder
    with the reasons. Bug fixed: it replaced the complete audit with an unmarked audit of the
    claims that ran (engine/claim_audit/report/plugin.py `pytest_collection_modifyitems`,
    `_partial_reasons`, `_named_subset`)."""
    folder, complete = partial_run_folder(tmp_path)
    result = run_pytest(
        folder,
        *(
            "-p",
            "xdist.plugin",
            "-p",
            "claim_audit.report.plugin",
            "--report-dir",
            "out",
            *args,
        ),
        env=tiny_pytest_env(**env),
    )
    assert f"partial run ({reason}" in result.stdout, result.stdout
    assert snapshot(folder / "out") == complete | snapshot_of(folder / "out", "partial")
    written = json.loads((folder / "out" / "partial" / "audit.json").read_text())
    assert any(r.startswith(reason) for r in written["partial"])
    assert (folder / "out" / "partial" / "audit.md").read_text().count("Partial run") == 1
    assert not (folder / "robustness-asked").exists()
    assert "is left as it was" in result.stdout, result.stdout


def test_a_partial_first_run_does_not_claim_to_keep_an_audit(tmp_path):
    """A partial run where no complete audit was ever written says so. Bug fixed: it said
    "the complete audit in out is left as it was" of an audit that did not exist
    (engine/claim_audit/report/plugin.py `AuditCollector.pytest_sessionfinish`)."""
    folder = write_test_folder(tmp_path, PARTIAL_MODULE)
    result = run_audit_pytest(folder, "--report-dir", "out", "-k", "one or two")
    assert "partial run (" in result.stdout, result.stdout
    assert "left as it was" not in result.stdout, result.stdout
    assert "no complete audit in " in result.stdout, result.stdout
    assert (folder / "out" / "partial" / "audit.json").is_file()
    assert not (folder / "out" / "audit.json").exists()


def test_a_folder_outside_the_testpaths_named_beside_them_cuts_nothing(tmp_path):
    """`pytest claims tests` (make test): the suite's testpath and a folder of other tests
    beside it is a complete audit, written to the report folder itself; a file of the
    testpath named beside that folder is still a partial run. Bug fixed: naming the folder of
    the harness's own tests made the run partial ("only part of the suite named: tests"), as
    if it cut something from the suite (engine/claim_audit/report/plugin.py `_named_subset`)."""
    folder = tmp_path / "project"
    write_test_folder(folder / "suite", PARTIAL_MODULE)
    ini = (folder / "suite" / "pytest.ini").rename(folder / "pytest.ini")
    ini.write_text(ini.read_text() + "testpaths = suite\n")
    (folder / "more").mkdir()
    (folder / "more" / "test_more.py").write_text("def test_more():\n    pass\n")
    whole = run_audit_pytest(folder, "suite", "more", "--report-dir", "out")
    assert whole.returncode == 0, whole.stdout
    assert "partial run" not in whole.stdout, whole.stdout
    assert len(json.loads((folder / "out" / "audit.json").read_text())["claims"]) == 3
    assert not (folder / "out" / "partial").exists()
    cut = run_audit_pytest(folder, "suite/test_module.py", "more", "--report-dir", "out")
    reason = "partial run (only part of the suite named: suite/test_module.py)"
    assert reason in cut.stdout, cut.stdout


def snapshot_of(folder: Path, sub: str) -> dict[str, bytes]:
    """`snapshot(folder / sub)`, keyed as part of `snapshot(folder)`."""
    return {f"{sub}/{name}": data for name, data in snapshot(folder / sub).items()}


# Runs the rest of its command line (python -m pytest ...) with SIGINT as a terminal's
# foreground job has it, whatever this process inherited: bash ignores SIGINT in the jobs it
# starts in the background without job control (`./.ci/run &` in a script), and a child would
# inherit that and never see Ctrl-C. An exec, not a preexec_fn: forking a process that runs
# JAX warns, and the suite turns warnings into errors.
_AS_A_FOREGROUND_JOB = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


def test_ctrl_c_stops_promptly_and_keeps_the_complete_report(tmp_path):
    """Ctrl-C (SIGINT to the process group) during an xdist run: nothing more is computed, the
    complete audit is kept byte for byte and the partial folder gets the claims that ran,
    marked interrupted; exit 2. Bug fixed: the run went on computing the robustness section,
    then replaced the complete audit.json with an unmarked one of the claims that had run and
    deleted a figure (engine/claim_audit/report/plugin.py `_partial_reasons`, `pytest_sessionfinish`;
    engine/claim_audit/report/audit.py `build(partial=...)`)."""
    folder, complete = partial_run_folder(tmp_path)
    python, *pytest_args = pytest_command(
        *("-p", "xdist.plugin", "-p", "claim_audit.report.plugin", "-n", "2"),
        *("--report-dir", "out"),
    )
    child = subprocess.Popen(
        [python, "-c", _AS_A_FOREGROUND_JOB, *pytest_args],
        cwd=folder,
        env=tiny_pytest_env(STOP_HERE="1"),
        start_new_session=True,  # its own process group, as a terminal's foreground job
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while not (folder / "running").exists() and child.poll() is None:
            assert time.monotonic() < deadline, "the test never started"
            time.sleep(0.05)
        os.killpg(child.pid, signal.SIGINT)
        output, _ = child.communicate(timeout=TIMEOUT_S)
    finally:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
    assert child.returncode == pytest.ExitCode.INTERRUPTED, output
    assert snapshot(folder / "out") == complete | snapshot_of(folder / "out", "partial")
    written = json.loads((folder / "out" / "partial" / "audit.json").read_text())
    assert written["partial"][0] == "interrupted"
    assert not (folder / "robustness-asked").exists()


@pytest.mark.parametrize("blocker", ["file", "symlink-to-folder"])
def test_figures_that_are_not_a_folder_leave_the_whole_report_as_it_was(tmp_path, blocker):
    """report/figures is a file, or a symbolic link to a folder: ReportError naming the entry
    and saying to move it away, the whole previous report as it was (every target is checked
    before anything moves). Bug fixed: the error came only after the new audit.json and
    audit.md had replaced the old ones, a half-swapped report (engine/claim_audit/report/audit.py
    `_move_in`)."""
    report_dir = tmp_path / "report"
    write(report_dir)
    shutil.rmtree(report_dir / "figures")
    if blocker == "file":
        (report_dir / "figures").write_text("the user's file")
    else:
        (tmp_path / "elsewhere").mkdir()
        (report_dir / "figures").symlink_to(tmp_path / "elsewhere")
    before = snapshot(tmp_path)
    with pytest.raises(audit.ReportError, match=r"figures is a (file|symbolic link), where the"):
        write(report_dir)
    assert snapshot(tmp_path) == before
    assert (report_dir / "figures").is_symlink() == (blocker != "file")


def test_files_the_user_put_in_the_figures_folder_are_kept(tmp_path):
    """A file or folder the user put into report/figures/: kept; anything the suite does not
    write there stays. Bug fixed: the folder was replaced as a whole, deleting them
    (engine/claim_audit/report/audit.py `_move_in`, engine/claim_audit/render/drawing.py
    `figure_names`)."""
    report_dir = tmp_path / "report"
    write(report_dir)
    (report_dir / "figures" / "my_notes.txt").write_text("the user's notes")
    (report_dir / "figures" / "drafts").mkdir()
    (report_dir / "figures" / "drafts" / "sketch.svg").write_text("<svg/>")
    write(report_dir)
    assert snapshot(report_dir / "figures") == {
        "my_notes.txt": b"the user's notes",
        "drafts/sketch.svg": b"<svg/>",
    }


WRITER = """
    import os, sys, time
    from pathlib import Path
    from claim_audit.report import audit
    from claim_audit.engine.claim import ClaimRecord

    # Test-only hook: a slow file system (each rename takes 5 ms), so the writes overlap.
    rename = os.replace
    os.replace = lambda *args: (time.sleep(0.005), rename(*args))
    record = ClaimRecord("d-1", "demo", "Demo", "a claim", "1.0", "1.0", "± 0.1", "holds", {})
    Path(sys.argv[2]).touch()
    while len(list(Path(sys.argv[2]).parent.glob("ready-*"))) < 2:  # start together
        time.sleep(0.01)
    failures = 0
    for _ in range(30):
        try:
            audit.write_report(sys.argv[1], records=[record], expected={}, cache_events=[], wall_s=0.0)
        except audit.ReportError as error:
            failures += 1
            print(error, file=sys.stderr)
    print(failures)
"""


def test_concurrent_writers_of_one_report_folder_take_turns(tmp_path):
    """Two processes writing one --report-dir at once: they take turns under an exclusive
    `flock` on the report folder itself (no lock file left; the lock dies with its process),
    every write succeeds and nothing is left behind. Bug fixed: many writes failed
    ("Directory not empty") and `.figures.old-<pid>` folders were left (engine/claim_audit/report/audit.py
    `_locked`)."""
    report_dir = tmp_path / "report"
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(WRITER), report_dir, tmp_path / f"ready-{n}"],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(2)
    ]
    try:
        outputs = [w.communicate(timeout=TIMEOUT_S) for w in writers]
    finally:
        for w in writers:
            if w.poll() is None:
                w.kill()
                w.communicate()
    assert [out.strip() for out, _ in outputs] == ["0", "0"], [err for _, err in outputs]
    assert sorted(p.name for p in report_dir.iterdir()) == [
        "audit.html",
        "audit.json",
        "audit.md",
        "figures",
    ]
    assert json.loads((report_dir / "audit.json").read_text())["claims"][0]["id"] == "d-1"


KILLED_WRITER = """
    import os, signal, sys
    from claim_audit.report import audit
    from claim_audit.engine.claim import ClaimRecord

    # Test-only hook: the writer dies just before it would swap the new report in.
    audit._move_in = lambda *args: os.kill(os.getpid(), signal.SIGKILL)
    record = ClaimRecord("d-1", "demo", "Demo", "a claim", "1.0", "1.0", "± 0.1", "holds", {})
    audit.write_report(sys.argv[1], records=[record], expected={}, cache_events=[], wall_s=0.0)
"""


def test_writer_killed_while_building_leaves_its_staging_in_the_report_folder_only(tmp_path):
    """A run killed (SIGKILL) while it builds the report: the previous report is untouched, and
    the staging folder (`.claims-report-*`), inside the report folder, is removed by the next
    writer holding the lock. Bug fixed: the staging folder stayed in the report folder's
    parent, the repository root, for good (engine/claim_audit/report/audit.py `write_report`)."""
    report_dir = tmp_path / "report"
    write(report_dir)
    before = snapshot(report_dir)
    killed = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(KILLED_WRITER), report_dir],
        cwd=REPO_ROOT,
        capture_output=True,
        timeout=TIMEOUT_S,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["report"]
    [stale] = [p for p in report_dir.iterdir() if p.name.startswith(".")]
    assert {k: v for k, v in snapshot(report_dir).items() if not k.startswith(".")} == before
    write(report_dir)
    assert not stale.exists()
    assert sorted(p.name for p in report_dir.iterdir()) == [
        "audit.html",
        "audit.json",
        "audit.md",
        "figures",
    ]


def test_rule_that_returns_no_judgement_is_named():
    """A claim's rule returning a bool: a TypeError naming the claim, the order and what the
    judge returned. Bug fixed: it was `AttributeError: 'bool' object has no attribute
    'published'` (engine/claim_audit/engine/claim.py `decide`)."""
    claims = Claims("demo")
    claims("t-bool-rule", "Demo", "a claim", published="holds")(lambda: True)
    with pytest.raises(TypeError, match=r"t-bool-rule: its body returned bool True in order 'faithful'; with published 'holds' it returns a Judgement"):  # fmt: skip
        judge_body(claims["t-bool-rule"], lambda: True, {})
