"""Beside one accelerator: a document's experiments started together when its claims are all
selected.

On a machine with one accelerator the audit runs in one process (conftest.py: `-n auto`
gives no workers there), whose tests would compute their experiments one after another,
each mostly waiting on XLA compiling the chip's programs, while the host's cores idle. So
as the session starts, every experiment a complete document's claims read starts in a
thread of its own: the chip's programs compile side by side, and the faithful orders run on
the host's CPU meanwhile (uncertainty_claims.placement). A test that needs one waits for it on its
entry's lock in the results cache, which computes each entry once, and reads it. The
programs are those the tests would run, so every result is the same to the bit.

Only a complete document's experiments start ahead: a partial run (-k, --deselect, one
test) computes what its tests ask for, as they ask. On a CPU-only machine, or with xdist
workers, nothing starts ahead: the workers are what runs the documents side by side there.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

import pytest
from claim_audit import cache

# Pays only beside an accelerator: scripts/bench.py TARGETS["audit.cold_s"] there (GPU_COLD_AUDIT_S).
Task = Callable[[], object]
MARKS = ("claim", "health")  # the tests of a document that read its experiments
DESELECTED = pytest.StashKey[list[pytest.Item]]()


def document_of(item: pytest.Item) -> str | None:
    """The document whose experiments an audit test reads, from its file's name
    (claims/test_<document>*.py), for a test marked claim or health; else None."""
    if not any(item.get_closest_marker(mark) for mark in MARKS):
        return None
    stem = item.path.stem
    return next((d for d in TASKS if stem.startswith(f"test_{d}")), None)


def complete_documents(config: pytest.Config, selected: Iterable[pytest.Item]) -> list[str]:
    """The documents with a test selected and none of their tests left out: by -k, -m,
    --deselect or --last-failed (`pytest_deselected`, in `DESELECTED`), or by naming tests."""
    if any("::" in str(arg) for arg in config.args):
        return []
    left_out = {document_of(item) for item in config.stash.get(DESELECTED, [])}
    chosen = {document_of(item) for item in selected} - left_out - {None}
    return sorted(chosen)  # type: ignore[arg-type]


def starts_ahead(config: pytest.Config) -> bool:
    """Whether this process computes the whole run beside an accelerator: the controller of
    a run without xdist workers, which holds the accelerator (conftest.py)."""
    workers = getattr(config.option, "numprocesses", None) or 0
    return not hasattr(config, "workerinput") and workers == 0 and computes_on_accelerator()


def computes_on_accelerator() -> bool:
    """Whether JAX computes on an accelerator in this process. Asked once the run is set up:
    by then its child processes' environment says JAX_PLATFORMS=cpu (uncertainty_claims.placement)."""
    import jax

    return jax.default_backend() != "cpu"


def _calibration(n_orders: int | None) -> list[Task]:
    from readings.calibration.bootstrap import figure_samples

    from uncertainty_claims.calibration.experiment import load_split, order_names
    from uncertainty_claims.orders.calibration import calibration_health, calibration_results

    load_split()  # read once, before the threads that share it

    def order(name: str) -> Task:
        return lambda: calibration_health(calibration_results(order=name))

    return [*(order(name) for name in order_names(n_orders)), figure_samples]


def _uncertainty(n_orders: int | None) -> list[Task]:
    from uncertainty_claims.orders import FAITHFUL, twin_batches
    from uncertainty_claims.orders.ablations import unclamped_runs, without_bootstrap_in_orders
    from uncertainty_claims.orders.uncertainty import (
        SPREAD_NUDGES,
        root_key_runs,
        twin_nudges,
        twins,
        uncertainty_result,
    )

    batches = range(twin_batches(n_orders, len(SPREAD_NUDGES), document="uncertainty"))
    names = [FAITHFUL, "scan", *(f"twin-{n}" for b in batches for n in twin_nudges(b))]
    return [
        uncertainty_result,
        lambda: uncertainty_result(implementation="scan"),
        *(lambda b=b: twins(batch=b) for b in batches),
        root_key_runs,
        # the ablation's faithful order, its scan and each batch of its twins: one thread each
        *(lambda o=o: without_bootstrap_in_orders(o) for o in ([FAITHFUL], ["scan"], names[2:])),
        unclamped_runs,
    ]


TASKS: dict[str, Callable[[int | None], list[Task]]] = {
    "calibration": _calibration,
    "uncertainty": _uncertainty,
}


def start(documents: list[str], n_orders: int | None) -> list[threading.Thread]:
    """Start each document's experiments in threads of their own, and return them. A thread
    that fails says so in a line: the test that needs its result computes it again, and
    fails with the error where it belongs."""

    def said(task: Task, document: str) -> None:
        try:
            task()
        except Exception as error:
            cache.progress_writer(
                f"[claims] computing {document}'s experiments ahead: {error!r}; "
                "the test that reads this result computes it again"
            )

    threads = [
        threading.Thread(target=said, args=(task, document), name=f"ahead-{document}", daemon=True)
        for document in documents
        for task in TASKS[document](n_orders)
    ]
    if threads:
        cache.progress_writer(
            f"[claims] beside the accelerator: {len(threads)} experiments of "
            f"{', '.join(documents)} start side by side (claims/running/ahead.py)"
        )
    for thread in threads:
        thread.start()
    return threads
