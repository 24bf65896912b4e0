"""How the suite's tests are spread over xdist workers (`--dist loadfile` in pyproject.toml,
the order in the root conftest.py): each test file on one worker, the two documents' claims
first and on two workers; an explicit `--dist` is xdist's; the three-process test's file is
handed out last."""

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


def test_each_file_runs_on_one_worker_and_the_documents_start_on_two(tmp_path):
    found = workers_by_file(tmp_path)
    assert set(found) == set(FILES)
    assert all(len(workers) == 1 for workers in found.values()), found
    assert found["claims/test_calibration.py"] != found["claims/test_uncertainty.py"]


def test_files_are_handed_out_in_the_conftests_order(tmp_path):
    """Not by their number of tests (xdist's default reorder): the sharding run and
    calibration's claims start the two workers, and uncertainty's claims go to the worker
    that calibration's do not hold. The documents' files alternate in the collection."""
    runs: dict[str, list[str]] = defaultdict(list)
    for nodeid, _, worker in events(tmp_path, REPO_ROOT, SHARDING, *FILES, "--setup-plan"):
        file = nodeid.split("::")[0]
        if file not in runs[worker]:
            runs[worker].append(file)
    assert {files[0] for files in runs.values()} == {SHARDING, FILES[0]}, runs
    calibration = next(w for w, files in runs.items() if FILES[0] in files)
    assert FILES[2] not in runs[calibration], runs

    files = list(dict.fromkeys(test.split("::")[0] for test in collected("claims", "tests")))
    assert files[:5] == [SHARDING, FILES[0], FILES[2], FILES[1], FILES[3]]


SHARDING = "tests/test_sharding.py"


def test_an_explicit_dist_mode_is_xdists(tmp_path):
    """`--dist loadfile` is only the suite's default: `--dist each` still runs every test on
    every worker."""
    found = workers_by_file(tmp_path, "--dist", "each")
    assert found == {name: {"gw0", "gw1"} for name in FILES}


def collected(*args: str) -> list[str]:
    """The node ids `pytest --collect-only` lists, in the order xdist hands them out."""
    run = subprocess.run(
        pytest_command("--collect-only", "-q", *args),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return [line for line in run.stdout.splitlines() if "::" in line]


def test_the_three_process_tests_file_is_handed_out_last():
    """xdist hands out files in the order of their first test: the three-process test's file,
    collected last, runs beside at most the last quick tests."""
    tests = collected("claims", "tests")
    files = list(dict.fromkeys(test.split("::")[0] for test in tests))
    assert files[-1] == LAST_FILE
    assert f"{LAST_FILE}::{THREE_PROCESSES}" in tests


LAST_FILE = "tests/test_multiprocess.py"
THREE_PROCESSES = "test_two_processes_hold_the_one_process_results_and_only_process_0_writes"
