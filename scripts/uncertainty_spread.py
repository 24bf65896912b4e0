"""Spread of the guide's printed figures over root seeds (and over float-rounding nudges).

For root seeds 1..20 (not 0, the guide's own), runs the recipe with
``run(root_seed)`` and reports, for each figure of the guide's "Results" block, the mean,
population std (ddof 0), min and max over seeds beside the seed-0 value and the published
number. Optionally (``--nudges N``) also runs seed 0 N times with 5% of the initial weights
moved by one float32 ulp, showing how far float rounding alone moves each figure.

Usage: python scripts/uncertainty_spread.py --out spread.json [--seeds 1-20] [--nudges 20]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

try:
    import lib.uncertainty as unc
except ModuleNotFoundError:  # run as a file from a checkout: put the repo root on the path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import lib.uncertainty as unc


def _parse_seeds(text: str) -> list[int]:
    seeds: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        seeds.extend(range(int(lo), int(hi or lo) + 1))
    return seeds


def _collapse_counts(result: unc.UncertaintyResult) -> dict[str, float]:
    health = unc.health_summary(result)
    return {
        "mc_logvar_at_max": health["mc_logvar_at_max"],
        "ens_members_logvar_at_max": float(sum(f > 0.0 for f in health["ens_logvar_at_max"])),
    }


def _figures(result: unc.UncertaintyResult) -> dict[str, float]:
    return {**unc.headline_figures(result), **_collapse_counts(result)}


def _stats(values: list[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=np.float64)
    return {"mean": a.mean(), "std": a.std(), "min": a.min(), "max": a.max()}


def _study(label: str, runs: dict[int, dict[str, float]], seed0: dict[str, float]) -> dict:
    names = list(seed0)
    stats = {name: _stats([figs[name] for figs in runs.values()]) for name in names}
    print(f"\n{label} ({len(runs)} runs)")
    print(
        f"{'figure':26s} {'published':>10s} {'seed 0':>10s} {'mean':>10s} {'std':>9s}"
        f" {'min':>10s} {'max':>10s}"
    )
    for name in names:
        pub = unc.PUBLISHED.get(name)
        pub_text = f"{pub:10.5f}" if pub is not None else f"{'':10s}"
        s = stats[name]
        print(
            f"{name:26s} {pub_text} {seed0[name]:10.5f} {s['mean']:10.5f} {s['std']:9.5f}"
            f" {s['min']:10.5f} {s['max']:10.5f}"
        )
    return {"runs": {str(k): v for k, v in runs.items()}, "stats": stats}


def main(argv: list[str] | None = None) -> int:
    """Run the spread study and write its JSON report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="path of the JSON report")
    parser.add_argument("--seeds", default="1-20", help="root seeds, e.g. 1-20 or 1,3,5-7")
    parser.add_argument(
        "--nudges", type=int, default=20, help="float-rounding twins of seed 0 (0: none)"
    )
    args = parser.parse_args(argv)

    start = time.perf_counter()
    t = time.perf_counter()
    seed0 = _figures(unc.run(0))
    first_s = time.perf_counter() - t
    seed_runs: dict[int, dict[str, float]] = {}
    run_times: list[float] = []
    for seed in _parse_seeds(args.seeds):
        t = time.perf_counter()
        seed_runs[seed] = _figures(unc.run(seed))
        run_times.append(time.perf_counter() - t)
    nudge_runs: dict[int, dict[str, float]] = {}
    for nudge in range(1, args.nudges + 1):
        t = time.perf_counter()
        nudge_runs[nudge] = _figures(unc.run(0, nudge=nudge))
        run_times.append(time.perf_counter() - t)

    print("Published figures vs. their spread (std is the population std, ddof 0)")
    report = {
        "published": unc.PUBLISHED,
        "seed0": seed0,
        "root_seeds": _study("Root seeds", seed_runs, seed0),
    }
    if nudge_runs:
        report["nudges_of_seed0"] = _study(
            "Seed 0 with 5% of initial weights nudged by 1 ulp", nudge_runs, seed0
        )
    total_s = time.perf_counter() - start
    report["timing_s"] = {
        "total": total_s,
        "first_run_with_compile": first_s,
        "steady_run_median": float(np.median(run_times)) if run_times else None,
    }
    print(
        f"\ntotal {total_s:.1f} s; first run (with compilation) {first_s:.1f} s;"
        f" median later run {report['timing_s']['steady_run_median']:.2f} s"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2, default=float) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
