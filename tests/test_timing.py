"""The guide's timing (unc-16, lib/uncertainty/timing.py): measured once per machine and code,
with the other load beside it, and read from the cache after; a figure taken under load is an
upper bound, which decides the claim only when it is within the bound.

The example itself is never run here (it takes minutes): its process and the machine's CPU
readings are stood in for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import test_uncertainty
from fault_tools import claim_body

from uncertainty_claims.uncertainty import timing

HZ = os.sysconf("SC_CLK_TCK")
IDLE = timing.IDLE_CORES
FIGURES = {"seconds": 80.0, "startup_s": 4.0, "mc_dropout_s": 6.0, "ensemble_s": 70.0}


def readings(*cores: tuple[float, float], every: float = 2.0) -> list[timing.CpuSample]:
    """CPU samples `every` seconds apart, one window per pair of cores busy: (with work other
    than this process's, of which this run's other processes'); this process spends nothing."""
    samples = [timing.CpuSample(0.0, 100.0, 1.0, 5.0)]
    for other, run_other in cores:
        last = samples[-1]
        samples.append(
            timing.CpuSample(
                last.wall + every,
                last.machine + other * every,
                last.mine,
                last.run + run_other * every,
            )
        )
    return samples


@pytest.fixture
def scripted(monkeypatch, tmp_path):
    """The machine's CPU readings scripted, the example's process stood in for, the cache in
    a fresh folder; returns (the list of readings to script, the example's calls)."""
    script: list[timing.CpuSample] = []
    calls: list[int] = []

    def sample() -> timing.CpuSample:
        if not script:
            raise AssertionError("more CPU readings taken than scripted")
        return script.pop(0)

    def run_example() -> dict[str, float]:
        calls.append(1)
        return dict(FIGURES)

    monkeypatch.setattr(timing, "sample", sample)
    monkeypatch.setattr(timing, "_run_example", run_example)
    monkeypatch.setattr(timing, "POLL_S", 0.0)
    monkeypatch.setenv("CLAIMS_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv(timing.WAIT_VARIABLE, raising=False)
    return script, calls


def entries(folder: Path) -> list[Path]:
    return list(folder.glob("uncertainty-guide-timing-*.npz"))


# --------------------------------------------------------------------------- idle detection


def test_machine_busy_time_is_every_state_but_idle_and_iowait():
    stat = "cpu  100 20 30 4000 500 6 7 8 9 10\ncpu0 50 10 15 2000 250 3 3 4 0 0\n"
    assert timing.machine_busy_s(stat) == pytest.approx((100 + 20 + 30 + 6 + 7 + 8) / HZ)
    with pytest.raises(timing.NotMeasurable, match="unexpected /proc/stat line"):
        timing.machine_busy_s("intr 1 2 3\n")


def test_other_load_is_the_machines_busy_time_less_this_process_and_this_run():
    before = timing.CpuSample(wall=10.0, machine=100.0, mine=2.0, run=3.0)
    after = timing.CpuSample(wall=14.0, machine=108.0, mine=4.0, run=9.0)
    assert timing.other_cores(before, after) == pytest.approx((8 - 2) / 4)
    assert timing.foreign_cores(before, after) == pytest.approx((8 - 6) / 4)


@pytest.mark.skipif(not Path("/proc/stat").is_file(), reason="reads Linux's /proc")
def test_a_child_process_counts_as_this_process_and_this_run():
    before = timing.sample()
    subprocess.run(
        [sys.executable, "-c", "import time\nt = time.process_time()\nwhile time.process_time() - t < 1: pass"],
        check=True,
    )  # fmt: skip
    after = timing.sample()
    assert after.mine - before.mine >= 0.9
    assert after.run - before.run >= 0.9
    assert after.machine - before.machine >= 0.9


def test_idle_at_once(scripted):
    script, _ = scripted
    script += readings((IDLE / 2, 0.0))
    timing.wait_for_idle(600)
    assert not script


def test_waits_while_this_runs_other_workers_work(scripted):
    script, _ = scripted
    script += readings((1.0, 1.0), (0.9, 0.9), (IDLE / 2, 0.0))
    timing.wait_for_idle(600)
    assert not script


def test_waits_not_for_other_processes_than_this_runs(scripted):
    script, _ = scripted
    script += readings((1.0, 0.5), (IDLE / 2, 0.0))
    timing.wait_for_idle(600)
    assert len(script) == 1  # no further reading taken


def test_stops_waiting_at_the_wait(scripted):
    script, _ = scripted
    script += readings((1.0, 1.0), (IDLE / 2, 0.0))
    timing.wait_for_idle(0)
    assert len(script) == 1


@pytest.mark.fault
@pytest.mark.parametrize("value", ["-1", "soon", "inf", "nan"])
def test_a_bad_wait_is_an_error_naming_it(scripted, monkeypatch, value):
    """CLAIMS_TIMING_WAIT_S not a finite number of seconds >= 0: an error naming the variable
    and its value, not a wait of some other length."""
    monkeypatch.setenv(timing.WAIT_VARIABLE, value)
    with pytest.raises(ValueError, match=f"{timing.WAIT_VARIABLE} must be .*{value!r}"):
        timing.guide_seconds()


# --------------------------------------------------------------------------- measured once


def test_a_figure_taken_under_load_is_cached_with_its_load(scripted, tmp_path):
    """Other work while the example runs: the figure is cached with that load beside it and
    marked as an upper bound; later runs read it and never run the example again."""
    script, calls = scripted
    script += readings((1.5, 0.2)) + readings((0.5, 0.0), every=80.0)
    found = timing.guide_seconds()
    assert calls == [1]
    assert "while the example ran" in found.under_load
    assert found.not_measurable is None
    assert found.figures == FIGURES | {"other_cores": pytest.approx(0.5)}
    assert len(entries(tmp_path)) == 1
    assert timing.guide_seconds() == found  # no reading scripted: none is taken
    assert calls == [1]


def test_waits_for_this_runs_other_workers_only_when_asked(scripted, monkeypatch, tmp_path):
    script, calls = scripted
    script += readings((1.0, 1.0)) + readings((1.0, 0.0), every=80.0)
    assert timing.guide_seconds().under_load is not None  # measured at once, under load
    for entry in entries(tmp_path):
        entry.unlink()

    monkeypatch.setenv(timing.WAIT_VARIABLE, "600")
    script += readings((1.0, 1.0), (IDLE / 2, 0.0)) + readings((0.0, 0.0), every=80.0)
    found = timing.guide_seconds()
    assert found.under_load is None
    assert calls == [1, 1]
    assert not script


def test_an_idle_figure_is_cached_and_served(scripted, tmp_path):
    script, calls = scripted
    script += readings((0.0, 0.0)) + readings((IDLE / 2, 0.0), every=80.0)
    first = timing.guide_seconds()
    assert first.under_load is None
    assert first.figures == FIGURES | {"other_cores": pytest.approx(IDLE / 2)}
    assert len(entries(tmp_path)) == 1
    second = timing.guide_seconds()  # no reading scripted: none is taken
    assert second == first
    assert calls == [1]


def test_not_measurable_where_the_cpu_time_cannot_be_read(scripted, monkeypatch, tmp_path):
    def unreadable() -> timing.CpuSample:
        raise timing.NotMeasurable("cannot read the machine's CPU time (no /proc/stat)")

    monkeypatch.setattr(timing, "sample", unreadable)
    found = timing.guide_seconds()
    assert found.not_measurable.startswith("cannot read the machine's CPU time")
    assert not scripted[1]  # the example was not run
    assert not entries(tmp_path)


@pytest.mark.fault
def test_a_stored_figure_is_checked():
    """A stored timing with a figure missing, negative or not finite is recomputed."""
    stored = {name: np.array(value) for name, value in FIGURES.items()}
    timing._check(stored | {"other_cores": np.array(IDLE * 1.5)})  # under load: kept
    with pytest.raises(ValueError, match="expected the timings"):
        timing._check(stored)
    with pytest.raises(ValueError, match="expected the timings"):
        timing._check(stored | {"other_cores": np.array(np.nan)})


# --------------------------------------------------------------------------- the claim


def test_the_claim_is_inconclusive_past_the_bound_under_load(scripted):
    script, _ = scripted
    script += readings((0.0, 0.0)) + readings((0.5, 0.0), every=80.0)
    judged = claim_body(test_uncertainty, "unc-16")()  # the claim's body
    assert judged.inconclusive is not None and "while the example ran" in judged.inconclusive
    assert not judged.holds
    assert judged.measured.startswith("80.0 s on ")
    assert "an upper bound" in judged.measured
    assert judged.details["machine"] == timing.machine()


def test_the_claim_holds_within_the_bound_under_load(scripted, monkeypatch):
    script, _ = scripted
    monkeypatch.setattr(timing, "_run_example", lambda: FIGURES | {"seconds": 20.0})
    script += readings((0.0, 0.0)) + readings((0.5, 0.0), every=20.0)
    judged = claim_body(test_uncertainty, "unc-16")()
    assert judged.inconclusive is None
    assert judged.holds  # an upper bound within 30 s


def test_the_claim_judges_an_idle_figure(scripted):
    script, _ = scripted
    script += readings((0.0, 0.0)) + readings((0.0, 0.0), every=80.0)
    judged = claim_body(test_uncertainty, "unc-16")()  # the claim's body
    assert judged.inconclusive is None
    assert not judged.holds  # 80 s is not at most 30 s
    assert judged.measured.startswith("80.0 s on ")
    assert judged.details["seconds"] == 80.0
