"""The other arithmetic's child process (lib/placement/_child.py) never outlives what waits for it:
a test past its budget ends at its budget, its child with it; a stopped child cannot hang the
run; a child whose parent is killed ends itself and removes its temporary folder."""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
from fault_tools import TIMEOUT_S, child_env, pytest_command, tiny_pytest_env, write_test_folder

from uncertainty_claims.placement import _child as cpu_child

pytestmark = pytest.mark.fault

BUDGET_S = 3  # the test's budget under pytest-timeout
LONG_S = 60  # the child's work, far past it
# How soon after its budget the run must end: pytest's start and end, the child's kill (its
# wait polls every 0.1 s) take seconds; waiting for the child would take LONG_S.
MARGIN_S = 30

# The work of a batch: at once in the test's own process (its half), long or stopped in the
# other arithmetic's child.
HELPERS = f"""
    import os, signal, sys, time

    def in_the_child():
        return sys.argv[0].endswith("_child.py")

    def long_work(items):
        if in_the_child():
            time.sleep({LONG_S})
        return items

    def stops_itself(items):
        if in_the_child():
            os.kill(os.getpid(), signal.SIGSTOP)
        return items
"""
MODULE = """
    import functools
    import pytest
    import helpers
    from uncertainty_claims.placement._arithmetic import pooled

    @pytest.mark.parametrize("work", [helpers.long_work, helpers.stops_itself])
    def test_halves(work):
        pooled(work, work, list(range(4)))
"""


def children_under(folder: Path) -> list[int]:
    """The processes whose command line names a path under `folder` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:  # it ended meanwhile
                continue
            if str(folder) in command:
                found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads processes from /proc")
def test_a_test_past_its_budget_ends_its_other_arithmetic_child_and_its_folder(tmp_path):
    """A test whose other-arithmetic child runs LONG_S (or stops itself, SIGSTOP) under a
    budget of BUDGET_S: each test fails on pytest-timeout's Timeout at its budget, no child
    is left running and no temporary folder behind. Bug fixed: leaving the thread pool joined
    the thread that waited for the child with no timeout, so the test ended only when the
    child did, and a stopped child hung the run (lib/placement/_arithmetic.py `halves`,
    lib/placement/_child.py `_wait`)."""
    folder = write_test_folder(tmp_path / "project", MODULE)
    (folder / "helpers.py").write_text(textwrap.dedent(HELPERS))
    scratch = tmp_path / "tmp"  # the children's temporary folders
    scratch.mkdir()
    started = time.monotonic()
    result = subprocess.run(
        pytest_command("-p", "timeout", "--timeout", str(BUDGET_S), "-q"),
        cwd=folder,
        env=tiny_pytest_env(TMPDIR=str(scratch), JAX_PLATFORMS="cpu"),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    took = time.monotonic() - started
    output = result.stdout + result.stderr
    failed = re.findall(r"FAILED test_module.py::test_halves.* Timeout \(>3\.0s\)", output)
    assert result.returncode == 1 and len(failed) == 2, output
    assert took < 2 * BUDGET_S + MARGIN_S, f"{took:.0f} s: {output}"
    assert children_under(scratch) == [] and list(scratch.iterdir()) == [], output


def test_a_child_past_the_tests_budget_is_ended_and_said(monkeypatch, tmp_path):
    """A child still computing when a test's budget (`cpu_child.timeout_s`, pytest-timeout's)
    is spent: ChildStopped naming it and the budget, at the budget, its folder removed."""
    monkeypatch.setattr(cpu_child, "timeout_s", 1.0)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)  # read TMPDIR again
    started = time.monotonic()
    with pytest.raises(
        cpu_child.ChildStopped, match=r"sleep>, 60\) ran past a test's budget of 1 s"
    ):
        cpu_child.in_cpu_child(functools.partial(time.sleep, LONG_S))
    assert time.monotonic() - started < MARGIN_S and list(tmp_path.iterdir()) == []


PARENT = """
    import functools, sys, time
    from uncertainty_claims.placement._child import in_cpu_child

    print("started", flush=True)
    in_cpu_child(functools.partial(time.sleep, {long}))
"""


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads processes from /proc")
def test_a_killed_parent_leaves_no_child_nor_folder_behind(tmp_path):
    """The process waiting for a child killed (SIGKILL) while the child computes: the child
    ends itself within seconds and removes its temporary folder. Bug fixed: it ran on, and
    task.pickle stayed (lib/placement/_child.py `_orphaned`)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    parent = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(PARENT.format(long=LONG_S))],
        env=child_env(TMPDIR=str(scratch), JAX_PLATFORMS="cpu"),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert parent.stdout.readline() == "started\n"
        deadline = time.monotonic() + MARGIN_S
        while not children_under(scratch) and time.monotonic() < deadline:
            time.sleep(0.1)
        child = children_under(scratch)
        assert child, "the child never started"
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()
    deadline = time.monotonic() + MARGIN_S
    while (children_under(scratch) or list(scratch.iterdir())) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = children_under(scratch)
    for pid in left:  # ours (started under our scratch folder): never leave it running
        os.kill(pid, signal.SIGKILL)
    assert left == [] and list(scratch.iterdir()) == []
