"""The calibration nets' health checks read back from the disk cache are the computed ones.

`calibration_health` keeps the checks of the cached experiment's results on disk beside
the evaluated figures and memoises them per process, so the eight health claims, each
judged on every order, compute the held-out NLL curves once. Checked on synthetic outputs
(no training): the checks come back bit for bit, are computed once, an entry stored for
other seeds is never served, and results that are not the cached experiment's are never
cached. `load_split`, memoised too, hands out read-only arrays.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from claim_audit import cache
from test_evaluation_cache import synthetic

from uncertainty_claims.calibration.evaluation import CalibrationResults, evaluate
from uncertainty_claims.calibration.experiment import load_split
from uncertainty_claims.orders import calibration as order_builder

SEEDS = (4, 7)


def results(runs_key: dict | None, seeds: tuple[int, ...] = SEEDS) -> CalibrationResults:
    runs, split = synthetic(seeds)
    per_seed = {net: evaluate(run, split) for net, run in runs.items()}
    return CalibrationResults(split, runs, per_seed, "scan_vmap", runs_key)


def as_json(checks: dict) -> str:
    """Every field, float and order spelled out (NaN included)."""
    return json.dumps(
        {net: [[dataclasses.asdict(c) for c in seed] for seed in s] for net, s in checks.items()}
    )


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAIMS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(order_builder, "_MEMO", {})
    return tmp_path


def test_cached_checks_are_the_computed_ones(cache_dir, monkeypatch):
    r = results({"yat": {"synthetic": 1}, "relu": {"synthetic": 2}})
    direct = order_builder.compute_calibration_health(r)
    computed = order_builder.calibration_health(r)
    assert len(list(cache_dir.glob("calibration-health-scan_vmap-*.npz"))) == 1

    def fail(results):
        raise AssertionError("computed again: the stored checks were not read")

    monkeypatch.setattr(order_builder, "compute_calibration_health", fail)
    memoised = order_builder.calibration_health(r)
    monkeypatch.setattr(order_builder, "_MEMO", {})  # a new process: read from disk
    read = order_builder.calibration_health(r)
    for checks in (computed, memoised, read):
        assert as_json(checks) == as_json(direct)
    # Each call hands out its own lists: a caller's edit does not reach the next caller.
    memoised["yat"].clear()
    assert as_json(order_builder.calibration_health(r)) == as_json(direct)


def test_checks_of_other_seeds_under_this_key_are_not_served(cache_dir):
    """A stored entry with a valid key and checksum but another run's checks: recomputed."""
    r = results({"yat": {"synthetic": 1}, "relu": {"synthetic": 2}})
    direct = as_json(order_builder.compute_calibration_health(r))
    order_builder.calibration_health(r)
    [path] = cache_dir.glob("calibration-health-scan_vmap-*.npz")
    with np.load(path) as npz:
        key_text = str(npz[cache._KEY_FIELD].item())
        stored = json.loads(str(npz["checks_json"].item()))
    other = {net: [{**record, "seed": 9} for record in s] for net, s in stored.items()}
    cache._write(path, key_text, {"checks_json": np.array(json.dumps(other))})
    order_builder._MEMO.clear()
    assert as_json(order_builder.calibration_health(r)) == direct


def test_results_not_from_the_cached_experiment_are_not_cached(cache_dir):
    r = results(None)
    assert as_json(order_builder.calibration_health(r)) == as_json(
        order_builder.compute_calibration_health(r)
    )
    assert not list(cache_dir.glob("calibration-health*")) and not order_builder._MEMO


def test_split_is_loaded_once_and_read_only():
    split = load_split()
    assert load_split() is split
    for name, array in vars(split).items():
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 0
        assert not array.flags.writeable, name
