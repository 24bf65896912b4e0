"""How the suite's tests are spread over xdist workers (tests/scheduling.py): each
document's test files on one worker; the tests that need the whole machine last, beside at
most one quick test."""

from __future__ import annotations

import json
import os
import subprocess
from collections import defaultdict
from pathlib import Path

from fault_tools import REPO_ROOT, TIMEOUT_S, child_env, pytest_command
from scheduling import ALONE

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
    path = os.pathsep.join([str(tmp_path), str(REPO_ROOT / "tests")])
    run = subprocess.run(
        [*pytest_command("-n", "2", "-p", "event_recorder", *args)],
        cwd=folder,
        env=child_env(PYTHONPATH=path, EVENTS_OUT=str(out)),
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


TINY_CONFTEST = """
import pytest
from scheduling import ByDocument


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.name == "test_alone")


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    return ByDocument(config, log, documents=(), alone=("test_tiny.py::test_alone",))
"""

TINY_TESTS = """
import time


def test_long():
    time.sleep(4)


def test_quick(n):
    time.sleep(0.05)


def pytest_generate_tests(metafunc):
    if "n" in metafunc.fixturenames:
        metafunc.parametrize("n", range(8))


def test_alone():
    pass
"""


def test_a_test_that_needs_the_machine_waits_for_the_others(tmp_path):
    """A worker through with the quick tests while the other still runs the long one does
    not start the `alone` test: it starts after the long one, beside at most one held
    quick test (without the wait it starts some 3.5 s into the long one)."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "conftest.py").write_text(TINY_CONFTEST)
    (folder / "test_tiny.py").write_text(TINY_TESTS)
    seen = events(tmp_path, folder)
    alone = "test_tiny.py::test_alone"
    start = next(
        i for i, (nodeid, when, _) in enumerate(seen) if (nodeid, when) == (alone, "setup")
    )
    ended = {nodeid for nodeid, when, _ in seen[:start] if when == "teardown"}
    assert "test_tiny.py::test_long" in ended
    others = {nodeid for nodeid, _, _ in seen} - {alone}
    assert len(others) == 9 and len(others - ended) <= 1


def test_every_alone_test_exists():
    collected = subprocess.run(
        pytest_command("--collect-only", "-q", *{nodeid.split("::")[0] for nodeid in ALONE}),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert set(ALONE) <= set(collected.stdout.split()), collected.stdout[-2000:]
