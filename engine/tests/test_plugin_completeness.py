"""A complete audit has a verdict for every claim the documents make, and only a complete
audit replaces report/: a run that lost claims (whatever option removed them) or ended in
errors writes report/partial/, and an audit-style run that lost claims fails. The report
folder is checked before anything runs.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest
from fault_tools import (
    TIMEOUT_S,
    pytest_command,
    run_audit_pytest,
    tiny_pytest_env,
    write_test_folder,
)

pytestmark = pytest.mark.fault

USAGE_ERROR = pytest.ExitCode.USAGE_ERROR  # 4

# The documents' claims, written where their tests live: c-1 and c-2 in test_a.py, c-3 in
# test_b.py; the conftest collects every module's registry, as claims/conftest.py does, and
# adds c-4, a claim without a test, when SPEC_WITHOUT_TEST.
CONFTEST = """
    import importlib
    import os
    from pathlib import Path

    from claim_audit import Claims

    def pytest_claims_audit_claims():
        modules = sorted(Path(__file__).parent.glob("test_*.py"))
        registries = [importlib.import_module(path.stem).CLAIMS for path in modules]
        if os.environ.get("SPEC_WITHOUT_TEST"):
            without_test = Claims("demo")
            without_test("c-4", "Demo", "claim c-4", published="1.0")(lambda: 1.0)
            registries.append(without_test)
        return registries
"""
MODULE_A = """
    import os
    from claim_audit import Claims

    CLAIMS = Claims("demo")

    @CLAIMS("c-1", "Demo", "claim c-1", published="1.0")
    def test_one():
        return 1.0

    @CLAIMS("c-2", "Demo", "claim c-2", published="1.0")
    def test_two():
        if os.environ.get("C2_FAILS"):
            raise MemoryError("the experiment ran out of memory")
        return 1.0
"""
MODULE_B = """
    from claim_audit import Claims

    CLAIMS = Claims("demo")

    @CLAIMS("c-3", "Demo", "claim c-3", published="1.0")
    def test_three():
        return 1.0
"""


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def audited(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A folder of three claims whose complete audit is in out/; that audit's files."""
    folder = write_test_folder(tmp_path, MODULE_A, "test_a.py")
    (folder / "test_b.py").write_text(textwrap.dedent(MODULE_B))
    (folder / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    complete = run_audit_pytest(folder, "--report-dir", "out")
    assert complete.returncode == 0, complete.stdout + complete.stderr
    assert len(json.loads((folder / "out" / "audit.json").read_text())["claims"]) == 3
    return folder, snapshot(folder / "out")


def partial_audit(folder: Path) -> dict:
    return json.loads((folder / "out" / "partial" / "audit.json").read_text())


@pytest.mark.parametrize(
    "args",
    [
        ["--ignore=test_b.py"],
        ["--ignore-glob=*_b.py"],
        ["-o", "python_functions=test_o* test_tw*"],
        ["-m", "claim", "--ignore=test_b.py"],
        ["-n", "2", "--ignore=test_b.py"],
    ],
    ids=["ignore", "ignore-glob", "python-functions", "audit-marks", "xdist"],
)
def test_run_that_lost_claims_fails_and_keeps_the_complete_report(audited, args):
    """A run that left claims out without `-k`, `-m` or a path asking for it (`--ignore`,
    `--ignore-glob`, `-o python_functions=...`, with and without xdist): completeness is
    judged from the documents' specs (hook `pytest_claims_audit_claims`), so the report goes
    to the partial folder with each claim left out named as missing, the complete audit is
    kept, and the run fails. Bug fixed: completeness was judged from what was collected, so
    such a run replaced report/audit.json with 51 of 73 claims, exit 0 (engine/claim_audit/report/plugin.py
    `_missing`, `_lost_claims`)."""
    folder, complete = audited
    result = run_audit_pytest(folder, "--report-dir", "out", *args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the audit lost 1 of the documents' claims" in result.stdout
    assert snapshot(folder / "out") == complete
    written = partial_audit(folder)
    assert written["missing"] == {"c-3": "not collected"}
    assert any(r.startswith("1 claims not collected") and "c-3" in r for r in written["partial"])
    assert "c-3 (not collected)" in (folder / "out" / "partial" / "audit.md").read_text()


BROKEN_MODULE = """
    import no_such_module  # a test module that fails to import
    from claim_audit import Claims

    CLAIMS = Claims("demo")

    @CLAIMS("c-5", "Demo", "claim c-5", published="1.0")
    def test_five():
        return 1.0
"""


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--continue-on-collection-errors"], "1 test files could not be collected"),
        (["-n", "2", "--continue-on-collection-errors"], "1 test files could not be collected"),
        (["--ignore=test_b.py"], "--ignore left tests out, and no hook"),
        (["-o", "python_functions=test_o*"], "-o python_functions=test_o* left tests out"),
    ],
    ids=["collection-error", "collection-error-xdist", "ignore", "python-functions"],
)
def test_a_project_without_a_claims_hook_cannot_lose_claims_quietly(tmp_path, args, says):
    """A project that does not list its claims (no hook pytest_claims_audit_claims, as the
    starter of `python -m claim_audit new`), run with a test module that cannot be imported
    under --continue-on-collection-errors, or with --ignore or python_functions leaving tests
    out: the report goes to the partial folder saying why the run cannot tell whether every
    claim ran, the complete audit is kept, the run fails. Bug fixed: completeness was judged
    from what was collected, so the report was replaced as complete with those claims gone,
    exit 1 (and exit 0 under --ignore) (engine/claim_audit/report/plugin.py
    `pytest_collectreport`, `_options_leaving_tests_out`)."""
    folder = write_test_folder(tmp_path, MODULE_A, "test_a.py")
    (folder / "test_b.py").write_text(textwrap.dedent(MODULE_B))
    complete = run_audit_pytest(folder, "--report-dir", "out")
    assert complete.returncode == 0, complete.stdout + complete.stderr
    before = snapshot(folder / "out")
    if "--continue-on-collection-errors" in args:
        (folder / "test_broken.py").write_text(textwrap.dedent(BROKEN_MODULE))
    result = run_audit_pytest(folder, "--report-dir", "out", *args)
    assert result.returncode == 1, result.stdout + result.stderr
    assert snapshot(folder / "out") == before
    assert any(says in reason for reason in partial_audit(folder)["partial"]), result.stdout


