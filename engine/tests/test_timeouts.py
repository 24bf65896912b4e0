"""A test past its budget is an ERROR for its claim, once; the rest of its file runs and the run
ends with its table and report. pytest-timeout ends it: its `signal` method
inside the test (engine/claim_audit/report/timeouts.py), its `thread` method by ending the
worker of a test blocked where no signal reaches (engine/claim_audit/report/plugin.py
`pytest_handlecrashitem`).
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
from fault_tools import pytest_command, tiny_pytest_env, write_test_folder
from filelock import FileLock

pytestmark = pytest.mark.fault

PLUGINS = ("-p", "xdist.plugin", "-p", "timeout", "-p", "claim_audit.report.plugin")
XDIST = ("-n", "2", "--dist", "loadfile", "--timeout", "1", "--report-dir=out")

# c-2's experiment fails in its setup; c-3 runs past its budget; c-5 reads c-2's failed experiment.
MODULE = """
    import time
    import pytest
    from claim_audit import Claims, satisfied

    claims = Claims("demo")

    @pytest.fixture(scope="module")
    def experiment():
        raise RuntimeError("the experiment failed")

    @claims("c-1", "Demo", "claim c-1", published="ok")
    def test_one():
        return satisfied(True, measured="ok")

    @claims("c-2", "Demo", "claim c-2", published="ok")
    def test_two(experiment):
        return satisfied(True, measured="ok")

    @claims("c-3", "Demo", "claim c-3", published="ok")
    def test_blocks():
        time.sleep(60)  # far past the budget
        return satisfied(True, measured="ok")

    @claims("c-4", "Demo", "claim c-4", published="ok")
    def test_four():
        return satisfied(True, measured="ok")

    @claims("c-5", "Demo", "claim c-5", published="ok")
    def test_five(experiment):
        return satisfied(True, measured="ok")
"""
# As on a loaded machine, where a failed setup's long traceback takes its time to report: the
# alarm of the budget lands in the reporting, between the test's phases.
SLOW_REPORT = """
    import time

    def pytest_runtest_logreport(report):
        if report.failed and report.when == "setup":
            time.sleep(2)
"""
OTHER = """
    from claim_audit import Claims, satisfied

    claims = Claims("other")

    @claims("d-1", "Other", "claim d-1", published="ok")
    def test_other():
        return satisfied(True, measured="ok")
"""


def run(folder, *args: str) -> tuple[subprocess.CompletedProcess, str]:
    (folder / "test_other.py").write_text(OTHER.replace("\n    ", "\n"))
    result = subprocess.run(
        pytest_command(*PLUGINS, *XDIST, *args),
        cwd=folder,
        env=tiny_pytest_env(),
        capture_output=True,
        text=True,
        timeout=150,  # the run must end by itself: the bug could wait forever
    )
    return result, result.stdout + result.stderr


def verdicts(folder) -> dict[str, str]:
    written = json.loads((folder / "out" / "partial" / "audit.json").read_text())
    return {claim["id"]: claim["verdict"] for claim in written["claims"]}


def test_an_alarm_between_a_tests_phases_fails_it_once_and_the_run_ends(tmp_path):
    """Under -n 2 --dist loadfile --timeout 1, the budget's alarm lands while a failed setup
    is being reported: the claims of the failed experiment and the one past its budget are
    ERRORs, each once and naming its cause; no worker dies; the rest of the file runs; the run
    ends (exit 1) with its table and partial report. Bug fixed: the alarm raised outside the
    test, the worker ended with an INTERNALERROR, and the run gave no table and no report
    (exit 3), or under a watchdog's kills xdist's controller waited forever."""
    folder = write_test_folder(tmp_path, MODULE)
    (folder / "conftest.py").write_text(SLOW_REPORT.replace("\n    ", "\n"))
    result, output = run(folder)
    assert result.returncode == 1, output
    assert "INTERNALERROR" not in output and "crashed" not in output, output
    assert output.count("ERROR test_module.py::test_two - RuntimeError") == 1, output
    assert re.search(r"ERROR in c-2, c-5: RuntimeError: the experiment failed", output), output
    assert "ERROR in c-3: Failed: Timeout (>1.0s) from pytest-timeout" in output, output
    assert verdicts(folder) == {
        "c-1": "holds",
        "c-2": "error",
        "c-3": "error",
        "c-4": "holds",
        "c-5": "error",
        "d-1": "holds",
    }


BLOCKED = """
    import signal, time
    from claim_audit import Claims, satisfied

    claims = Claims("demo")

    @claims("c-1", "Demo", "claim c-1", published="ok")
    def test_one():
        return satisfied(True, measured="ok")

    @claims("c-2", "Demo", "claim c-2", published="ok")
    def test_blocks():
        signal.signal(signal.SIGALRM, signal.SIG_IGN)  # as if blocked in C: no signal reaches it
        time.sleep(60)
        return satisfied(True, measured="ok")

    @claims("c-3", "Demo", "claim c-3", published="ok")
    def test_three():
        return satisfied(True, measured="ok")
