"""A stopped or wedged xdist worker never hangs the run (engine/claim_audit/report/watchdog.py): one stopped
during its start-up and collection, or mid-test, is ended within seconds, not after the whole
budget (default 1800 s) and its grace; one wedged in its start-up is ended past its limit.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from claim_audit.report import watchdog
from fault_tools import TIMEOUT_S, pytest_command, tiny_pytest_env, write_test_folder

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
PLUGINS = ("-p", "xdist.plugin", "-p", "timeout", "-p", "claim_audit.report.plugin")


def run(folder, stall: str, budget: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    result = subprocess.run(
        pytest_command(*PLUGINS, "-n", "2", "--timeout", budget, "--report-dir", "out"),
        cwd=folder,
        env=tiny_pytest_env(STALL=stall),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,  # the run must end by itself: the bugs waited forever
    )
    return result, time.monotonic() - started


def test_a_worker_stopped_at_start_up_is_ended(tmp_path, monkeypatch):
    """An xdist worker stopped (SIGSTOP) while it starts up, before it collected anything, with
    --timeout 3: the watchdog ends it once it has been seen stopped for `STOPPED_S`, naming its
    start-up; xdist replaces it and the run completes, every claim judged. Bug fixed: the
    watchdog watched a worker only once it had marked a test running, so the run waited
    forever, whatever --timeout said (engine/claim_audit/report/watchdog.py `Watchdog.starting`,
    engine/claim_audit/report/plugin.py `pytest_configure_node`)."""
    # As if this test ran on this run's worker gw1: the child's own controller must not take
    # itself for gw1 (it did, stopped itself, and the run hung; tests/fault_tools.py THIS_RUN).
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw1")
    folder = write_test_folder(tmp_path, MODULE)
    (folder / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    result, _ = run(folder, "start-up", "3")
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(
        r"worker 'gw1' has been stopped \(SIGSTOP\?\) for \d+ s while running its start-up and "
        r"collection: ended",
        result.stdout + result.stderr,
    ), result.stdout + result.stderr
    assert "replacing crashed worker gw1" in result.stdout + result.stderr
    assert len(json.loads((folder / "out" / "audit.json").read_text())["claims"]) == 2


def test_a_start_up_past_its_limit_is_ended(monkeypatch):
    """A worker wedged (not stopped) in its start-up is ended once it has run past its start-up
    limit (the test budget, at least `START_UP_FLOOR_S`) and the grace; one within it is left
    alone. Here the floor is lowered to one second so the test takes seconds."""
    monkeypatch.setattr(watchdog, "START_UP_FLOOR_S", 1.0)
    said: list[str] = []
    wedged = subprocess.Popen(["sleep", "600"])
    healthy = subprocess.Popen(["sleep", "600"])
    dog = watchdog.Watchdog(Path(tempfile.mkdtemp()), budget=0.5, say=said.append)
    try:
        dog.starting("gw0", wedged.pid)
        dog.start()
        assert wedged.wait(timeout=TIMEOUT_S) == -signal.SIGKILL
        dog.starting("gw1", healthy.pid)
        dog.started("gw1")  # collected in time: no longer a start-up
        time.sleep(3)  # past the limit (1 s) and its grace (1 s) it would have been ended
        assert healthy.poll() is None
    finally:
        dog.stop()
        healthy.kill()
        healthy.wait()
    assert len(said) == 1
    assert re.fullmatch(
        r"\[claims\] worker 'gw0' has run its start-up and collection for \d+ s, past its "
        r"start-up limit of 1 s \(the test budget, at least 1 s\), without answering: ended",
        said[0],
    ), said


def test_a_worker_stopped_mid_test_is_ended_without_waiting_for_the_budget(tmp_path):
    """A worker stopped (SIGSTOP) in a claim's test under the default budget (1800 s): ended
    once it has been seen stopped for `STOPPED_S` seconds, the claim an ERROR naming it, the
    report partial, exit 1. Bug fixed: it was ended only after the budget and its grace, half
    an hour (engine/claim_audit/report/watchdog.py `is_stopped`)."""
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
    # The bug ended it only after the budget (1800 s) and its grace; the fix after STOPPED_S.
    assert watchdog.STOPPED_S <= took < 1800