def test_the_audits_marks_are_the_projects_setting(audited):
    """A project whose audit selects its claims with a mark of its own besides `claim`
    (`claims_audit_marks = claim check` in its settings): `-m "claim or check"` is then the
    audit's own selection, so a run under it that lost a claim fails; without the setting the
    same `-m` is a selection the user asked for, a partial report and exit 0."""
    folder, complete = audited
    lost = ("--report-dir", "out", "-m", "claim or check", "--ignore=test_b.py")
    asked = run_audit_pytest(folder, *lost)
    assert asked.returncode == 0, asked.stdout + asked.stderr
    assert "the audit lost" not in asked.stdout
    ini = folder / "pytest.ini"
    ini.write_text(ini.read_text() + "claims_audit_marks = claim check\n")
    result = run_audit_pytest(folder, *lost)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the audit lost 1 of the documents' claims" in result.stdout
    assert snapshot(folder / "out") == complete


def test_spec_without_a_test_is_missing_not_silent(audited, monkeypatch):
    """A claim spec with no test: named as not collected, the report is partial and the run
    fails. Bug fixed: it vanished from the audit silently (engine/claim_audit/report/plugin.py `_missing`)."""
    folder, complete = audited
    monkeypatch.setenv("SPEC_WITHOUT_TEST", "1")
    result = run_audit_pytest(folder, "--report-dir", "out")
    assert result.returncode == 1, result.stdout
    assert partial_audit(folder)["missing"] == {"c-4": "not collected"}
    assert snapshot(folder / "out") == complete


def test_a_selection_the_user_asked_for_stays_a_partial_report(audited):
    """`-k` is the user's choice: a partial report naming what was deselected, exit 0 (the
    counterpart of the lost-claims fix in engine/claim_audit/report/plugin.py `_lost_claims`)."""
    folder, complete = audited
    result = run_audit_pytest(folder, "--report-dir", "out", "-k", "one")
    assert result.returncode == 0, result.stdout
    assert partial_audit(folder)["missing"] == {"c-2": "deselected", "c-3": "deselected"}
    assert snapshot(folder / "out") == complete


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_run_with_errors_keeps_the_complete_report(audited, monkeypatch, workers):
    """A run whose claims ended in errors (out of memory under `ulimit -v`, a crashed worker):
    its report goes to the partial folder and the complete audit is kept byte for byte,
    unless --report-errors-as-complete asks for it to be the report. Bug fixed: it replaced
    the complete report (engine/claim_audit/report/plugin.py `_partial_reasons`)."""
    folder, complete = audited
    monkeypatch.setenv("C2_FAILS", "1")
    result = run_audit_pytest(folder, "--report-dir", "out", *workers)
    assert result.returncode == 1, result.stdout
    assert snapshot(folder / "out") == complete
    assert partial_audit(folder)["partial"] == ["1 claims in error: c-2"]
    assert "MemoryError" in result.stdout
    replaced = run_audit_pytest(folder, "--report-dir", "out", "--report-errors-as-complete")
    assert replaced.returncode == 1
    written = json.loads((folder / "out" / "audit.json").read_text())
    assert "partial" not in written and "1 errors" in written["summary"]


