"""Where an audit's CPU seconds go, per process: a pytest plugin for `scripts/bench.py`.

    PYTHONPATH=scripts AUDIT_CPU_OUT=DIR pytest claims -n auto -m "claim or health" -p audit_cpu

Every process of the run (the xdist controller and each worker) writes DIR/<pid>.json at
its end: its own CPU seconds, those of the processes it started and waited for (its
children: the timing claim's example, a CPU child beside a chip; a controller's workers are
not counted as its children here), and its CPU seconds sampled every `INTERVAL_S` and
split by what ran meanwhile:

- compiling: while XLA compiled (JAX's public monitoring events, one at the start of each
  backend compile and one with its duration), up to one core per compile running;
- training: the rest while a thread was inside one of the recipes' training functions
  (`TRAINING`), calibration or uncertainty (the programs run in XLA's own threads, which
  this process's CPU seconds include; anything else running beside them counts too);
- other: all else (start-up, collection, evaluation, judging, resampling, rendering).

A compile runs in XLA's threads, not the calling thread, so its CPU is not measured
directly: the attribution is by time, and the sum of the compiles' wall seconds is written
beside it.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

INTERVAL_S = 0.2
BACKEND_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"  # jax.monitoring's name
TRAINING = {
    "calibration": {
        ("calibration/training.py", name)
        for name in ("train_nets", "train_nets_faithful", "train_twins", "train_net_per_step")
    },
    # The guide's recipe runs whole: JAX dispatches its programs asynchronously, so their
    # training finishes where a run reads its results (with its predictions, a small part).
    "uncertainty": {
        ("uncertainty/experiment.py", "run"),
        ("uncertainty/experiment.py", "run_many"),
        ("uncertainty/no_bootstrap.py", "train_members"),
        ("uncertainty/no_bootstrap.py", "faithful_without_bootstrap"),
        ("uncertainty/no_bootstrap.py", "batched_without_bootstrap"),
        ("uncertainty/no_bootstrap.py", "one_by_one_without_bootstrap"),
        ("uncertainty/unclamped.py", "train_unclamped"),
    },
}
"""The recipes' training functions, by the end of their file's path and their name."""

_lock = threading.Lock()
_compiling = 0  # compiles running now
_compile_wall_s = 0.0
_compiles = 0
_cpu = Counter[str]()
_stop = threading.Event()


def _compile_started(event: str, value: float, **_: object) -> None:
    global _compiling
    if event == BACKEND_COMPILE_EVENT:
        with _lock:
            _compiling += 1


def _compile_ended(event: str, duration: float, **_: object) -> None:
    global _compiling, _compile_wall_s, _compiles
    if event == BACKEND_COMPILE_EVENT:
        with _lock:
            _compiling = max(_compiling - 1, 0)
            _compile_wall_s += duration
            _compiles += 1


def _training_now() -> str | None:
    """Which recipe a thread is training now (calibration first), if any."""
    running = set()
    for frame in sys._current_frames().values():  # documented in `sys`, despite the underscore
        while frame is not None:
            code = frame.f_code
            for recipe, functions in TRAINING.items():
                if any(
                    code.co_name == name and code.co_filename.endswith(path)
                    for path, name in functions
                ):
                    running.add(recipe)
            frame = frame.f_back
    return next((recipe for recipe in TRAINING if recipe in running), None)


def _sample() -> None:
    last_wall, last_cpu = time.perf_counter(), time.process_time()
    while not _stop.wait(INTERVAL_S):
        with _lock:
            compiling = _compiling
        training = _training_now()
        wall, cpu = time.perf_counter(), time.process_time()
        used = cpu - last_cpu
        compile_part = min(used, compiling * (wall - last_wall))
        _cpu["compiling"] += compile_part
        _cpu[f"training {training}" if training else "other"] += used - compile_part
        last_wall, last_cpu = wall, cpu


def pytest_configure(config: pytest.Config) -> None:
    import jax.monitoring

    jax.monitoring.register_scalar_listener(_compile_started)
    jax.monitoring.register_event_duration_secs_listener(_compile_ended)
    threading.Thread(target=_sample, name="audit-cpu", daemon=True).start()


def pytest_unconfigure(config: pytest.Config) -> None:
    _stop.set()
    mine = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    controller = config.pluginmanager.getplugin("dsession") is not None  # xdist's
    record = {
        "pid": os.getpid(),
        "worker": os.environ.get("PYTEST_XDIST_WORKER"),
        "cpu_s": mine.ru_utime + mine.ru_stime,
        # A controller's children are its workers, whose own files count them.
        "children_cpu_s": 0.0 if controller else children.ru_utime + children.ru_stime,
        "sampled_cpu_s": dict(_cpu),
        "compile_wall_s": _compile_wall_s,
        "compiles": _compiles,
    }
    out = Path(os.environ["AUDIT_CPU_OUT"])
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{os.getpid()}.json").write_text(json.dumps(record))
