"""The cold audit's CPU split (scripts/audit_cpu.py, summed by scripts/bench.py): the training
functions it watches exist, and the split adds up to the run's CPU seconds."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import uncertainty_claims

REPO = Path(__file__).resolve().parents[1]
LIB = Path(uncertainty_claims.__file__).parent


def script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_training_function_it_watches_exists():
    """A renamed function would silently move its CPU seconds from training to the rest."""
    audit_cpu = script("audit_cpu")
    for functions in audit_cpu.TRAINING.values():
        for path, name in functions:
            source = (LIB / path).read_text()
            assert f"\ndef {name}(" in source, f"{path} defines no function {name}"


def test_the_split_adds_up_to_the_run():
    bench = script("bench")
    processes = [
        {
            "sampled_cpu_s": {"compiling": 3.0, "training calibration": 5.0, "other": 1.0},
            "children_cpu_s": 2.0,
            "compile_wall_s": 4.0,
            "compiles": 3,
        },
        {
            "sampled_cpu_s": {"compiling": 1.0, "training uncertainty": 4.0},
            "children_cpu_s": 0.5,
            "compile_wall_s": 1.5,
            "compiles": 1,
        },
    ]
    split = bench.split_cpu(30.0, processes)
    assert split["training_by_recipe_s"] == {"calibration": 5.0, "uncertainty": 4.0}
    assert (split["training_s"], split["compiling_s"], split["child_processes_s"]) == (9, 4, 2.5)
    assert split["rest_s"] == pytest.approx(30 - 9 - 4 - 2.5)
    assert (split["compile_wall_s"], split["compiles"]) == (5.5, 4)


def test_the_calibration_floor_counts_the_nets_the_run_trained():
    bench = script("bench")
    computed = [
        {"entry": "calibration-yat"},  # faithful: the published seeds
        {"entry": "calibration-relu-scan_vmap"},
        {"entry": "calibration-yat-twins-0"},  # a batch of twins of each published seed
        {"entry": "calibration-figures-scan_vmap"},  # evaluation, no training
        {"entry": "calibration-health-twin-1"},
    ]
    floor = bench.calibration_training_floor(computed, {"yat": 1.0, "relu": 10.0})
    seeds, twins = len(bench.PUBLISHED_SEEDS), bench.TWIN_BATCH
    assert floor["nets_trained"] == {"yat": seeds + twins * seeds, "relu": seeds}
    assert floor["floor_s"] == pytest.approx((seeds + twins * seeds) * 1.0 + seeds * 10.0)
