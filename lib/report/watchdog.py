"""Ends a test that an xdist worker no longer runs: no run waits forever on a wedged worker.

A test past its budget is pytest-timeout's to fail (the `timeout` setting), inside the worker.
A worker that cannot act on that (stopped with SIGSTOP, blocked in C code) never reports
again, and xdist waits for it forever. So each worker marks the test it runs in a folder
of the run (`mark_running`), and the controller's watchdog (`Watchdog`) kills a worker whose
test has run past the budget and a grace; xdist then reports the worker's crash as the
test's failure (the claim an ERROR, the report partial) and goes on with a new worker.
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


class Watchdog:
    """Kills the worker of any test marked running for longer than `budget` + `grace`."""

    def __init__(self, folder: Path, budget: float, say: Callable[[str], None]):
        self.folder, self.budget, self.say = folder, budget, say
        self.stopped: dict[str, str] = {}  # node id -> what the watchdog did
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="claims-watchdog")

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        self._thread.join(timeout=10)
        shutil.rmtree(self.folder, ignore_errors=True)

    def _watch(self) -> None:
        limit = self.budget + grace(self.budget)
        while not self._done.wait(min(5.0, max(0.2, limit / 10))):
            for mark in self.folder.glob("*.json"):
                try:
                    running = json.loads(mark.read_text())
                except (OSError, ValueError):
                    continue  # gone: the test ended
                ran = time.time() - running["started"]
                if ran > limit:
                    self._kill(mark, running, ran)

    def _kill(self, mark: Path, running: dict, ran: float) -> None:
        what = (
            f"worker '{mark.stem}' has run {running['nodeid']} for {ran:.0f} s, past its budget "
            f"of {self.budget:g} s (pytest-timeout's timeout), without answering: stopped"
        )
        with contextlib.suppress(ProcessLookupError):
            os.kill(running["pid"], signal.SIGKILL)
        mark.unlink(missing_ok=True)
        self.stopped[running["nodeid"]] = what
        self.say(f"[claims] {what}")
