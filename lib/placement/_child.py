"""A computation on the host's CPU in a child process of its own (JAX_PLATFORMS=cpu).

For work that needs a process to itself: XLA reads its flags once per process (the CPU's other
arithmetic, lib/placement/_arithmetic.py), and beside a process that keeps an accelerator busy, a
faithful order computes on the host's cores with an interpreter of its own
(`placement.host_process`).

No child outlives what waits for it: the wait is a poll that ends the child's process group
when the test's budget (`timeout_s`) is spent, when the waiting thread is interrupted (by
pytest-timeout's alarm, Ctrl-C), or when the thread that handed it the work sets its stop
event (`stoppable`); a child whose parent dies ends itself and removes its task folder.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

R = TypeVar("R")
POLL_S = 0.1  # how soon a wait sees its child end, its budget spent or its stop event set
timeout_s: float | None = (
    None  # a test's budget (conftest.py sets pytest-timeout's): the most a child may take
)
_STOP = contextvars.ContextVar[threading.Event | None]("cpu_child_stop", default=None)


class ChildStopped(RuntimeError):
    """The child was ended before it finished: its budget was spent, or it was stopped."""


def stoppable(function: Callable[[], R]) -> tuple[Callable[[], R], threading.Event]:
    """`function` for another thread to call, and an event that, once set, ends any child
    process it is waiting on (`ChildStopped` there), so that the caller never waits for it."""
    stop = threading.Event()

    def call() -> R:
        _STOP.set(stop)
        return function()

    return (lambda: contextvars.copy_context().run(call)), stop


def in_cpu_child(
    function: Callable[..., Any], *args: Any, xla_flags: str | None = None, what: str = ""
) -> Any:
    """`function(*args)` computed on the CPU in a child process, with `xla_flags` as its
    XLA_FLAGS (default: this process's). The function must be importable by name (a
    module-level function, or a `functools.partial` of one); arguments and result travel
    pickled, through files of a temporary folder. `what` says where, for the error.

    Raises:
      RuntimeError: the child failed (its last lines of stderr say why).
      ChildStopped: it ran past `timeout_s`, or its thread's stop event was set.
    """
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    if xla_flags is not None:
        env["XLA_FLAGS"] = xla_flags
    env.pop("CLAIMS_COMPILATION_CACHE_DIR", None)
    name = (getattr(function, "__qualname__", None) or repr(function)) + what
    with tempfile.TemporaryDirectory(prefix="cpu-child-") as folder:
        task, result = Path(folder) / "task.pickle", Path(folder) / "result.pickle"
        task.write_bytes(pickle.dumps((function, args)))
        with (Path(folder) / "stderr").open("w+b") as stderr:
            command = [sys.executable, "-m", __name__, str(task), str(result), str(os.getpid())]
            child = subprocess.Popen(
                command, env=env, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True
            )
            _wait(child, name)
            stderr.seek(0)
            tail = stderr.read().decode(errors="replace").strip().splitlines()[-5:]
        if child.returncode != 0 or not result.is_file():
            raise RuntimeError(f"{name} exited with status {child.returncode}: " + " | ".join(tail))
        return pickle.loads(result.read_bytes())


def _wait(child: subprocess.Popen, name: str) -> None:
    """Wait for `child`; end its process group, whatever ends the wait before it does."""
    stop, started = _STOP.get(), time.monotonic()
    try:
        while child.poll() is None:
            if stop is not None and stop.is_set():
                raise ChildStopped(f"{name} was stopped: what it computed for is no longer wanted")
            if timeout_s is not None and time.monotonic() - started > timeout_s:
                raise ChildStopped(f"{name} ran past a test's budget of {timeout_s:g} s")
            time.sleep(POLL_S)
    finally:
        if child.returncode is None:
            _end(child)


def _end(child: subprocess.Popen) -> None:
    """Kill `child` and whatever it started (its process group), and reap it."""
    with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def _orphaned(parent: int, folder: Path) -> None:
    """End this child when its parent is gone (killed), removing its task folder."""
    while os.getppid() == parent:
        time.sleep(POLL_S * 5)
    shutil.rmtree(folder, ignore_errors=True)
    os._exit(1)


if __name__ == "__main__":
    task_path, result_path = map(Path, sys.argv[1:3])
    threading.Thread(
        target=_orphaned, args=(int(sys.argv[3]), task_path.parent), daemon=True
    ).start()
    task, arguments = pickle.loads(task_path.read_bytes())
    result_path.write_bytes(pickle.dumps(task(*arguments)))
