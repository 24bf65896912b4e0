"""Measure how much the calibration figures move under valid changes of computation order.

Training is chaotic for some nets and seeds, so their figures move with the float order.
This script takes every seed and net in the orders the suite judges claims on
(`lib.calibration.experiment.ORDERS`: the documents' own per-batch loop, the scan with
the seeds vmapped together, and the float-rounding twins; the suite's cached runs),
computes every figure, and writes each net's, figure's and seed's spread over the orders,
from which the claims' tolerances are built (see fixtures/TOLERANCES.md).

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


def _sd(per_order: list[float]) -> float:
    distinct = np.unique(per_order)
    return float(distinct.std(ddof=1)) if len(distinct) > 1 else 0.0


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
    # Per net, figure and seed: the standard deviation over orders (ddof 1). Orders that
    # computed the very same value are one sample, not two: counting a value twice would
    # understate the spread. A seed whose orders all agree has no order noise (0).
    spread = {
        net: {
            name: {seed: _sd(per_order) for seed, per_order in per_seed.items()}
            for name, per_seed in per_net.items()
        }
        for net, per_net in values.items()
    }
    out = {
        "orders": list(ORDERS),
        "seeds": list(PUBLISHED_SEEDS),
        "sigma_order": spread,
        "values": values,
    }
    with open(args.out, "w") as handle:
        json.dump(out, handle, indent=1, sort_keys=True)
    for net, per_net in spread.items():
        for name, per_seed in sorted(per_net.items()):
            sds = ", ".join(f"{sd:.3g}" for sd in per_seed.values())
            print(f"{net:>5} {name:>22}: sigma_order per seed = {sds}")


if __name__ == "__main__":
    main()
