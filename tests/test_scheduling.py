"""How the suite's tests are spread over xdist workers (`--dist loadfile` in pyproject.toml,
the order in the root conftest.py): each test file on one worker, the two documents' claims
first and on two workers; an explicit `--dist` is xdist's; the three-process test's file is
handed out last."""

from __future__ import annotations

import json
import subprocess
from collections import defaultdict

import pytest
from fault_tools import REPO_ROOT, TIMEOUT_S, child_env, pytest_command

# Records, in the controller, which worker ran each test. In the workers, calibration's claims
# take a little time even when only planned: in an audit they outlast the sharding run, which
# is what sends uncertainty's claims to the other worker; planned alone, the two files would
# race to finish first.
RECORDER = """
import json, os, time

EVENTS = []


def pytest_runtest_setup(item):
    if item.nodeid.startswith("claims/test_calibration.py::"):
        time.sleep(0.1)


def pytest_runtest_logreport(report):
    node = getattr(report, "node", None)
    if node is not None:
        EVENTS.append([report.nodeid, report.when, node.gateway.id])


def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput"):
        with open(os.environ["EVENTS_OUT"], "w") as handle:
            json.dump(EVENTS, handle)
"""

SHARDING = "tests/test_sharding.py"
FILES = ("claims/test_calibration.py", "claims/test_calibration_health.py")
FILES += ("claims/test_uncertainty.py", "claims/test_uncertainty_health.py")
FILES += ("tests/test_figures.py",)  # no document's file


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def files_by_worker(tmp_path, *args: str) -> dict[str, list[str]]:
    """The files each worker ran, in the order it ran them, of `pytest -n 2 args` run in
    the repository, planned, not run (--setup-plan): xdist still sends each test to a
    worker."""
    (tmp_path / "event_recorder.py").write_text(RECORDER)
    out = tmp_path / "events.json"
    run = subprocess.run(
        [*pytest_command("-n", "2", "-p", "event_recorder", "--setup-plan", *args)],
        cwd=REPO_ROOT,
        env=child_env(PYTHONPATH=str(tmp_path), EVENTS_OUT=str(out)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    runs: dict[str, list[str]] = defaultdict(list)
    for nodeid, _, worker in json.loads(out.read_text()):
        if _file(nodeid) not in runs[worker]:
            runs[worker].append(_file(nodeid))
    return runs


@pytest.fixture(scope="module")
def collection() -> list[str]:
    """The node ids of `pytest --collect-only claims tests`, in the order xdist hands their
    files out."""
    run = subprocess.run(
        pytest_command("--collect-only", "-q", "claims", "tests"),
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    return [line for line in run.stdout.splitlines() if "::" in line]


def test_each_file_runs_on_one_worker_in_the_conftests_order(tmp_path):
    """Files go out in the conftest's order, not by their number of tests (xdist's default
    reorder): the sharding run and calibration's claims start the two workers, and
    uncertainty's claims go to the worker that calibration's do not hold."""
    runs = files_by_worker(tmp_path, SHARDING, *FILES)
    ran = [file for files in runs.values() for file in files]
    assert sorted(ran) == sorted({SHARDING, *FILES}), runs  # each file on one worker
    assert {files[0] for files in runs.values()} == {SHARDING, FILES[0]}, runs
    calibration = next(w for w, files in runs.items() if FILES[0] in files)
    assert FILES[2] not in runs[calibration], runs


def test_an_explicit_dist_mode_is_xdists(tmp_path):
    """`--dist loadfile` is only the suite's default: `--dist each` still runs every test on
    every worker."""
    runs = files_by_worker(tmp_path, *FILES, "--dist", "each")
    assert {worker: sorted(files) for worker, files in runs.items()} == {
        "gw0": sorted(FILES),
        "gw1": sorted(FILES),
    }


def test_the_documents_files_alternate(collection):
    """xdist hands out files in the order of their first test: the sharding run, then
    calibration's and uncertainty's claims, then their health checks."""
    files = list(dict.fromkeys(map(_file, collection)))
    assert files[:5] == [SHARDING, FILES[0], FILES[2], FILES[1], FILES[3]]
