"""Beside one accelerator, a complete document's experiments start together (claims/running/ahead.py):
which documents, in which runs, and what a failing one says."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from claim_audit import cache
from running import ahead


class Item:
    """What ahead.py reads of a test item: its file and marks."""

    def __init__(self, file: str, *marks: str) -> None:
        self.path = Path("claims", file)
        self.marks = marks

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.marks else None


def config(*args: str, deselected=(), workers=0, worker=False) -> SimpleNamespace:
    stash = {ahead.DESELECTED: list(deselected)} if deselected else {}
    namespace = SimpleNamespace(args=list(args), stash=stash)
    namespace.option = SimpleNamespace(numprocesses=workers)
    if worker:
        namespace.workerinput = {"workerid": "gw0"}
    return namespace


CAL = Item("test_calibration.py", "claim")
CAL_HEALTH = Item("test_calibration_health.py", "health")
UNC = Item("test_uncertainty.py", "claim")
UNC_PROPERTY = Item("test_uncertainty.py")  # neither claim nor health: reads no experiment


def test_every_selected_document_is_complete_in_a_whole_run():
    assert ahead.complete_documents(config("claims"), [CAL, CAL_HEALTH, UNC]) == [
        "calibration",
        "uncertainty",
    ]


def test_a_document_with_a_claim_left_out_is_not_complete():
    """-k, -m, --deselect and --last-failed reach pytest_deselected: that document waits for
    its tests to ask; a deselected test that reads no experiment changes nothing."""
    deselected = [Item("test_uncertainty.py", "claim"), UNC_PROPERTY]
    assert ahead.complete_documents(config("claims", deselected=deselected), [CAL, UNC]) == [
        "calibration"
    ]
    assert ahead.complete_documents(config("claims", deselected=[UNC_PROPERTY]), [UNC]) == [
        "uncertainty"
    ]


def test_named_tests_start_nothing_ahead():
    named = config("claims/test_uncertainty.py::test_band_balloons")
    assert ahead.complete_documents(named, [UNC]) == []


def test_other_files_and_unmarked_tests_belong_to_no_document():
    assert ahead.complete_documents(config("tests"), [Item("test_cache.py", "claim")]) == []
    assert ahead.complete_documents(config("claims"), [UNC_PROPERTY]) == []


@pytest.mark.parametrize(
    ("platform", "options", "expected"),
    [
        ("tpu", {}, True),
        (None, {}, False),  # a CPU-only machine: the workers run the documents side by side
        ("tpu", {"workers": 2}, False),  # with workers, gw0 holds the chip and others help
        ("tpu", {"worker": True}, False),
    ],
)
def test_only_the_process_that_runs_everything_beside_an_accelerator_starts_ahead(
    monkeypatch, platform, options, expected
):
    monkeypatch.setattr(ahead, "computes_on_accelerator", lambda: platform is not None)
    assert ahead.starts_ahead(config("claims", **options)) is expected


def test_a_failing_experiment_says_so_and_leaves_it_to_its_test(monkeypatch):
    lines = []
    monkeypatch.setattr(cache, "progress_writer", lines.append)
    done = []

    def broken():
        raise RuntimeError("chip out of memory")

    monkeypatch.setitem(ahead.TASKS, "toy", lambda n_orders: [broken, lambda: done.append(1)])
    for thread in ahead.start(["toy"], None):
        thread.join(timeout=30)
    assert done == [1]
    assert len(lines) == 2 and "2 experiments of toy start side by side" in lines[0]
    assert "toy" in lines[1] and "chip out of memory" in lines[1]
    assert "computes it again" in lines[1]
