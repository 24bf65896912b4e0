"""Faults of a whole audit run through the claims-audit plugin: a claim's test
that fails after its verdict, failures after every claim
ran, bad claim markers and options. Each runs a tiny project in a child pytest: a claim is
never reported as holding when its test failed, nothing but the documents' own configuration
becomes the complete report, and a failure after the claims ran keeps the table and the
previous report, with one clear line instead of a traceback.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from claim_audit.engine.claim import ClaimSpec
from fault_tools import (
    REPO_ROOT,
    TIMEOUT_S,
    permission_honouring_prefix,
    run_audit_pytest,
    run_pytest,
    tiny_pytest_env,
    write_test_folder,
)
from test_plugin_completeness import CONFTEST, MODULE_A, MODULE_B
from test_plugin_outside_project import example_files

pytestmark = pytest.mark.fault

USAGE_ERROR = pytest.ExitCode.USAGE_ERROR  # 4
PLUGINS = ("-p", "xdist.plugin", "-p", "claim_audit.report.plugin")


def audit_run(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`run_audit_pytest` with environment variables `env`."""
    return run_pytest(folder, *PLUGINS, *args, env=tiny_pytest_env(**env))


def rows(stdout: str) -> dict[str, str]:
    """Claim id -> verdict label, from the claims table of a child run."""
    table = stdout.split("CLAIMS AUDIT")[1].split("-" * 70)[0]
    return {
        line.split()[0]: line.split()[-1]
        for line in table.splitlines()[3:]
        if line[:1] not in ("", " ")
    }


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


HOLDS_MODULE = """
    from claim_audit import Claims

    CLAIMS = Claims("demo")

    @CLAIMS("c-1", "Demo", "claim c-1", published="1.0")
    def test_one():
        return 1.0

    @CLAIMS("c-2", "Demo", "claim c-2", published="2.0")
    def test_two():
        return 2.0
"""


@pytest.fixture
def audited(tmp_path: Path) -> tuple[Path, dict[str, bytes]]:
    """A folder of two claims whose complete audit is in out/; that audit's files."""
    folder = write_test_folder(tmp_path / "project", HOLDS_MODULE)
    complete = run_audit_pytest(folder, "--report-dir", "out")
    assert complete.returncode == 0, complete.stdout + complete.stderr
    return folder, snapshot(folder / "out")


AFTER_THE_VERDICT = """
    import pytest
    from claim_audit import Claims

    CLAIMS = Claims("demo")

    def claim_marker(id, finding=None):
        return CLAIMS(id, "Demo", f"claim {id}", published="1.0", finding=finding)

    @pytest.fixture
    def breaks_at_teardown():
        yield
        raise RuntimeError("the experiment's clean-up failed")

    @claim_marker("c-ok")
    def test_ok():
        return 1.0

    @claim_marker("f-ok", finding="measured 5")
    def test_finding():
        return 5.0

    @claim_marker("c-assert")
    def test_own_assertion_fails():
        assert False, "the test's own check"

    @claim_marker("c-teardown")
    def test_teardown_fails(breaks_at_teardown):
        return 1.0

    @claim_marker("c-skipped")
    def test_skips_itself():
        pytest.skip("the data is not here")
"""


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_a_claim_whose_test_fails_after_its_verdict_is_an_error(tmp_path, workers):
    """A claim's test that fails other than by its verdict (its own assertion, its fixture's
    teardown after the claim was judged, a skip): the claim is an ERROR naming what
    happened, the report partial, exit 1; a verdict that ends its test as it should (a
    finding, xfailed) is kept. Bug fixed: the record written at the judgement stood, so the
    complete report said *holds*, 0 errors, while the run exited 1; a skip inside the body was
    named by its raw record (engine/claim_audit/report/plugin.py
    `pytest_runtest_makereport`)."""
    folder = write_test_folder(tmp_path, AFTER_THE_VERDICT)
    result = audit_run(folder, "--report-dir", "out", *workers)
    assert result.returncode == 1, result.stdout + result.stderr
    assert rows(result.stdout) == {
        "c-ok": "holds",
        "f-ok": "refuted*",
        "c-assert": "ERROR",
        "c-teardown": "ERROR",
        "c-skipped": "ERROR",
    }
    assert "ERROR in c-assert: AssertionError: the test's own check" in result.stdout
    assert (
        "ERROR in c-teardown: its teardown raised RuntimeError: the experiment's clean-up failed"
        in result.stdout
    )
    # A skip in the body is no verdict; said as pytest says it, not as its raw record.
    assert "ERROR in c-skipped: Skipped: the data is not here\n" in result.stdout
    assert not (folder / "out" / "audit.json").exists()
    written = json.loads((folder / "out" / "partial" / "audit.json").read_text())
    assert written["partial"] == ["3 claims in error: c-assert, c-skipped, c-teardown"]


