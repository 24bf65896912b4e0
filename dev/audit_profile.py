"""Where a one-process audit's time goes: a pytest plugin that samples every thread's stack
and CPU time twice a second and logs each XLA compilation with its thread (docs/GPU.md).

    PYTHONPATH=dev AUDIT_PROFILE_OUT=DIR pytest claims -n 0 -m "claim or health" -p audit_profile

Writes DIR/profile.txt (the run's milestones, compile seconds and CPU seconds per thread, the
most sampled frames, and a timeline in 10 s buckets) and DIR/compiles.txt (one line per
compilation). The CPU seconds come from Linux's /proc/self/task: a thread that holds the
interpreter lock for long shows there, where a stack sample cannot tell running from
waiting inside C code.
For a process without xdist workers, as the audit runs beside an accelerator; child
processes are not sampled. A sample costs the interpreter lock for a moment.
"""

from __future__ import annotations

import collections
import logging
import os
import sys
import threading
import time
from pathlib import Path
from types import FrameType

import pytest

T0 = time.perf_counter()
INTERVAL_S = 0.5
WAITING = {"wait", "acquire", "_wait_for_tstate_lock", "select", "poll", "sleep", "communicate"}
WAITING |= {"_poll_until_acquired"}  # filelock's loop, asleep between its tries
OWN_CODE = ("uncertainty_claims", "claim_audit", "/lib/", "/claims/")

_milestones: list[tuple[float, str]] = []
_compiles: list[tuple[float, str, str]] = []
_frames: collections.Counter[tuple[str, str, str]] = collections.Counter()
_timeline: dict[int, collections.Counter[str]] = collections.defaultdict(collections.Counter)
_stop = threading.Event()
_TICK_S = 1 / os.sysconf("SC_CLK_TCK")
_cpu: dict[int, collections.Counter[str]] = collections.defaultdict(collections.Counter)
NATIVE = "threads not Python's (XLA's pools, ...)"


def _now() -> float:
    return round(time.perf_counter() - T0, 2)


class _CompileLog(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Finished XLA compilation"):
            _compiles.append((_now(), threading.current_thread().name, message))


def _where(frame: FrameType) -> tuple[str, str]:
    """The innermost function, and the innermost frame of this project's code above it."""
    inner = f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}"
    own: FrameType | None = frame
    while own is not None and not any(p in own.f_code.co_filename for p in OWN_CODE):
        own = own.f_back
    if own is None:
        return inner, "-"
    path = Path(own.f_code.co_filename)
    return inner, f"{path.parent.name}/{path.name}:{own.f_code.co_name}:{own.f_lineno}"


def _thread_cpu() -> dict[int, float]:
    """CPU seconds (user and system) of each thread of this process so far, by thread id."""
    seconds = {}
    for task in Path("/proc/self/task").iterdir():
        try:  # after the command's ")": state, then utime and stime at 11 and 12
            fields = (task / "stat").read_text().rpartition(")")[2].split()
        except OSError:  # the thread has ended
            continue
        seconds[int(task.name)] = (int(fields[11]) + int(fields[12])) * _TICK_S
    return seconds


def _sample() -> None:
    me = threading.get_ident()
    last: dict[int, float] = {}
    while not _stop.wait(INTERVAL_S):
        threads = [(t.ident, t.native_id, t.name.split("_")[0]) for t in threading.enumerate()]
        names = {ident: name for ident, _, name in threads}
        native = {native_id: name for _, native_id, name in threads}
        bucket = int(_now() // 10) * 10
        now = _thread_cpu()
        for tid, seconds in now.items():
            _cpu[bucket][native.get(tid, NATIVE)] += seconds - last.get(tid, 0.0)
        last = now
        for ident, frame in sys._current_frames().items():
            if ident == me:
                continue
            thread = names.get(ident, "?")
            inner, own = _where(frame)
            state = "waits" if inner.rpartition(":")[2] in WAITING else "runs"
            _frames[(thread, own, inner)] += 1
            _timeline[bucket][f"{thread} {state} {own}"] += 1


def pytest_configure(config: pytest.Config) -> None:
    import jax

    _milestones.append((_now(), "configured"))
    jax.config.update("jax_log_compiles", True)
    logging.getLogger("jax").addHandler(_CompileLog())
    threading.Thread(target=_sample, name="audit-profile", daemon=True).start()


def pytest_collection_finish(session: pytest.Session) -> None:
    _milestones.append((_now(), "collected"))


def pytest_runtest_logstart(nodeid: str, location: tuple) -> None:
    if not any(what.startswith("first test") for _, what in _milestones):
        _milestones.append((_now(), f"first test {nodeid}"))


def pytest_sessionfinish(session: pytest.Session) -> None:
    _milestones.append((_now(), "tests done"))


def pytest_unconfigure(config: pytest.Config) -> None:
    _stop.set()
    _milestones.append((_now(), "report written"))
    out = Path(os.environ.get("AUDIT_PROFILE_OUT", "audit-profile"))
    out.mkdir(parents=True, exist_ok=True)
    seconds: collections.Counter[str] = collections.Counter()
    for _, thread, message in _compiles:
        seconds[thread.split("_")[0]] += float(message.rsplit(" in ", 1)[1].split()[0])
    lines = [f"{t:8.2f} s  {what}" for t, what in _milestones]
    lines += ["", f"{len(_compiles)} compilations; seconds by thread:"]
    lines += [f"  {s:8.1f}  {thread}" for thread, s in seconds.most_common()]
    total: collections.Counter[str] = sum(_cpu.values(), collections.Counter())
    lines += ["", "this process's CPU seconds by thread (/proc/self/task):"]
    lines += [f"  {s:8.1f}  {thread}" for thread, s in total.most_common(20)]
    lines += ["", "most sampled (seconds; thread, own frame, innermost function):"]
    lines += [f"  {n * INTERVAL_S:7.1f}  {key}" for key, n in _frames.most_common(150)]
    lines += ["", "timeline (10 s buckets; seconds; thread, state, own frame):"]
    for bucket in sorted(_timeline):
        lines.append(f"-- {bucket} s")
        lines += [f"  {n * INTERVAL_S:5.1f}  {k}" for k, n in _timeline[bucket].most_common(15)]
        used = _cpu[bucket].most_common(8)
        lines.append("  CPU s by thread: " + ", ".join(f"{name} {s:.1f}" for name, s in used))
    (out / "profile.txt").write_text("\n".join(lines) + "\n")
    (out / "compiles.txt").write_text(
        "".join(f"{t:8.2f} {thread:24s} {message}\n" for t, thread, message in _compiles)
    )
