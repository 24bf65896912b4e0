"""Ends an xdist worker that no longer answers: no run waits forever on a wedged worker.

A test past its budget is pytest-timeout's to fail (the `timeout` setting), inside the worker.
A worker that cannot act on that (stopped with SIGSTOP, blocked in C code) never reports
again, and xdist waits for it forever. So the controller's watchdog (`Watchdog`) watches
every worker from its start: its start-up and collection (`starting`, until `started`), and
each test it runs, which the worker marks in a folder of the run (`mark_running`). It kills
a worker that has spent longer than the budget and a grace on one of them, and at once (after
`STOPPED_S`) a worker whose process is stopped; xdist then reports the worker's crash as the
test's failure (the claim an ERROR, the report partial) and goes on with a new worker, which
skips that test and runs the rest of its file (plugin.py `pytest_handlecrashitem`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

# How long a worker's process may be seen stopped (SIGSTOP, SIGTSTP) before it is ended: a
# stopped worker never answers, whatever its budget. A worker under a debugger is "traced",
# not stopped, and is left alone.
STOPPED_S = 10.0
START_UP = "its start-up and collection"
# A worker's start-up and collection is bounded by the per-test budget, but never by less
# than this: the budget is about one test, while a start-up imports the project and collects,
# which on a 2-core runner whose other workers train has taken tens of seconds. A stopped
# worker is still ended after `STOPPED_S`, whatever its limit.
START_UP_FLOOR_S = 120.0


@contextlib.contextmanager
def mark_running(folder: Path, worker: str, nodeid: str) -> Iterator[None]:
    """Mark `nodeid` as running in this process (worker `worker`) while the block runs."""
    folder.mkdir(exist_ok=True)
    mark = folder / f"{worker}.json"
    staged = folder / f".{worker}.json"
    staged.write_text(json.dumps({"pid": os.getpid(), "nodeid": nodeid, "started": time.time()}))
    os.replace(staged, mark)  # the watchdog never reads half a mark
    try:
        yield
    finally:
        mark.unlink(missing_ok=True)


def grace(budget: float) -> float:
    """How long past its budget a test may run before its worker is taken as wedged: time for
    pytest-timeout to fail it and the worker to report."""
    return min(budget, 60.0)


def is_stopped(pid: int) -> bool:
    """Whether process `pid` is stopped (state T in /proc; False where there is no /proc)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["T"]


class Watchdog:
    """Kills the worker of any test that has run longer than `budget` + `grace` (a start-up:
    at least `START_UP_FLOOR_S` + its grace), or whose process has been stopped for
    `STOPPED_S`."""

    def __init__(self, folder: Path, budget: float, say: Callable[[str], None]):
        self.folder, self.budget, self.say = folder, budget, say
        self.stopped: dict[str, str] = {}  # node id (or worker id, at start-up) -> what it did
        self._starting: dict[str, tuple[int, float]] = {}  # worker -> (pid, since)
        self._stopped_since: dict[int, float] = {}  # pid -> when it was first seen stopped
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="claims-watchdog")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join(timeout=10)
        shutil.rmtree(self.folder, ignore_errors=True)

    def starting(self, worker: str, pid: int) -> None:
        """Watch worker `worker` (process `pid`) through its start-up and collection."""
        with self._lock:
            self._starting[worker] = (pid, time.time())

    def started(self, worker: str) -> None:
        """Worker `worker` has collected (or is gone): from now on its tests are watched."""
        with self._lock:
            self._starting.pop(worker, None)

    def _watch(self) -> None:
        period = min(1.0, max(0.2, (self.budget + grace(self.budget)) / 10))
        last = time.monotonic()
        while not self._done.wait(period):
            # A long pause means this process was stopped itself (Ctrl-Z stops the workers
            # too): start counting afresh. Only a pause of half of STOPPED_S: on a loaded
            # machine this thread is often late by seconds, and clearing then would keep a
            # stopped worker from ever being counted.
            if time.monotonic() - last > max(3 * period, STOPPED_S / 2):
                self._stopped_since.clear()
            last = time.monotonic()
            with self._lock:
                watched = [(w, pid, START_UP, since) for w, (pid, since) in self._starting.items()]
            for mark in self.folder.glob("*.json"):
                try:
                    running = json.loads(mark.read_text())
                except (OSError, ValueError):
                    continue  # gone: the test ended
                watched.append((mark.stem, running["pid"], running["nodeid"], running["started"]))
            for worker, pid, what, since in watched:
                self._check(worker, pid, what, since)

    def _check(self, worker: str, pid: int, what: str, since: float) -> None:
        ran = time.time() - since
        budget = max(self.budget, START_UP_FLOOR_S) if what == START_UP else self.budget
        if is_stopped(pid):
            stopped_for = time.monotonic() - self._stopped_since.setdefault(pid, time.monotonic())
        else:
            self._stopped_since.pop(pid, None)
            stopped_for = 0.0
        if ran > budget + grace(budget):
            limit = (
                f"its start-up limit of {budget:g} s (the test budget, at least {START_UP_FLOOR_S:g} s)"
                if what == START_UP
                else f"its budget of {budget:g} s (pytest-timeout's timeout)"
            )
            why = f"has run {what} for {ran:.0f} s, past {limit}, without answering"
        elif stopped_for > STOPPED_S:
            why = f"has been stopped (SIGSTOP?) for {stopped_for:.0f} s while running {what}"
        else:
            return
        what_did = f"worker '{worker}' {why}: ended"
        # Said before the kill: xdist's report of the crash then names it (plugin.py).
        self.stopped[worker if what == START_UP else what] = what_did
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        (self.folder / f"{worker}.json").unlink(missing_ok=True)
        self.started(worker)
        self._stopped_since.pop(pid, None)
        self.say(f"[claims] {what_did}")
