"""How the suite's tests are spread over xdist workers (the root conftest.py): each
document's test files on one worker; an explicit `--dist` is xdist's; the three-process test
is handed out last."""

from __future__ import annotations

import json
import subprocess
from collections import defaultdict
from pathlib import Path

from fault_tools import REPO_ROOT, TIMEOUT_S, child_env, pytest_command

# Records, in the controller, which worker ran each test.
RECORDER = """
import json, os

EVENTS = []


def pytest_runtest_logreport(report):
    node = getattr(report, "node", None)
    if node is not None:
        EVENTS.append([report.nodeid, report.when, node.gateway.id])


def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput"):
        with open(os.environ["EVENTS_OUT"], "w") as handle:
            json.dump(EVENTS, handle)
"""

FILES = ("claims/test_calibration.py", "claims/test_calibration_health.py")
FILES += ("claims/test_uncertainty.py", "claims/test_uncertainty_health.py")
FILES += ("tests/test_figures.py",)  # no document's file


def events(tmp_path, folder: Path, *args: str) -> list[tuple[str, str, str]]:
    """(node id, phase, worker) of each test report, in the order the controller received
    them, of `pytest -n 2 args` run in `folder`."""
    (tmp_path / "event_recorder.py").write_text(RECORDER)
    out = tmp_path / "events.json"
    run = subprocess.run(
        [*pytest_command("-n", "2", "-p", "event_recorder", *args)],
        cwd=folder,
        env=child_env(PYTHONPATH=str(tmp_path), EVENTS_OUT=str(out)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return [tuple(event) for event in json.loads(out.read_text())]


def workers_by_file(tmp_path, *args: str) -> dict[str, set[str]]:
    """Which workers the suite's `FILES` go to, planned, not run (--setup-plan): xdist still
    sends each test to a worker."""
    found: dict[str, set[str]] = defaultdict(set)
    for nodeid, _, worker in events(tmp_path, REPO_ROOT, *FILES, "--setup-plan", *args):
        found[nodeid.split("::")[0]].add(worker)
    return found


def test_each_documents_tests_run_on_one_worker(tmp_path):
    found = workers_by_file(tmp_path)
    assert set(found) == set(FILES)
    calibration = found["claims/test_calibration.py"] | found["claims/test_calibration_health.py"]
    uncertainty = found["claims/test_uncertainty.py"] | found["claims/test_uncertainty_health.py"]
    assert len(calibration) == 1 and len(uncertainty) == 1 and calibration != uncertainty


def test_an_explicit_dist_mode_is_xdists(tmp_path):
    """Only xdist's default (`load`) is replaced; `--dist each` still runs every test on
    every worker."""
    found = workers_by_file(tmp_path, "--dist", "each")
    assert found == {name: {"gw0", "gw1"} for name in FILES}


LAST = (
    "tests/test_multiprocess.py::"
    "test_two_processes_hold_the_one_process_results_and_only_process_0_writes"
)


def test_the_three_process_test_is_handed_out_last():
    """xdist hands out the two document groups first, then single tests in collection order:
    the three-process test, collected last, runs beside at most the last quick tests."""
    collected = subprocess.run(
        pytest_command("--collect-only", "-q", "claims", "tests"),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    tests = [line for line in collected.stdout.splitlines() if "::" in line]
    assert tests and tests[-1] == LAST, collected.stdout[-2000:]
