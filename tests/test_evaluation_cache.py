"""The calibration figures read back from the disk cache are the evaluated ones, bit for bit.

`calibration_results` keeps each seed's evaluated figures (ECE, NLL, AUROC, ...) on disk
beside the trained runs, so a warm run reads them instead of recomputing them. Checked on
synthetic outputs (no training): the figures come back with every float, key order and
type, an entry is recomputed once, and one stored for other seeds is never served.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from claim_audit import cache

from uncertainty_claims.calibration import evaluation
from uncertainty_claims.calibration.experiment import NetRun, Split
from uncertainty_claims.orders import calibration as order_builder


def synthetic(seeds: tuple[int, ...]) -> tuple[dict[str, NetRun], Split]:
    rng = np.random.default_rng(0)
    n_test, n_held, n_ood = 300, 200, 300

    def run(net: str) -> NetRun:
        def logits(n: int) -> np.ndarray:
            return rng.normal(0, 3, (len(seeds), n, 10))

        kmax = net == "yat"
        return NetRun(
            net=net,
            seeds=seeds,
            logits_test=logits(n_test),
            logits_heldout=logits(n_held),
            logits_ood=logits(n_ood),
            kmax_test=rng.random((len(seeds), n_test)) if kmax else None,
            kmax_ood=rng.random((len(seeds), n_ood)) if kmax else None,
            train_loss=rng.random((len(seeds), 5)),
            cache_status="computed",
        )

    empty = np.zeros((0, 784), np.float32)
    split = Split(
        train_x=empty,
        train_y=np.zeros(0, np.int64),
        heldout_x=empty,
        heldout_y=rng.integers(0, 10, n_held),
        test_x=empty,
        test_y=rng.integers(0, 10, n_test),
        ood_x=empty,
    )
    return {net: run(net) for net in ("yat", "relu")}, split


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAIMS_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_cached_figures_are_the_evaluated_ones(cache_dir, monkeypatch):
    seeds = (4, 7)
    runs, split = synthetic(seeds)
    direct = {net: evaluation.evaluate(run, split) for net, run in runs.items()}
    computed = order_builder._evaluated(runs, split, seeds, "scan_vmap")
    assert len(list(cache_dir.glob("calibration-figures-scan_vmap-*.npz"))) == 1

    def fail(run, split):
        raise AssertionError("evaluated again: the stored figures were not read")

    monkeypatch.setattr(evaluation, "evaluate", fail)
    read = order_builder._evaluated(runs, split, seeds, "scan_vmap")
    for figures in (computed, read):
        # Same values, keys in the same order, same types (json.dumps spells out all three).
        assert json.dumps(figures) == json.dumps(direct)
        assert figures == direct


def test_figures_of_other_seeds_under_this_key_are_not_served(cache_dir):
    """A stored entry with a valid key and checksum but another run's figures: recomputed."""
    seeds = (4, 7)
    runs, split = synthetic(seeds)
    order_builder._evaluated(runs, split, seeds, "scan_vmap")
    [path] = cache_dir.glob("calibration-figures-scan_vmap-*.npz")
    with np.load(path) as npz:
        key_text = str(npz[cache._KEY_FIELD].item())
    direct = {net: evaluation.evaluate(run, split) for net, run in runs.items()}
    other = {net: [{**f, "seed": 9} for f in figures] for net, figures in direct.items()}
    cache._write(path, key_text, {"per_seed_json": np.array(json.dumps(other))})
    assert order_builder._evaluated(runs, split, seeds, "scan_vmap") == direct
