"""Under `-n`, each document's test files run on one worker (claims/conftest.py): the two
documents' experiments train side by side instead of every worker queueing on one
document's trainings in turn."""

from __future__ import annotations

import json
import subprocess
from collections import defaultdict

from fault_tools import REPO_ROOT, TIMEOUT_S, child_env, pytest_command

# Records, in the controller, which worker ran each test.
RECORDER = """
import json, os

WHERE = {}


def pytest_runtest_logreport(report):
    node = getattr(report, "node", None)
    if node is not None and report.when == "setup":
        WHERE.setdefault(report.nodeid, []).append(node.gateway.id)


def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput"):
        with open(os.environ["WHERE_OUT"], "w") as handle:
            json.dump(WHERE, handle)
"""

FILES = ("test_calibration.py", "test_calibration_health.py", "test_uncertainty.py")
FILES += ("test_uncertainty_health.py", "test_figures.py")  # the last: no document's file


def workers_by_file(tmp_path, *args: str) -> dict[str, set[str]]:
    (tmp_path / "where_recorder.py").write_text(RECORDER)
    out = tmp_path / "where.json"
    run = subprocess.run(
        [
            *pytest_command(*(f"claims/{name}" for name in FILES), "-n", "2", "--setup-plan"),
            *("-p", "where_recorder", *args),
        ],
        cwd=REPO_ROOT,
        env=child_env(PYTHONPATH=str(tmp_path), WHERE_OUT=str(out)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    found: dict[str, set[str]] = defaultdict(set)
    for nodeid, workers in json.loads(out.read_text()).items():
        found[nodeid.split("::")[0].removeprefix("claims/")].update(workers)
    return found


def test_each_documents_tests_run_on_one_worker(tmp_path):
    """Planned, not run (--setup-plan): xdist still sends every test to a worker."""
    found = workers_by_file(tmp_path)
    assert set(found) == set(FILES)
    calibration = found["test_calibration.py"] | found["test_calibration_health.py"]
    uncertainty = found["test_uncertainty.py"] | found["test_uncertainty_health.py"]
    assert len(calibration) == 1 and len(uncertainty) == 1 and calibration != uncertainty


def test_an_explicit_dist_mode_is_xdists(tmp_path):
    """Only xdist's default (`load`) is replaced; `--dist each` still runs every test on
    every worker."""
    found = workers_by_file(tmp_path, "--dist", "each")
    assert found == {name: {"gw0", "gw1"} for name in FILES}