def test_a_report_that_cannot_load_keeps_the_table_and_the_report(audited):
    """MPLBACKEND naming no backend, so the report's code cannot be imported after every claim
    ran: the claims table, one line "report not written: cannot load the report's code",
    exit 1, no traceback, the previous report kept. Bug fixed: a bare traceback, exit 1, no
    table (engine/claim_audit/report/plugin.py `pytest_sessionfinish` imported matplotlib outside its error
    handling)."""
    folder, kept = audited
    result = audit_run(folder, "--report-dir", "out", MPLBACKEND="bogus")
    assert result.returncode == 1, result.stdout + result.stderr
    assert rows(result.stdout) == {"c-1": "holds", "c-2": "holds"}
    assert (
        "report not written: cannot load the report's code or documents (ValueError: Key backend: 'bogus'"
        in result.stdout
    )
    assert "Traceback" not in result.stdout + result.stderr
    assert snapshot(folder / "out") == kept


def test_a_report_dir_with_a_name_too_long_fails_clearly(audited):
    """--report-dir with a component longer than NAME_MAX (255 bytes): the table, "report not
    written: cannot create the report folder", exit 1, no traceback. Bug fixed: the folder's
    `exists()` raised outside the report's error handling (engine/claim_audit/report/audit.py
    `write_report`)."""
    folder, _ = audited
    result = run_audit_pytest(folder, "--report-dir", "x" * 300 + "/out")
    assert result.returncode == 1, result.stdout + result.stderr
    assert rows(result.stdout) == {"c-1": "holds", "c-2": "holds"}
    assert "report not written: cannot create the report folder" in result.stdout
    assert "File name too long" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_a_figure_cache_that_cannot_be_written_is_drawn_without(tmp_path):
    """A cache folder that cannot be written (here below a regular file, which binds root
    too): the results cache runs uncached, as documented, and so does the figure cache: the
    complete report is written with its figures, and a line says the figure cache was not
    used. Bug fixed: the figure cache was mandatory, so the report was never written
    (engine/claim_audit/render/drawing.py `writable`, `draw_all`)."""
    folder = tmp_path / "toy"
    folder.mkdir()
    for name, text in example_files().items():  # docs/ADDING_A_DOCUMENT.md's toy: one figure
        (folder / name).write_text(text)
    (tmp_path / "blocker").write_text("a regular file")
    cache_dir = tmp_path / "blocker" / "cache"
    result = audit_run(folder, "--report-dir", "out", CLAIMS_CACHE_DIR=str(cache_dir))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"figure cache {cache_dir / 'figures'} is not writable" in result.stderr
    assert sorted(p.name for p in (folder / "out" / "figures").iterdir()) == ["fit.png", "fit.svg"]
    assert "partial" not in json.loads((folder / "out" / "audit.json").read_text())


def test_a_read_only_checkout_keeps_its_report(tmp_path):
    """The checkout read-only, the report elsewhere, pytest's own cache provider on, under this
    project's `filterwarnings` (pyproject.toml): pytest warns that it cannot write
    .pytest_cache; the run passes with its table and report. Bug fixed: `filterwarnings =
    error` made that warning an exception at the session's end: a traceback, no table, no
    report (pyproject.toml: PytestCacheWarning shown, not an error)."""
    ini = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    folder = write_test_folder(tmp_path / "checkout", HOLDS_MODULE)
    lines = "".join(f"    {line}\n" for line in ini["filterwarnings"])
    (folder / "pytest.ini").write_text(f"[pytest]\nxfail_strict = true\nfilterwarnings =\n{lines}")
    prefix = permission_honouring_prefix(tmp_path / "probe")
    folder.chmod(0o555)
    try:
        result = subprocess.run(
            [
                *prefix,
                sys.executable,
                "-m",
                "pytest",
                *PLUGINS,
                "--report-dir",
                str(tmp_path / "out"),
            ],
            cwd=folder,
            env=tiny_pytest_env(),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    finally:
        folder.chmod(0o755)
    assert result.returncode == 0, result.stdout + result.stderr
    assert rows(result.stdout) == {"c-1": "holds", "c-2": "holds"}
    assert "PytestCacheWarning: could not create cache path" in result.stdout
    assert (tmp_path / "out" / "audit.json").is_file()
    assert not (folder / ".pytest_cache").exists()


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"id": 5}, "claim id 5 is not an identifier"),
        ({"id": " "}, "claim id ' ' is not an identifier"),
        ({"document": None}, "document must be a non-empty string"),
        ({"finding": 2.5}, "finding must be a non-empty string or None"),
        ({"gates": "no"}, "gates must be True or False; got 'no'"),
        ({"origin": "blog"}, "claim c-1: origin must be one of ('document', 'suite'); got 'blog'"),
        ({"id": "c-1\x1b[2J"}, "claim id 'c-1\\x1b[2J' is not an identifier"),
    ],
    ids=[
        "id-int",
        "id-blank",
        "document-none",
        "finding-number",
        "gates-text",
        "origin-unknown",
        "id-escape",
    ],
)
def test_a_claim_with_a_wrong_field_is_refused_where_it_is_defined(fields, says):
    """A claim whose field has the wrong type or is blank (`id=5`, `document=None`,
    `finding=2.5`, ...): a ValueError naming the field when the claim is defined, so its
    module cannot be collected. Bug fixed: only the fields' presence was checked, so `id=5`
    ran every claim and ended in a TypeError from the terminal summary, with no report
    (engine/claim_audit/engine/claim.py `ClaimSpec`)."""
    given = {"id": "c-1", "document": "demo", "section": "S", "statement": "s"} | fields
    with pytest.raises(ValueError, match=re.escape(says)):
        ClaimSpec(**given, published="1.0")


