"""Measure how much the calibration figures move under valid changes of computation order.

The published figures came from the documents' own loop on unknown hardware; our
reproduction computes the same recipe in another float order. Training is
chaotic, so each figure of each seed moves a little with the order. This script
trains every seed and net under three valid orders (the documents' per-step
loop, our scan with the seeds vmapped together, our scan one seed at a time),
computes every figure, and writes the per-figure spread that the claims'
tolerances are built from (see fixtures/TOLERANCES.md).

    .venv/bin/python scripts/derive_tolerances.py --out fixtures/computation_order_spread.json
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from lib.calibration.evaluation import evaluate
from lib.calibration.experiment import NETS, PUBLISHED_SEEDS, load_split
from lib.calibration.order_variants import ORDERS, run_with_order
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
    request_deterministic_gpu_ops()  # as the pytest plugin does: same arithmetic, same cache keys
    split = load_split()
    values: dict[str, dict[str, dict[str, list[float]]]] = {}
    for order in ORDERS:
        for net in NETS:
            start = time.perf_counter()
            run = run_with_order(order, net, PUBLISHED_SEEDS, split)
            print(f"{order:>10} {net:>4}: {time.perf_counter() - start:.1f} s", flush=True)
            for figures in evaluate(run, split):
                for name, value in _flatten(figures).items():
                    values.setdefault(net, {}).setdefault(name, {}).setdefault(
                        str(figures["seed"]), []
                    ).append(value)
    # Per figure: the within-seed standard deviation over orders (ddof 1), pooled over seeds and nets.
    spread = {}
    names = sorted({name for per_net in values.values() for name in per_net})
    for name in names:
        groups = [
            np.asarray(v) for per_net in values.values() for v in per_net.get(name, {}).values()
        ]
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
