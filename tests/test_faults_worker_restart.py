"""A test whose worker is ended past its budget is an ERROR once, under the suite's own
`--dist loadfile` (issue 51, D5): xdist hands a crashed worker's file out again, crashed test
included, so a test blocked where pytest-timeout cannot reach it (here: SIGALRM ignored, the
thread asleep in C) was run and killed up to xdist's restart limit (9 times under -n 2) and
the tests after it in its file never ran.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from fault_tools import pytest_command, tiny_pytest_env, write_test_folder

pytestmark = pytest.mark.fault

MODULE = """
    import signal, time
    import pytest

    def claim_marker(id):
        return pytest.mark.claim(id=id, document="demo", section="Demo", statement=f"claim {id}")

    @claim_marker("c-1")
    def test_one(claim):
        claim.close_to(1.0, "1.0", 0.1)

    @claim_marker("c-2")
    def test_blocks(claim):
        signal.signal(signal.SIGALRM, signal.SIG_IGN)  # pytest-timeout's signal cannot end it
        time.sleep(60)  # blocked in C, far past the budget

    @claim_marker("c-3")
    def test_three(claim):
        claim.close_to(1.0, "1.0", 0.1)

    @claim_marker("c-4")
    def test_four(claim):
        claim.close_to(1.0, "1.0", 0.1)
"""
OTHER = """
    import pytest

    @pytest.mark.claim(id="d-1", document="demo", section="Other", statement="claim d-1")
    def test_other(claim):
        claim.close_to(1.0, "1.0", 0.1)
"""
PLUGINS = ("-p", "xdist.plugin", "-p", "timeout", "-p", "claim_audit.report.plugin")


def test_a_test_past_its_budget_is_an_error_once_and_its_file_goes_on(tmp_path):
    """Under -n 2 --dist loadfile --timeout 1, the blocked test's worker is ended once: its
    claim is an ERROR naming its budget, the other claims of its file (c-3, c-4, after it) are
    judged, the run ends (exit 1) and writes its partial report. Bug fixed: xdist ran the
    blocked test again on each replacement worker until "maximum crashed workers reached",
    and c-3 and c-4 never ran (engine/claim_audit/report/plugin.py `pytest_handlecrashitem`)."""
    folder = write_test_folder(tmp_path, MODULE)
    (folder / "test_other.py").write_text(OTHER.replace("\n    ", "\n"))
    result = subprocess.run(
        pytest_command(
            *PLUGINS, "-n", "2", "--dist", "loadfile", "--timeout", "1", "--report-dir", "out"
        ),
        cwd=folder,
        env=tiny_pytest_env(),
        capture_output=True,
        text=True,
        timeout=150,  # the run must end by itself; the bug took 9 kills, about a minute
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert (
        len(re.findall(r"\[claims\] worker 'gw\d+' has run test_module.py::test_blocks", output))
        == 1
    )
    assert output.count("FAILED test_module.py::test_blocks") == 1, output
    assert "maximum crashed workers reached" not in output, output
    assert re.search(
        r"ERROR in c-2: worker 'gw\d+' has run test_module.py::test_blocks for \d+ s, past its "
        r"budget of 1 s",
        result.stdout,
    ), output
    # The crash's failure names the budget too.
    assert re.search(r"FAILED test_module.py::test_blocks - worker 'gw\d+' has run", output), output
    written = json.loads((folder / "out" / "partial" / "audit.json").read_text())
    verdicts = {claim["id"]: claim["verdict"] for claim in written["claims"]}
    assert verdicts == {
        "c-1": "holds",
        "c-2": "error",
        "c-3": "holds",
        "c-4": "holds",
        "d-1": "holds",
    }
    assert written["partial"] == ["1 claims in error: c-2"]
