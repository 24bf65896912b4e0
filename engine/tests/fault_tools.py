"""Helpers of the tests that run child processes (engine/tests/, tests/): child processes and read-only folders.

Every child gets a timeout; `subprocess.run` kills it when the timeout expires, and `Popen`
users below kill theirs in a `finally`, so no test leaves a process behind.
"""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
# How long a child process (a pytest run, a script) may take before it is taken as hung. Not a
# speed bound: idle, each child takes seconds, but under `make test` it shares a 2-core runner
# with workers that train, and a child of three pytest processes has been seen to take over
# 60 s there. The hangs these tests guard against waited forever or for the default test
# budget (1800 s, pyproject.toml), so a guard of 600 s tells them apart with room to spare.
TIMEOUT_S = 600


# What pytest and pytest-xdist set in this process's environment about this process: a child
# run that inherited them would take itself for one of this run's workers (a child pytest
# controller with PYTEST_XDIST_WORKER=gw1 acted on a conftest meant for its worker gw1).
THIS_RUN = (
    "PYTEST_CURRENT_TEST",
    "PYTEST_XDIST_WORKER",
    "PYTEST_XDIST_WORKER_COUNT",
    "PYTEST_XDIST_TESTRUNUID",
)


def child_env(**overrides: str) -> dict[str, str]:
    """This process's environment, less what describes this pytest run, with `overrides`."""
    inherited = {name: value for name, value in os.environ.items() if name not in THIS_RUN}
    return {**inherited, **overrides}


def run_python(
    script: str,
    *,
    env: dict[str, str] | None = None,
    prefix: list[str] | None = None,
    timeout: float = TIMEOUT_S,
) -> subprocess.CompletedProcess:
    """Run `script` (dedented) in a fresh interpreter from the repository root; capture output."""
    return subprocess.run(
        [*(prefix or []), sys.executable, "-c", textwrap.dedent(script)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def pytest_command(*args: str) -> list[str]:
    """`python -m pytest` without the cache provider, with `args`."""
    return [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args]


def run_pytest(
    folder: Path, *args: str, env: dict[str, str] | None = None, timeout: float = TIMEOUT_S
) -> subprocess.CompletedProcess:
    """Run pytest in `folder` with `args`; capture output."""
    return subprocess.run(
        pytest_command(*args), cwd=folder, env=env, capture_output=True, text=True, timeout=timeout
    )


def user_env() -> dict[str, str]:
    """A child's environment as a user of the installed engine has it: no PYTHONPATH."""
    env = child_env()
    env.pop("PYTHONPATH", None)
    return env


def starter_project(folder: Path, name: str = "toy") -> Path:
    """The project `python -m claim_audit new NAME FOLDER` writes, as a user makes it."""
    made = subprocess.run(
        [sys.executable, "-m", "claim_audit", "new", name, str(folder)],
        env=user_env(), capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return folder


def run_starter(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """pytest in a starter project as its user runs it (one process, the report in report/)."""
    return run_pytest(folder, "-p", "no:xdist", "--report-dir=report", *args, env=user_env())


def tiny_pytest_env(**overrides: str) -> dict[str, str]:
    """For pytest on a tiny test folder: no plugin autoloading (it costs ~1 s a process), so
    plugins are named with -p (e.g. `-p xdist.plugin`)."""
    return child_env(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", **overrides)


def run_audit_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess:
    """Run pytest with the claims-audit plugin (which needs xdist) on a tiny test folder."""
    plugins = ("-p", "xdist.plugin", "-p", "claim_audit.report.plugin")
    return run_pytest(folder, *plugins, *args, env=tiny_pytest_env())


def write_test_folder(folder: Path, module: str, name: str = "test_module.py") -> Path:
    """A folder holding one test module and a pytest.ini that registers the claim marker."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(textwrap.dedent(module))
    (folder / "pytest.ini").write_text(
        "[pytest]\nxfail_strict = true\nmarkers =\n    claim: a documented claim\n"
    )
    return folder


def permission_honouring_prefix(probe_dir: Path) -> list[str]:
    """A command prefix under which a child is bound by permission bits (it cannot write into
    a chmod 0o555 folder nor read a chmod 0o000 one).

    As a normal user that is no prefix at all. Root ignores permission bits through
    CAP_DAC_OVERRIDE, so for root the child runs under util-linux `setpriv` with that
    capability (and CAP_DAC_READ_SEARCH) dropped: still root, but bound by the bits. Where
    neither works the test is skipped, with the reason; the tests that work as root anywhere
    are a cache folder under a regular file (test_cache.py::test_unwritable_path_runs_uncached)
    and a data folder that is a regular file (test_faults_data.py).
    """
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root (permission bits do not bind) and setpriv is not installed")
    prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all"]
    probe_dir.mkdir(exist_ok=True)
    probe_dir.chmod(0o555)
    try:
        probe = run_python(
            f"open({str(probe_dir / 'probe')!r}, 'w')", prefix=prefix, timeout=TIMEOUT_S
        )
    finally:
        probe_dir.chmod(0o755)
    if probe.returncode == 0 or "PermissionError" not in probe.stderr:
        pytest.skip(f"running as root and setpriv could not drop CAP_DAC_OVERRIDE: {probe.stderr}")
    return prefix


def claim_body(module: ModuleType, claim_id: str) -> Callable:
    """The body of claim `claim_id` as its test in `module` runs it: the test unwrapped
    (`Claims` wraps each body with functools.wraps; a spec holds no body)."""
    for test in vars(module).values():
        marks = list(getattr(test, "pytestmark", []))
        cases = [case for m in marks if m.name == "parametrize" for case in m.args[1]]
        marks += [m for case in cases for m in getattr(case, "marks", ())]
        if any(m.name == "claim" and m.args[0].id == claim_id for m in marks):
            return inspect.unwrap(test)
    raise KeyError(f"no test of claim {claim_id!r} in {module.__name__}")
