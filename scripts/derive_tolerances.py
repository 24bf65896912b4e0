"""Measure how much the calibration figures move under valid changes of computation order.

Training is chaotic, so each figure of each seed moves a little with the float order.
This script takes every seed and net in the orders the suite judges claims on
(`lib.calibration.experiment.ORDERS`: the documents' own per-batch loop, the scan with
the seeds vmapped together, the scan one seed at a time; the suite's cached runs),
computes every figure, and writes the per-figure spread that the claims' tolerances are
built from (see fixtures/TOLERANCES.md).

    .venv/bin/python scripts/derive_tolerances.py --out fixtures/computation_order_spread.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from lib.calibration.evaluation import calibration_results
from lib.calibration.experiment import ORDERS, PUBLISHED_SEEDS
from lib.numerics import request_deterministic_gpu_ops

FIGURES = (
    "acc",
    "ece",
    "nll",
    "brier",
    "T",
    "ece_T",
    "nll_T",
    "median_top_logit",
    "median_kmax",
    "median_kmax_ood",
)
AUROCS = ("msp", "maxlogit", "kmax")
SUBSAMPLE = ("msp", "kmax")


def _flatten(figures: dict) -> dict[str, float]:
    flat = {name: figures[name] for name in FIGURES if name in figures}
    flat |= {f"auroc.{k}": figures["auroc"][k] for k in AUROCS if k in figures["auroc"]}
    flat |= {
        f"auroc_subsample.{k}": figures["auroc_subsample"][k]
        for k in SUBSAMPLE
        if k in figures["auroc_subsample"]
    }
    return flat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    request_deterministic_gpu_ops()  # as claims/conftest.py does: same arithmetic, same cache keys
    values: dict[str, dict[str, dict[str, list[float]]]] = {}
    for order in ORDERS:
        start = time.perf_counter()
        results = calibration_results(order=order)
        print(f"{order:>11}: {time.perf_counter() - start:.1f} s", flush=True)
        for net, per_seed in results.per_seed.items():
            for figures in per_seed:
                for name, value in _flatten(figures).items():
                    values.setdefault(net, {}).setdefault(name, {}).setdefault(
                        str(figures["seed"]), []
                    ).append(value)
    # Per figure: the within-seed standard deviation over orders (ddof 1), pooled over seeds and
    # nets. Orders that computed the very same value (on a CPU the scan of one seed gives the
    # faithful loop's bits) are one sample, not two: counting a value twice would understate
    # the spread. A seed whose orders all agree adds nothing (no degree of freedom).
    spread = {}
    names = sorted({name for per_net in values.values() for name in per_net})
    for name in names:
        groups = [
            np.unique(v) for per_net in values.values() for v in per_net.get(name, {}).values()
        ]
        groups = [g for g in groups if len(g) > 1]
        pooled_var = sum(((g - g.mean()) ** 2).sum() for g in groups) / sum(
            len(g) - 1 for g in groups
        )
        spread[name] = float(np.sqrt(pooled_var))
    out = {
        "orders": list(ORDERS),
        "seeds": list(PUBLISHED_SEEDS),
        "sigma_order": spread,
        "values": values,
    }
    with open(args.out, "w") as handle:
        json.dump(out, handle, indent=1, sort_keys=True)
    for name in names:
        print(f"{name:>24}: sigma_order = {spread[name]:.4g}")


if __name__ == "__main__":
    main()