@pytest.mark.parametrize(("workers", "status"), [((), USAGE_ERROR), (("-n", "2"), 2)])
def test_a_bare_claim_marker_is_a_usage_error(tmp_path, workers, status):
    """A test marked `@pytest.mark.claim(id=...)` by hand: a usage error at collection naming
    the test and `Claims`, nothing run (a claim is defined with `Claims` alone): exit 4, or
    under xdist the run interrupted (exit 2) with that line. Bug fixed: under xdist, an
    INTERNALERROR (xdist's `assert not crashitem`) and "no tests ran"
    (engine/claim_audit/report/plugin.py `_refuse`)."""
    module = """
        import pytest

        @pytest.mark.claim(id="c-1", document="demo", section="S", statement="s")
        def test_claim():
            pass
    """
    folder = write_test_folder(tmp_path, module)
    result = run_audit_pytest(folder, "--report-dir", "out", *workers)
    output = result.stdout + result.stderr
    assert result.returncode == status, output
    says = "test_module.py::test_claim: a claim is defined on its test with claim_audit.Claims"
    assert len([line for line in output.splitlines() if says in line]) == 1, output
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    assert not (folder / "out").exists()


def test_a_junitxml_path_that_cannot_be_written_is_refused_at_start(tmp_path):
    """`--junitxml` to a path that cannot be written: a usage error naming it before any test
    runs, no traceback. Bug fixed: pytest's junitxml raised its OSError after every test had
    run, and the claims table and the report were lost (engine/claim_audit/report/plugin.py
    `_check_junit_path`)."""
    folder = write_test_folder(tmp_path, HOLDS_MODULE)
    (tmp_path / "blocker").write_text("a file\n")
    junit = tmp_path / "blocker" / "junit.xml"
    result = run_audit_pytest(folder, "--report-dir", "out", f"--junitxml={junit}")
    assert result.returncode == USAGE_ERROR, result.stdout + result.stderr
    assert f"--junitxml '{junit}': {junit} lies under the file {junit.parent}" in result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    assert "test_one" not in result.stdout  # nothing ran


def test_a_configuration_from_outside_the_rootdir_is_a_partial_run(audited):
    """`-c /dev/null`: pytest's rootdir is no longer the folder whose configuration it read,
    so the project's git and lock provenance cannot be told: the run is partial and fails,
    and the complete report stays. Bug fixed: the complete report was replaced, with no git
    or lock provenance (engine/claim_audit/report/plugin.py `AuditCollector.pytest_sessionfinish`)."""
    folder, before = audited
    result = run_audit_pytest(folder, "-c", "/dev/null", "--report-dir=out")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "holds not the configuration it read (/dev/null; -c, --rootdir?)" in result.stdout
    assert {k: v for k, v in snapshot(folder / "out").items() if k in before} == before
    partial = json.loads((folder / "out" / "partial" / "audit.json").read_text())
    assert any("-c, --rootdir?" in reason for reason in partial["partial"])