"""


def test_a_test_blocked_past_its_budget_ends_its_worker_once_and_its_file_goes_on(tmp_path):
    """--timeout-method=thread: pytest-timeout ends the worker of a test no signal reaches.
    Its claim is an ERROR, once; the test after it in its file is judged on a new worker; the
    run ends (exit 1) with its partial report. Bug fixed: xdist ran the blocked test again on
    each replacement worker until "maximum crashed workers reached", and c-3 never ran."""
    folder = write_test_folder(tmp_path, BLOCKED)
    result, output = run(folder, "--timeout-method=thread")
    assert result.returncode == 1, output
    assert output.count("FAILED test_module.py::test_blocks") == 1, output
    assert "maximum crashed workers reached" not in output, output
    assert re.search(r"ERROR in c-2: .*crashed", result.stdout), output
    assert verdicts(folder) == {"c-1": "holds", "c-2": "error", "c-3": "holds", "d-1": "holds"}


def test_the_thread_method_without_xdist_workers_is_refused_at_start(tmp_path):
    """--timeout-method=thread in a run without xdist workers: a usage error at start naming
    -n 1 and the signal method, nothing run, the complete report kept. Bug fixed:
    pytest-timeout's os._exit ended the whole process at the blocked test, with no table and
    no report (engine/claim_audit/report/plugin.py `_ends_the_process`)."""
    folder = write_test_folder(tmp_path, BLOCKED)
    command = pytest_command(*PLUGINS, "--timeout", "1", "--timeout-method=thread", "--report-dir=out")  # fmt: skip
    result = subprocess.run(
        command, cwd=folder, env=tiny_pytest_env(), capture_output=True, text=True, timeout=150
    )
    output = result.stdout + result.stderr
    assert result.returncode == 4, output
    assert "--timeout-method=thread ends the whole pytest process" in result.stderr, output
    assert "run with -n 1" in result.stderr and "passed" not in output, output
    assert not (folder / "out").exists()


CACHED = """
    import time
    import numpy as np
    from claim_audit import Claims, cache, satisfied

    claims = Claims("demo")

    def compute():
        time.sleep(60)  # far past the budget, holding the entry's lock
        return {"x": np.ones(3)}

    @claims("c-1", "Demo", "claim c-1", published="ok")
    def test_computes():
        cache.cached("entry", {"a": 1}, compute)
        return satisfied(True, measured="ok")
"""


def test_a_test_past_its_budget_leaves_no_lock_nor_entry_behind(tmp_path):
    """A test whose cache computation runs past its budget: its claim is an ERROR, and the
    entry's lock is free and no entry or temporary file is left, so the next run computes it
    afresh and at once (engine/claim_audit/cache.py releases the lock as the failure passes)."""
    folder = write_test_folder(tmp_path / "project", CACHED)
    cache_dir = tmp_path / "cache"
    result = subprocess.run(
        pytest_command(*PLUGINS, *XDIST),
        cwd=folder,
        env=tiny_pytest_env(CLAIMS_CACHE_DIR=str(cache_dir)),
        capture_output=True,
        text=True,
        timeout=150,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "ERROR in c-1: Failed: Timeout (>1.0s) from pytest-timeout" in result.stdout
    (lock,) = cache_dir.glob("entry-*.npz.lock")
    FileLock(str(lock)).acquire(timeout=0)  # filelock.Timeout if another process held it
    assert sorted(p.name for p in cache_dir.iterdir()) == [lock.name]
