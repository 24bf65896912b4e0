"""The recipe's figures for one trained net and seed (docs/RECIPES.md, Calibration, "Evaluation")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .. import metrics
from .experiment import (
    FAITHFUL,
    NetRun,
    Split,
    cache_key,
)
from .training import TrainConfig

SATURATED = 0.99
"""A max probability within 1% of one: the softmax saturated (the share of test images at or
above it is a figure of each seed, cal-18)."""
SUBSAMPLE_SEED = 11
SUBSAMPLE_TEST = 3000
SUBSAMPLE_OOD = 1500


def subsample_indices(n_test: int, n_ood: int) -> tuple[np.ndarray, np.ndarray]:
    """The fixed subsample behind the post's per-seed AUROC lists (RandomState(11))."""
    test = np.random.RandomState(SUBSAMPLE_SEED).permutation(n_test)[:SUBSAMPLE_TEST]
    ood = np.random.RandomState(SUBSAMPLE_SEED).permutation(n_ood)[:SUBSAMPLE_OOD]
    return test, ood


def subsample_aurocs(run: NetRun, seed_index: int) -> dict[str, float]:
    """Per-seed AUROC as the post's lists were computed: subsample, rounded scores.

    Kernel scores are rounded to 1 decimal and confidences to 3 decimals before ranking.
    """
    test, ood = subsample_indices(run.logits_test.shape[1], run.logits_ood.shape[1])
    msp_test = np.round(metrics.msp_score(run.logits_test[seed_index][test]), 3)
    msp_ood = np.round(metrics.msp_score(run.logits_ood[seed_index][ood]), 3)
    out = {"msp": metrics.auroc(msp_test, msp_ood)}
    if run.kmax_test is not None:
        out["kmax"] = metrics.auroc(
            np.round(run.kmax_test[seed_index][test], 1), np.round(run.kmax_ood[seed_index][ood], 1)
        )
    return out


def ece_over_temperatures(
    logits: np.ndarray, labels: np.ndarray, temperatures: np.ndarray
) -> np.ndarray:
    """`metrics.ece(metrics.softmax(logits / T), labels)` for every T, with the same
    arithmetic (claims/properties/test_classification.py checks it), binned by
    `metrics.bin_index`. One temperature at a time: stacked, the arrays of all
    120 outgrow the CPU's caches and cost five times as much."""
    return np.array([_ece_at(logits, labels, t) for t in temperatures])


def _ece_at(logits: np.ndarray, labels: np.ndarray, temperature: float) -> float:
    scaled = logits / temperature
    e = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    conf = probs.max(axis=1)
    correct = (probs.argmax(axis=1) == labels).astype(np.float64)
    index = metrics.bin_index(conf)
    conf_sum = np.bincount(index, weights=conf, minlength=metrics.N_BINS)
    hits = np.bincount(index, weights=correct, minlength=metrics.N_BINS)
    return float(np.abs(hits - conf_sum).sum() / len(labels))


ORACLE_TEMPERATURES = np.exp(np.linspace(np.log(0.3), np.log(8.0), 120))
"""The temperatures searched for the one that minimises a net's own test ECE (an oracle,
not part of the recipe: what no single temperature can do, cal-10d)."""


def evaluate_seed(run: NetRun, seed_index: int, split: Split) -> dict:
    """All full-set figures of the recipe for one seed of one net (ECE as a fraction)."""
    z_test = run.logits_test[seed_index]
    z_ood = run.logits_ood[seed_index]
    probs = metrics.softmax(z_test)
    temperature = metrics.fit_temperature(run.logits_heldout[seed_index], split.heldout_y)
    probs_t = metrics.softmax(metrics.scale_logits(z_test, temperature))
    auroc = {
        "msp": metrics.auroc(metrics.msp_score(z_test), metrics.msp_score(z_ood)),
        "maxlogit": metrics.auroc(metrics.max_logit_score(z_test), metrics.max_logit_score(z_ood)),
        "energy": metrics.auroc(metrics.energy_score(z_test), metrics.energy_score(z_ood)),
    }
    figures = {
        "seed": run.seeds[seed_index],
        "acc": metrics.accuracy(z_test, split.test_y),
        "acc_T": metrics.accuracy(probs_t, split.test_y),
        "ece": metrics.ece(probs, split.test_y),
        "nll": metrics.nll(probs, split.test_y),
        "brier": metrics.brier(probs, split.test_y),
        "T": temperature,
        "ece_T": metrics.ece(probs_t, split.test_y),
        "nll_T": metrics.nll(probs_t, split.test_y),
        "median_top_logit": float(np.median(z_test.max(axis=1))),
        "share_saturated": float(np.mean(probs.max(axis=1) >= SATURATED)),
        "auroc": auroc,
        "auroc_subsample": subsample_aurocs(run, seed_index),
    }
    if run.net == "yat":
        eces = ece_over_temperatures(z_test, split.test_y, ORACLE_TEMPERATURES)
        figures["oracle_T"] = float(ORACLE_TEMPERATURES[int(np.argmin(eces))])
        figures["ece_oracle_T"] = float(eces.min())
    if run.kmax_test is not None:
        auroc["kmax"] = metrics.auroc(run.kmax_test[seed_index], run.kmax_ood[seed_index])
        figures["median_kmax"] = float(np.median(run.kmax_test[seed_index]))
        figures["median_kmax_ood"] = float(np.median(run.kmax_ood[seed_index]))
    return figures


def evaluate(run: NetRun, split: Split) -> list[dict]:
    """`evaluate_seed` for every seed of the run, in seed order."""
    return [evaluate_seed(run, i, split) for i in range(len(run.seeds))]


def aggregate(values: list[float]) -> tuple[float, float]:
    """Mean and population standard deviation (ddof 0), the post's "a +- b"."""
    array = np.asarray(values, dtype=np.float64)
    return float(array.mean()), float(array.std(ddof=0))


@dataclass(frozen=True)
class CalibrationResults:
    """Both nets on some seeds in one float order: the data split, the runs, per-seed figures."""

    split: Split
    runs: dict[str, NetRun]
    per_seed: dict[str, list[dict]]
    order: str = FAITHFUL
    # The cache keys of the runs, per net, when they were trained or read by `run_nets`
    # (`calibration_results`); what the entries derived from them are keyed by. None for
    # results assembled otherwise, which nothing derived from them is cached for.
    runs_key: dict[str, dict] | None = None


def runs_key(nets: Iterable[str], seeds: tuple[int, ...], order: str) -> dict[str, dict]:
    """The cache keys of the runs of `nets` on `seeds` in `order` (lib/orders/calibration.py
    `run_nets`), per net."""
    return {net: cache_key(net, seeds, TrainConfig(), order) for net in nets}
