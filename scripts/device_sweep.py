"""A seed sweep on whatever devices JAX sees, split over them (lib/sharding.py), timed.

Trains both calibration nets on `--seeds` and the uncertainty recipe from `--keys` root
keys, each as one program whose run axis is split over `jax.devices()`, and prints (and
with `--out` writes as JSON) per-seed test accuracy, per-key figures and wall times
(first call, compile included, and a second, steady call). With `--reference` (a JSON
written by this script elsewhere, e.g. on the CPU) it also reports, per seed, how far the
accuracies moved: another device is another valid computation order, so they may differ
by float rounding amplified by training (the performance issue allows 1 point).

    python scripts/device_sweep.py --seeds 0-9 --keys 1-20 --out sweep.json
"""

from __future__ import annotations

import argparse
import json
import time

import jax
import numpy as np

from lib.calibration.experiment import NETS, forward_outputs, load_split
from lib.calibration.training import train_nets
from lib.numerics import request_deterministic_gpu_ops
from lib.robustness.seeds import parse_seeds
from lib.sharding import run_mesh
from lib.uncertainty.experiment import headline_figures, run_many


def timed(fn, repeats: int) -> tuple[object, list[float]]:
    """`fn()` `repeats` times; its last result and each call's wall time."""
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return result, times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=parse_seeds, default=parse_seeds("0-9"))
    parser.add_argument("--keys", type=parse_seeds, default=parse_seeds("1-20"))
    parser.add_argument("--repeats", type=int, default=2, help="calls per program (first compiles)")
    parser.add_argument("--reference", help="a JSON from another device to compare accuracies with")
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()

    request_deterministic_gpu_ops()
    mesh = run_mesh()
    out: dict = {
        "jax": jax.__version__,
        "devices": [str(d) for d in jax.devices()],
        "device_kind": jax.devices()[0].device_kind,
        "seeds": list(args.seeds),
        "keys": list(args.keys),
        "calibration": {},
    }
    print(f"jax {jax.__version__} on {out['devices']}", flush=True)
    split = load_split()
    for net in NETS:
        (models, losses), times = timed(
            lambda net=net: train_nets(net, args.seeds, split.train_x, split.train_y, mesh=mesh),
            args.repeats,
        )
        logits = forward_outputs(net, models, losses, split)["logits_test"]
        accuracy = (logits.argmax(-1) == split.test_y).mean(-1)
        out["calibration"][net] = {
            "seconds": times,
            "accuracy": dict(zip(map(str, args.seeds), accuracy.tolist(), strict=True)),
            "final_loss": np.asarray(losses)[:, -1].tolist(),
        }
        print(f"{net}: {len(args.seeds)} seeds, calls {times} s, accuracy {accuracy}", flush=True)

    results, times = timed(lambda: run_many(args.keys, mesh=mesh), args.repeats)
    figures = [headline_figures(r) for r in results]
    out["uncertainty"] = {
        "seconds": times,
        "figures": {name: [f[name] for f in figures] for name in figures[0]},
    }
    print(f"uncertainty: {len(args.keys)} root keys, calls {times} s", flush=True)

    if args.reference:
        with open(args.reference) as handle:
            reference = json.load(handle)
        moved = {
            net: {
                seed: abs(out["calibration"][net]["accuracy"][seed] - value) * 100
                for seed, value in reference["calibration"][net]["accuracy"].items()
                if seed in out["calibration"][net]["accuracy"]
            }
            for net in NETS
        }
        out["accuracy_moved_points"] = moved
        print(f"accuracy moved vs reference (points): {moved}", flush=True)
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main()
