"""A stopped xdist worker never hangs the run (lib/report/watchdog.py): one stopped during its
start-up and collection is ended after the budget, and one stopped mid-test is ended within
seconds, not after the whole budget (default 1800 s) and its grace.
"""

from __future__ import annotations

import json
import re
import subprocess
import textwrap
import time

import pytest
from fault_tools import pytest_command, tiny_pytest_env, write_test_folder

from uncertainty_claims.report import watchdog

pytestmark = pytest.mark.fault

# gw1 stops itself as its conftest is imported (start-up), or c-2's test stops its worker.
CONFTEST = """
    import os, signal
    if os.environ.get("STALL") == "start-up" and os.environ.get("PYTEST_XDIST_WORKER") == "gw1":
        os.kill(os.getpid(), signal.SIGSTOP)
"""
MODULE = """
    import os, signal
    import pytest

    def claim_marker(id):
        return pytest.mark.claim(id=id, document="demo", section="Demo", statement=f"claim {id}")

    @claim_marker("c-1")
    def test_one(claim):
        claim.close_to(1.0, "1.0", 0.1)

    @claim_marker("c-2")
    def test_two(claim):
        if os.environ.get("STALL") == "mid-test":
            os.kill(os.getpid(), signal.SIGSTOP)
        claim.close_to(1.0, "1.0", 0.1)
"""
PLUGINS = ("-p", "xdist.plugin", "-p", "timeout", "-p", "uncertainty_claims.report.plugin")


def run(folder, stall: str, budget: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    result = subprocess.run(
        pytest_command(*PLUGINS, "-n", "2", "--timeout", budget, "--report-dir", "out"),
        cwd=folder,
        env=tiny_pytest_env(STALL=stall),
        capture_output=True,
        text=True,
        timeout=60,  # the run must end by itself well before
    )
    return result, time.monotonic() - started


def test_a_worker_stopped_at_start_up_is_ended_after_the_budget(tmp_path):
    """An xdist worker stopped (SIGSTOP) while it starts up, before it collected anything, with
    --timeout 3: the watchdog ends it after the budget and its grace, naming its start-up;
    xdist replaces it and the run completes, every claim judged. Bug fixed: the watchdog
    watched a worker only once it had marked a test running, so the run waited forever,
    whatever --timeout said (lib/report/watchdog.py `Watchdog.starting`, lib/report/plugin.py
    `pytest_configure_node`)."""
    folder = write_test_folder(tmp_path, MODULE)
    (folder / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    result, took = run(folder, "start-up", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(
        r"worker 'gw1' has run its start-up and collection for \d+ s, past its budget of 3 s",
        result.stdout + result.stderr,
    ), result.stdout + result.stderr
    assert "replacing crashed worker gw1" in result.stdout + result.stderr
    assert len(json.loads((folder / "out" / "audit.json").read_text())["claims"]) == 2
    assert took < 40


def test_a_worker_stopped_mid_test_is_ended_without_waiting_for_the_budget(tmp_path):
    """A worker stopped (SIGSTOP) in a claim's test under the default budget (1800 s): ended
    once it has been seen stopped for `STOPPED_S` seconds, the claim an ERROR naming it, the
    report partial, exit 1. Bug fixed: it was ended only after the budget and its grace, half
    an hour (lib/report/watchdog.py `is_stopped`)."""
    folder = write_test_folder(tmp_path, MODULE)
    result, took = run(folder, "mid-test", "1800")
    assert result.returncode == 1, result.stdout + result.stderr
    assert re.search(
        r"ERROR in c-2: worker 'gw\d+' has been stopped \(SIGSTOP\?\) for \d+ s while running "
        r"test_module.py::test_two: ended",
        result.stdout,
    ), result.stdout
    written = json.loads((folder / "out" / "partial" / "audit.json").read_text())
    assert written["partial"] == ["1 claims in error: c-2"]
    assert watchdog.STOPPED_S <= took < watchdog.STOPPED_S + 30