@pytest.mark.parametrize(
    ("report_dir", "says"),
    [
        ("", "--report-dir is empty"),
        ("  ", "--report-dir is empty"),
        (".", "which is or holds"),
        ("..", "which is or holds"),
    ],
    ids=["empty", "whitespace", "rootdir", "above-rootdir"],
)
def test_report_dir_that_is_empty_or_holds_the_project_is_a_usage_error(tmp_path, report_dir, says):
    """`--report-dir ''` (an unset shell variable), whitespace, the rootdir or a folder above
    it: a usage error (exit 4) before anything runs. Bug fixed: it was read as `.` and the
    report landed among the project's files (engine/claim_audit/report/plugin.py `_report_dir`)."""
    folder = write_test_folder(tmp_path / "project", MODULE_B)
    (folder / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    result = run_audit_pytest(folder, "--report-dir", report_dir)
    assert result.returncode == USAGE_ERROR, result.stdout + result.stderr
    assert says in result.stderr
    assert "passed" not in result.stdout
    assert not (folder / "audit.json").exists() and not (tmp_path / "audit.json").exists()


def test_default_report_folder_is_in_the_rootdir_wherever_pytest_starts(tmp_path):
    """`cd claims && pytest .` (the testpath): the report goes to report/ in the rootdir. Bug
    fixed: it wrote claims/report/, and every later audit recorded the tree as dirty
    (engine/claim_audit/report/plugin.py `_report_dir`)."""
    folder = write_test_folder(tmp_path, "")
    with (folder / "pytest.ini").open("a") as ini:
        ini.write("testpaths = tests\n")
    tests = write_test_folder(folder / "tests", MODULE_B)
    (tests / "pytest.ini").unlink()  # the rootdir is `folder`, the one with pytest.ini
    (tests / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    result = run_audit_pytest(tests, ".")
    assert result.returncode == 0, result.stdout + result.stderr
    assert (folder / "report" / "audit.json").is_file()
    assert not (tests / "report").exists()


FINDING_MODULE = """
    from claim_audit import Claims

    CLAIMS = Claims("demo")

    @CLAIMS("f-1", "Demo", "s", published="2.0", finding="2.5")
    def test_finding():
        return 2.5
"""


def test_runxfail_says_why_the_known_findings_fail_the_run(tmp_path):
    """`--runxfail`: the known findings fail as tests (exit 1) while the report counts them as
    findings, and the summary names them as the reason."""
    folder = write_test_folder(tmp_path, FINDING_MODULE)
    result = run_audit_pytest(folder, "--no-report", "--runxfail")
    assert result.returncode == 1
    assert "--runxfail: the known findings f-1 count as failed tests" in result.stdout


STALL_MODULE = """
    import os, time
    from claim_audit import Claims

    CLAIMS = Claims("demo")

    @CLAIMS("c-1", "Demo", "claim c-1", published="1.0")
    def test_one():
        return 1.0

    @CLAIMS("c-wedged", "Demo", "claim c-wedged", published="1.0")
    def test_wedged():
        if os.environ.get("STALL") == "sleep":  # a test far past its budget
            time.sleep(120)
        return 1.0
"""


@pytest.mark.parametrize(
    "workers", [["-n", "2"], []], ids=["past-budget-xdist", "past-budget-one-process"]
)
def test_a_test_past_its_budget_ends_the_run_naming_the_test(tmp_path, workers):
    """A test far past its budget: pytest-timeout fails it (`timeout`, pyproject.toml; here
    --timeout 2): the claim is an ERROR naming the timeout, the run ends (exit 1) and the
    complete report is kept. Bug fixed: the run waited forever, with no report and no message."""
    folder = write_test_folder(tmp_path, STALL_MODULE)
    timeout = ("-p", "timeout", "--timeout", "2")
    complete = run_audit_pytest(folder, *timeout, "--report-dir", "out", *workers)
    assert complete.returncode == 0, complete.stdout + complete.stderr
    kept = snapshot(folder / "out")
    plugins = ("-p", "xdist.plugin", "-p", "claim_audit.report.plugin")
    result = subprocess.run(
        pytest_command(*plugins, *timeout, "--report-dir", "out", *workers),
        cwd=folder,
        env=tiny_pytest_env(STALL="sleep"),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,  # the bug waited forever
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "ERROR in c-wedged: Failed: Timeout (>2.0s) from pytest-timeout" in result.stdout
    assert snapshot(folder / "out") == kept
    assert partial_audit(folder)["partial"] == ["1 claims in error: c-wedged"]