def test_a_broken_claims_hook_fails_the_run(tmp_path):
    """A `pytest_claims_audit_claims` hook that raises: the run fails (exit 1) with a line
    naming the hook and the error; the report is partial. Bug fixed: the report went to
    partial/ but the run exited 0 (engine/claim_audit/report/plugin.py `pytest_sessionfinish`)."""
    folder = write_test_folder(tmp_path, HOLDS_MODULE)
    (folder / "conftest.py").write_text(
        "def pytest_claims_audit_claims():\n    raise RuntimeError('no registry')\n"
    )
    result = run_audit_pytest(folder, "--report-dir", "out")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the hook pytest_claims_audit_claims failed (RuntimeError: no registry)" in result.stdout
    assert not (folder / "out" / "audit.json").exists()
    assert (folder / "out" / "partial" / "audit.json").is_file()


def test_last_failed_is_named_as_the_reason_of_a_partial_run(tmp_path):
    """`--lf` after a failed run (pytest's cache provider on): the partial report names --lf
    as the reason and as why a claim was not collected, and the run passes (the user chose
    the subset). Bug fixed: the claim left out was blamed on "--ignore, a path or
    python_functions", and the run failed as one that lost claims; without a
    `pytest_claims_audit_claims` hook, --lf replaced the complete report with the claims it
    reran (engine/claim_audit/report/plugin.py `_rerun_of_failures`). --lf collects only the tests that
    failed, so c-1, which passed beside c-2, is not collected either."""
    folder = write_test_folder(tmp_path, MODULE_A, "test_a.py")
    (folder / "test_b.py").write_text(textwrap.dedent(MODULE_B))
    (folder / "conftest.py").write_text(textwrap.dedent(CONFTEST))

    def run(*args: str, **env: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "pytest", *PLUGINS, "--report-dir", "out", *args]
        return subprocess.run(
            command,
            cwd=folder,
            env=tiny_pytest_env(**env),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )

    assert run().returncode == 0
    kept = snapshot(folder / "out")
    assert run(C2_FAILS="1").returncode == 1
    result = run("--lf")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "--lf: only the tests that failed last time ran" in result.stdout
    assert "--ignore" not in result.stdout
    written = json.loads((folder / "out" / "partial" / "audit.json").read_text())
    assert "2 claims not collected (--lf): c-1, c-3" in written["partial"]
    assert {
        k: v for k, v in snapshot(folder / "out").items() if not k.startswith("partial/")
    } == kept


def test_a_partial_folder_that_is_a_symbolic_link_is_not_followed(audited, tmp_path):
    """report/partial is a symbolic link to another folder: a partial run refuses to write
    through it ("report not written: ... is a symbolic link"), exit 1; the folder it points
    to stays empty and the complete report as it was. Bug fixed: the partial report was
    written wherever the link pointed (engine/claim_audit/report/plugin.py `pytest_sessionfinish`)."""
    folder, kept = audited
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (folder / "out" / "partial").symlink_to(elsewhere)
    result = run_audit_pytest(folder, "--report-dir", "out", "-k", "one")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"report not written: {folder / 'out' / 'partial'} is a symbolic link" in result.stdout
    assert list(elsewhere.iterdir()) == []
    assert snapshot(folder / "out") == kept


def test_a_report_dir_under_the_home_folder_is_expanded(tmp_path):
    """`--report-dir=~/reports` (the shell leaves a `~` after `=` as it is): the report goes
    to reports/ in the home folder. Bug fixed: a folder named `~` was made in the project
    (engine/claim_audit/report/plugin.py `_report_dir`)."""
    folder = write_test_folder(tmp_path / "project", HOLDS_MODULE)
    home = tmp_path / "home"
    home.mkdir()
    result = audit_run(folder, "--report-dir=~/reports", HOME=str(home))
    assert result.returncode == 0, result.stdout + result.stderr
    assert (home / "reports" / "audit.json").is_file()
    assert not (folder / "~").exists()


def test_orders_has_an_upper_bound(tmp_path):
    """`--orders 1001`: a usage error naming the range, exit 4; 1000 is taken. Bug fixed: any
    number was taken, while --seeds stops at 1000 (engine/claim_audit/report/plugin.py `MAX_ORDERS`)."""
    folder = write_test_folder(tmp_path, HOLDS_MODULE)
    too_many = run_audit_pytest(folder, "--orders", "1001", "--no-report")
    assert too_many.returncode == USAGE_ERROR, too_many.stdout + too_many.stderr
    assert (
        "--orders: expected a whole number of orders from 3 to 1000; got '1001'" in too_many.stderr
    )
    assert run_audit_pytest(folder, "--orders", "1000", "--no-report").returncode == 0
