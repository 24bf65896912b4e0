"""Benchmark the suite: its fast paths against the documents' own orders, the sweeps, the audit.

Every figure is measured in this one process run, on the machine it runs on, with the machine and
the load average (before and after) beside it. In-process figures give wall and CPU time
(all threads of this process); a figure's "first" call includes tracing and compiling,
"steady" is the median of the calls after it. Subprocess figures give wall time and the
CPU time of the whole process tree. On a shared machine the wall times follow the other
jobs; the CPU times much less so. Sections (`--only`, comma-separated; default all but
`sweep`):

- calibration: all six nets (3 seeds x 2) trained by `train_nets` (one lax.scan per net,
  seeds vmapped, the nets side by side in threads as the suite trains them) against the
  documents' per-step loop (`train_net_per_step`); per-seed test accuracy must agree
  within 1 point. And the faithful order against the fast scan order, each as
  `uncertainty_claims.orders.calibration.train` (training and evaluation outputs), the two nets side
  by side in threads as `run_nets` does (`calibration.faithful_over_scan`).
- floor: matmul throughput on the recipe's layer shapes and on a 2048^2 matmul; the
  calibration training's matmul FLOPs from the shapes; our time / the floor.
- uncertainty: `run(0)` in the scan and the faithful order; the faithful ensemble (its
  eager step replayed, lib/eager_replay.py) against the guide's literal eager loop, both
  timed on `--ensemble-steps` steps and extrapolated to the recipe's 1,000.
- spread: `run_many` of 20 root keys against 20 `run(scan)` calls (`uncertainty.spread_speedup`), with the
  bit-for-bit check of the MC-Dropout outputs; `--spread-keys` adds more counts.
- audit: `pytest claims -n WORKERS -m "claim or health"` (what `make audit` runs) with
  empty result and compiled-program caches (cold), then again on them (warm). The cold
  run's CPU seconds are split (scripts/audit_cpu.py, a plugin in every process of the run)
  into training, compiling, the processes the tests start and the rest, and the
  calibration training is set against its matmul floor (the floor section's, in CPU
  seconds per seed of each net).
- suite: the same for `pytest claims tests -n WORKERS` (what `make test` runs).
- scripts: the documents' own two scripts, each in a fresh process on empty caches (the
  guide's example whole, `python -m uncertainty_claims.uncertainty.timing`; the calibration
  post's recipe in its faithful order, both nets, seeds 0-2), then the cold audit: the
  audit's cost over both scripts' (`scripts.audit_over_scripts`).
- sweep: `train_nets` on `--seeds` seeds per net and `run_many` on `--keys` root keys, each
  a first call (compiling) and a steady one (`sweep.calibration_first_s`,
  `sweep.uncertainty_first_s`, both including compilation); `--batch-mc`: `run_many`'s MC-Dropout
  nets batched (an accelerator's fast path for a sweep).

    .venv/bin/python scripts/bench.py [--only calibration,spread] [--out report/bench.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from uncertainty_claims.calibration.experiment import (
    FAITHFUL,
    NETS,
    PUBLISHED_SEEDS,
    TWIN_BATCH,
    load_split,
)
from uncertainty_claims.calibration.training import TrainConfig, train_net_per_step, train_nets
from uncertainty_claims.numerics import full_precision, request_deterministic_gpu_ops
from uncertainty_claims.orders.calibration import train, train_twin_batch
from uncertainty_claims.placement import on_host
from uncertainty_claims.uncertainty import experiment
from uncertainty_claims.uncertainty.config import UncertaintyConfig
from uncertainty_claims.uncertainty.data import N_PER_CLUSTER, make_data, root_keys
from uncertainty_claims.uncertainty.experiment import run, run_many
from uncertainty_claims.uncertainty.model import GaussianMLP
from uncertainty_claims.uncertainty.training import train_ensemble_loop

REPO = Path(__file__).resolve().parent.parent
SECTIONS = ("calibration", "floor", "uncertainty", "spread", "audit", "suite", "scripts", "sweep")
TARGETS = {
    "calibration.speedup_vs_loop": (">=", 4.0),
    "scripts.audit_over_scripts": ("<=", 1.5),
    "calibration.floor_ratio": ("<=", 2.5),
    "calibration.floor_ratio_vs_square": ("<=", 2.5),
    "calibration.faithful_over_scan": ("<=", 1.5),
    "uncertainty.spread_speedup": (">=", 3.0),
    "audit.cold_s": ("<=", 100.0),  # 2 cores; on a GPU: GPU_COLD_AUDIT_S
    "audit.warm_s": ("<=", 10.0),
    "suite.cold_s": ("<=", 45.0),
    "suite.warm_s": ("<=", 10.0),
    "suite.peak_rss_mb": ("<=", 3072.0),
    "sweep.calibration_first_s": ("<=", 30.0),  # per net, 1,000 seeds, one H200
    "sweep.uncertainty_first_s": ("<=", 60.0),  # 1,000 keys, one H200
}
GPU_COLD_AUDIT_S = 25.0  # one H200
SWEEP_TARGET_SIZE = 1000


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _cpuinfo() -> dict:
    """The first CPU's model, clock and vector extensions from /proc/cpuinfo: the figures
    below move with them (two 2-core hosts of one kind may differ a lot in a cold audit)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return {"cpu": platform.machine()}
    first = dict(
        (key.strip(), value.strip())
        for key, _, value in (line.partition(":") for line in text.split("\n\n")[0].splitlines())
    )
    vector = sorted(f for f in first.get("flags", "").split() if f.startswith(("avx", "amx")))
    return {
        "cpu": first.get("model name", platform.machine()),
        "cpu_id": " ".join(
            f"{key} {first[key]}" for key in ("cpu family", "model", "stepping") if key in first
        ),
        "cpu_mhz": float(first["cpu MHz"]) if "cpu MHz" in first else None,
        "vector_extensions": vector,
    }


def machine() -> dict:
    device = jax.devices()[0]
    return {
        "cores": os.cpu_count(),
        **_cpuinfo(),
        "backend": jax.default_backend(),
        "device_kind": device.device_kind,
        "devices": len(jax.devices()),
        "jax": jax.__version__,
        "python": platform.python_version(),
    }


def timed(fn: Callable[[], object], repeats: int) -> dict:
    """A first call of `fn` and `repeats` more: wall and CPU seconds, load before and after."""
    load, walls, cpus = _load(), [], []
    for _ in range(1 + repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        jax.block_until_ready(fn())
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    steady = walls[1:] or walls
    return {
        "first_s": walls[0],
        "steady_s": walls[1:],
        "median_s": statistics.median(steady),
        "first_cpu_s": cpus[0],
        "median_cpu_s": statistics.median(cpus[1:] or cpus),
        "compile_s": max(walls[0] - statistics.median(steady), 0.0),
        "load_before": load,
        "load_after": _load(),
    }


def side_by_side(jobs: list[Callable[[], object]]) -> list:
    """The jobs at once, in threads, as `run_nets` trains the two nets."""
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        return [f.result() for f in [pool.submit(job) for job in jobs]]


def _fmt(t: dict) -> str:
    return (
        f"first {t['first_s']:7.2f} s | steady {t['median_s']:7.2f} s "
        f"(cpu {t['median_cpu_s']:6.2f} s) | load {t['load_before'][0]:.1f}"
    )


# --------------------------------------------------------------------------- calibration


def _accuracy(model, images: np.ndarray, labels: np.ndarray) -> float:
    logits = jax.jit(lambda x: model(x))(jnp.asarray(images))
    return float(np.mean(np.asarray(logits).argmax(-1) == labels))


def bench_calibration(split, repeats: int) -> dict:
    trained: dict = {}

    def ours():
        jobs = [
            lambda n=n: train_nets(
                n, PUBLISHED_SEEDS, split.train_x, split.train_y, inputs_on=on_host
            )
            for n in NETS
        ]
        trained["ours"] = dict(zip(NETS, (m for m, _ in side_by_side(jobs)), strict=True))

    def loop():
        trained["loop"] = {
            net: [
                train_net_per_step(net, s, split.train_x, split.train_y)[0] for s in PUBLISHED_SEEDS
            ]
            for net in NETS
        }

    ours_t = timed(ours, repeats)
    print(f"  train_nets, nets side by side  {_fmt(ours_t)}", flush=True)
    loop_t = timed(loop, 0)
    print(f"  per-step loop, one at a time   {_fmt(loop_t)}", flush=True)
    accuracy = []
    for net in NETS:
        for seed, a, b in zip(
            PUBLISHED_SEEDS, trained["ours"][net], trained["loop"][net], strict=True
        ):
            acc = {
                k: _accuracy(m, split.test_x, split.test_y) for k, m in (("ours", a), ("loop", b))
            }
            accuracy.append(
                {"net": net, "seed": seed, **acc, "diff_pt": 100 * abs(acc["ours"] - acc["loop"])}
            )
    orders = {
        order: timed(
            lambda o=order: side_by_side(
                [lambda n=n: train(o, n, PUBLISHED_SEEDS, split) for n in NETS]
            ),
            repeats,
        )
        for order in (FAITHFUL, "scan_vmap")
    }
    for order, t in orders.items():
        print(f"  train({order!r}), both nets  {_fmt(t)}", flush=True)
    # What each --orders step costs: one batch of TWIN_BATCH twins of both nets.
    twins = timed(
        lambda: side_by_side(
            [lambda n=n: train_twin_batch(0, n, PUBLISHED_SEEDS, split) for n in NETS]
        ),
        repeats,
    )
    print(f"  train_twin_batch (6 twins), both nets  {_fmt(twins)}", flush=True)
    worst = max(row["diff_pt"] for row in accuracy)
    return {
        "nets": len(NETS) * len(PUBLISHED_SEEDS),
        "ours": ours_t,
        "loop": loop_t,
        "speedup_vs_loop": loop_t["first_s"] / ours_t["median_s"],
        "accuracy": accuracy,
        "accuracy_max_diff_pt": worst,
        "accuracy_agrees": worst <= 1.0,
        "orders": orders,
        "orders_method": "uncertainty_claims.orders.calibration.train(order, net, seeds 0-2, split): "
        "training and evaluation outputs, both nets side by side in threads",
        "faithful_over_scan": orders[FAITHFUL]["median_s"] / orders["scan_vmap"]["median_s"],
        "twin_batch": twins,
        "twin_batch_method": f"train_twin_batch: {TWIN_BATCH} twins of each net on seeds 0-2, "
        "both nets side by side: the cost of each step of --orders",
    }


# --------------------------------------------------------------------------- floor

# One training step of one net, batch B = 256: every matmul, as (lhs shape, rhs shape, rhs
# transposed). Yat's scores need x @ W.T (W is [50, 784]); its gradient w.r.t. W is
# g.T @ x. ReLU's first layer is x @ W1 and its gradient x.T @ g. Both share the readout:
# forward h @ W2, backward h.T @ g (dW2) and g @ W2.T (dh). No gradient w.r.t. the pixels.
READOUT = [((256, 50), (50, 10), False), ((50, 256), (256, 10), False), ((256, 10), (50, 10), True)]
STEP_MATMULS = {
    "yat": [((256, 784), (50, 784), True), ((50, 256), (256, 784), False), *READOUT],
    "relu": [((256, 784), (784, 50), False), ((784, 256), (256, 50), False), *READOUT],
}


def _flops(lhs: tuple[int, int], rhs: tuple[int, int], transposed: bool) -> int:
    return 2 * lhs[0] * lhs[1] * (rhs[0] if transposed else rhs[1])


def matmul_seconds(
    lhs, rhs, transposed: bool, *, batch: int | None = None, inner: int = 100
) -> float:
    """Median seconds of one float32 matmul of these shapes, per matrix pair (`matmul_timing`)."""
    return matmul_timing(lhs, rhs, transposed, batch=batch, inner=inner)[0]


def matmul_timing(
    lhs, rhs, transposed: bool, *, batch: int | None = None, inner: int = 100
) -> tuple[float, float]:
    """Median wall and CPU seconds (all threads) of one float32 matmul of these shapes, per
    matrix pair. On a busy machine the wall seconds grow, the CPU seconds much less.

    `inner` matmuls run in one lax.scan; each adds the previous result's first entry (times
    0) to its right operand, a cheap dependency that keeps XLA from hoisting the matmul out
    of the loop. `batch` stacks that many pairs, as the vmap over seeds does.
    """
    lead = () if batch is None else (batch,)
    key_a, key_b = jax.random.split(jax.random.key(0))
    a = jax.random.normal(key_a, (*lead, *lhs), jnp.float32)
    b = jax.random.normal(key_b, (*lead, *rhs), jnp.float32)

    def loop(a, b):
        def body(carry, _):
            right = b + carry
            y = a @ (jnp.swapaxes(right, -1, -2) if transposed else right)
            return y.reshape(-1)[0] * 0.0, None

        return jax.lax.scan(body, jnp.float32(0), length=inner)[0]

    f = jax.jit(loop)
    timing = timed(lambda: f(a, b), 3)
    pairs = inner * (batch or 1)
    return timing["median_s"] / pairs, timing["median_cpu_s"] / pairs


def bench_floor(ours_s: float) -> dict:
    shapes = {}
    for lhs, rhs, transposed in sorted({m for ms in STEP_MATMULS.values() for m in ms}):
        (single, single_cpu), (stacked, stacked_cpu) = (
            matmul_timing(lhs, rhs, transposed, batch=batch)
            for batch in (None, len(PUBLISHED_SEEDS))
        )
        flops = _flops(lhs, rhs, transposed)
        shapes[f"{lhs}x{rhs}{'^T' if transposed else ''}"] = {
            "flops": flops,
            "gflops_single": flops / single / 1e9,
            "gflops_stacked_3": flops / stacked / 1e9,
            "seconds": min(single, stacked),
            "cpu_seconds": min(single_cpu, stacked_cpu),
        }
    n = 2048
    square = jax.random.normal(jax.random.key(1), (n, n), jnp.float32)
    matmul = jax.jit(jnp.matmul)
    square_gflops = 2 * n**3 / timed(lambda: matmul(square, square), 3)["median_s"] / 1e9
    config = TrainConfig()
    steps = (
        len(PUBLISHED_SEEDS)
        * config.epochs
        * len(range(0, 55_000 - config.batch_size, config.batch_size))
    )
    flops = floor_s = 0.0
    per_seed_cpu_s = {}  # CPU seconds: what the cold audit's split compares its training with
    for net, ms in STEP_MATMULS.items():
        per_seed_cpu_s[net] = 0.0
        for lhs, rhs, transposed in ms:
            shape = shapes[f"{lhs}x{rhs}{'^T' if transposed else ''}"]
            flops += steps * shape["flops"]
            floor_s += steps * shape["seconds"]
            per_seed_cpu_s[net] += steps // len(PUBLISHED_SEEDS) * shape["cpu_seconds"]
    return {
        "method": "the matmuls of forward and backward per step, from the layer shapes "
        "(elementwise ops, Adam and the batch gather not counted)",
        "shapes": shapes,
        "square_2048_gflops": square_gflops,
        "training_matmul_flops": flops,
        "floor_shapes_s": floor_s,
        "floor_per_seed_cpu_s": per_seed_cpu_s,
        "floor_square_s": flops / (square_gflops * 1e9),
        "floor_ratio": ours_s / floor_s,
        "floor_ratio_vs_square": ours_s / (flops / (square_gflops * 1e9)),
    }


# --------------------------------------------------------------------------- uncertainty


@full_precision
def _ensemble_steps(step: str, steps: int):
    dkey, tkey, bkey = root_keys(0)
    config = UncertaintyConfig(ensemble_steps=steps)
    return train_ensemble_loop(make_data(dkey), tkey, bkey, config, step=step)[1]


def bench_uncertainty(repeats: int, ensemble_steps: int) -> dict:
    orders = {
        impl: timed(lambda i=impl: run(0, implementation=i), repeats)
        for impl in ("scan", "faithful")
    }
    for impl, t in orders.items():
        print(f"  run(0, {impl!r})  {_fmt(t)}", flush=True)
    ensemble = {
        step: timed(lambda s=step: _ensemble_steps(s, ensemble_steps), 1)
        for step in ("replay", "eager")
    }
    for step, t in ensemble.items():
        print(f"  ensemble {step}, {ensemble_steps} steps  {_fmt(t)}", flush=True)
    per_step = {step: t["median_s"] / ensemble_steps for step, t in ensemble.items()}
    recipe_steps = UncertaintyConfig().ensemble_steps
    return {
        "orders": orders,
        "faithful_over_scan": orders["faithful"]["median_s"] / orders["scan"]["median_s"],
        "ensemble": {
            "method": f"train_ensemble_loop(step=...) on {ensemble_steps} steps, steady call; "
            f"x {recipe_steps / ensemble_steps:g} extrapolated to the recipe's {recipe_steps} steps",
            "steps_timed": ensemble_steps,
            "timings": ensemble,
            "replay_s_at_recipe": per_step["replay"] * recipe_steps,
            "eager_s_at_recipe": per_step["eager"] * recipe_steps,
            "eager_over_replay": per_step["eager"] / per_step["replay"],
        },
    }


def _mc_identical(many: list, single: list) -> bool:
    """Whether run_many's MC-Dropout outputs equal run()'s, bit for bit, for every key."""
    names = [n for n in single[0].as_arrays() if n.startswith("mc_")]
    return all(
        np.array_equal(m.as_arrays()[n], s.as_arrays()[n])
        for m, s in zip(many, single, strict=True)
        for n in names
    )


def bench_spread(counts: list[int], repeats: int) -> dict:
    keys = tuple(range(1, 21))
    out: dict = {}
    batched = timed(lambda: out.setdefault("many", run_many(keys, inputs_on=on_host)), repeats)
    print(f"  run_many(20 keys)  {_fmt(batched)}", flush=True)
    run(1)  # compile outside the timing: the 20 calls are steady calls
    sequential = timed(lambda: out.__setitem__("single", [run(k) for k in keys]), 0)
    print(f"  20 x run(scan)     {_fmt(sequential)}", flush=True)
    scaling = {}
    for n in counts:
        scaling[str(n)] = timed(
            lambda n=n: run_many(tuple(range(1, n + 1)), inputs_on=on_host), repeats
        )
        t = scaling[str(n)]
        print(f"  run_many({n} keys)  {_fmt(t)}  {t['median_s'] / n:.3f} s/key", flush=True)
    return {
        "keys": len(keys),
        "run_many": batched,
        "sequential": sequential,
        "spread_speedup": sequential["first_s"] / batched["median_s"],
        "spread_speedup_cpu": sequential["first_cpu_s"] / batched["median_cpu_s"],
        "mc_identical_to_run": _mc_identical(out["many"], out["single"]),
        "scaling": scaling,
        "floor": ensemble_matmul_floor(len(keys), sequential["first_s"]),
    }


def _hidden_width() -> int:
    return inspect.signature(GaussianMLP.__init__).parameters["hidden"].default


def ensemble_matmul_floor(keys: int, sequential_s: float) -> dict:
    """A lower bound on `run_many(keys)`: two of its costs that no reordering removes, each
    timed alone. The ensembles' hidden-layer matmuls (each net's forward h @ W, backward
    h.T @ g for dW and g @ W.T for dh, on the full batch, every step, stacked over all the
    nets) and their dropout draws (two [batch, hidden] masks per net and step, the recipe's
    bits, threefry lowered as the experiments lower it). The other layers (1 wide in or
    out), MC-Dropout and Adam are left out. `speedup_bound`: the `keys` `run` calls over
    the sum, the most `run_many` could gain were everything else free."""
    config = UncertaintyConfig()
    n, h, nets = 2 * N_PER_CLUSTER, _hidden_width(), keys * config.members
    shapes = [((n, h), (h, h), False), ((h, n), (n, h), False), ((n, h), (h, h), True)]
    per_net_step = sum(matmul_seconds(lhs, rhs, t, batch=nets) for lhs, rhs, t in shapes)
    matmul_s = per_net_step * nets * config.ensemble_steps
    flops = sum(_flops(lhs, rhs, t) for lhs, rhs, t in shapes) * nets * config.ensemble_steps
    draws_s = dropout_draw_seconds((nets, 2, n, h), config.dropout_rate, config.ensemble_steps)
    floor = matmul_s + draws_s
    print(
        f"  ensembles' hidden-layer matmuls alone: {matmul_s:.2f} s "
        f"({flops / matmul_s / 1e9:.0f} GFLOP/s); their dropout draws alone: {draws_s:.2f} s; "
        f"{keys} x run / (matmuls + draws) = {sequential_s / floor:.2f}",
        flush=True,
    )
    return {
        "method": "the ensembles' hidden-layer matmuls (forward, dW, dh; full batch; all nets "
        "stacked) and their dropout draws, every step, each timed alone; the other layers, "
        "MC-Dropout and Adam left out",
        "matmul_s": matmul_s,
        "matmul_gflops": flops / matmul_s / 1e9,
        "draws_s": draws_s,
        "floor_s": floor,
        "speedup_bound": sequential_s / floor,
    }


@full_precision  # threefry lowered as the experiments lower it (lib/numerics.py)
def dropout_draw_seconds(shape: tuple[int, ...], rate: float, steps: int) -> float:
    """Median seconds of `steps` draws of a dropout mask of `shape`, one key per step
    (each mask summed, so that XLA draws every element)."""

    def loop(key):
        def body(carry, i):
            keep = jax.random.bernoulli(jax.random.fold_in(key, i), 1.0 - rate, shape)
            return carry + jnp.sum(keep, dtype=jnp.int32), None  # uses every bit

        return jax.lax.scan(body, jnp.int32(0), jnp.arange(steps))[0]

    f = jax.jit(loop)
    return timed(lambda: f(jax.random.key(0)), 3)["median_s"]


def bench_sweep(split, seeds: int, keys: int, repeats: int, batch_mc: bool = False) -> dict:
    """`train_nets` on `seeds` seeds per net, `run_many` on `keys` root keys."""
    out: dict = {"seeds": seeds, "keys": keys, "batch_mc": batch_mc}
    seed_range = tuple(range(seeds))
    for net in NETS if seeds else ():
        t = timed(
            lambda n=net: train_nets(
                n, seed_range, split.train_x, split.train_y, inputs_on=on_host
            )[1],
            repeats,
        )
        out[f"calibration_{net}"] = t
        print(f"  train_nets({net}, {seeds} seeds)  {_fmt(t)}", flush=True)
    if seeds:
        out["calibration_first_s"] = max(out[f"calibration_{n}"]["first_s"] for n in NETS)
    if keys:
        t = timed(
            lambda: run_many(tuple(range(1, keys + 1)), batch_mc=batch_mc, inputs_on=on_host),
            repeats,
        )
        out["uncertainty"], out["uncertainty_first_s"] = t, t["first_s"]
        print(f"  run_many({keys} keys)  {_fmt(t)}", flush=True)
    if jax.default_backend() != "cpu":
        out["device_peak_bytes"] = (jax.devices()[0].memory_stats() or {}).get("peak_bytes_in_use")
    return out


@full_precision
def profile_run_many(keys: int) -> dict:
    """Where `run_many(keys)`'s time goes: drawing the inputs on the host, compiling its
    two programs, running them; and with the ensemble cut to one step (its cost is then
    the MC-Dropout nets'), with MC-Dropout cut to one step and one pass (the ensembles'), and
    the latter with dropout off (the ensembles' arithmetic without their dropout draws: the
    difference is what drawing the masks costs); and `run` of one key, the unit of a --seeds
    sweep's uncertainty runs."""
    config = UncertaintyConfig()
    seeds = tuple(range(1, keys + 1))
    host = []
    for _ in range(2):  # the first call compiles the initial weights' program
        start = time.perf_counter()
        _, inputs = experiment._inputs(seeds, [None] * keys, config)
        host.append(time.perf_counter() - start)
    # The first call compiles the two programs (side by side) and runs them: compiling is
    # what it takes beyond a second call.
    with ThreadPoolExecutor(max_workers=2) as pool:
        run_t = timed(
            lambda: experiment._runs(
                experiment._compile_runs(pool, keys, config, None, batch_mc=False), *inputs[2:]
            ),
            1,
        )
    compile_s = run_t["compile_s"]
    ensemble = dataclasses.replace(config, mc_steps=1, mc_samples=1)
    parts = {
        "mc_dropout": dataclasses.replace(config, ensemble_steps=1),
        "ensemble": ensemble,
        "ensemble_no_dropout": dataclasses.replace(ensemble, dropout_rate=0.0),
    }
    out = {"keys": keys, "load_before": _load(), "host_inputs_s": host, "compile_s": compile_s}
    out["run"] = run_t
    for part, c in parts.items():
        out[part] = timed(lambda c=c: run_many(seeds, config=c, inputs_on=on_host), 1)
    # One key alone, as `uncertainty_result(key, "scan")` runs each key of a --seeds sweep.
    out["run_one_key"] = timed(lambda: run(1), 1)
    out["load_after"] = _load()
    print(
        f"  run_many({keys}) profile: host inputs {host[0]:.2f} s (again {host[1]:.2f} s), "
        f"compile {compile_s:.2f} s, "
        f"run {run_t['median_s']:.2f} s; MC-Dropout alone {out['mc_dropout']['median_s']:.2f} s, "
        f"ensembles alone {out['ensemble']['median_s']:.2f} s (cpu "
        f"{out['ensemble']['median_cpu_s']:.2f} s; dropout off: cpu "
        f"{out['ensemble_no_dropout']['median_cpu_s']:.2f} s); run(1) alone "
        f"{out['run_one_key']['median_s']:.2f} s",
        flush=True,
    )
    return out


# --------------------------------------------------------------------------- pytest runs


def _descendants(pid: int) -> list[int]:
    out, frontier = [], [pid]
    while frontier:
        try:
            children = Path(f"/proc/{frontier.pop()}/task").glob("*/children")
            found = [int(c) for path in children for c in path.read_text().split()]
        except OSError:
            continue
        out += found
        frontier += found
    return out


def _peak_rss_kb(pid: int) -> int:
    try:
        match = re.search(r"VmHWM:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    except OSError:
        return 0
    return int(match.group(1)) if match else 0


def pytest_run(args: list[str], cache: Path, report: Path, cpu_split: bool = False) -> dict:
    """One pytest run on the result and compiled-program caches under `cache`: wall time,
    CPU time of the process tree, peak RSS of each process, load before and after; with
    `cpu_split`, where its CPU seconds went (`split_cpu`)."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        *args,
        "-p",
        "no:cacheprovider",
        "-p",
        "no:benchmark",
    ]
    command += ["-q", f"--report-dir={report}"]
    # Results and compiled programs both under `cache` (lib/placement/_compile_cache.py keeps programs in
    # CLAIMS_CACHE_DIR/jax-programs unless a parent's CLAIMS_COMPILATION_CACHE_DIR says otherwise).
    inherited = {k: v for k, v in os.environ.items() if k != "CLAIMS_COMPILATION_CACHE_DIR"}
    env = {**inherited, "CLAIMS_CACHE_DIR": str(cache)}
    records = cache.parent / "audit-cpu"
    if cpu_split:
        command += ["-p", "audit_cpu"]
        path = os.pathsep.join(filter(None, [str(REPO / "scripts"), env.get("PYTHONPATH")]))
        env |= {"PYTHONPATH": path, "AUDIT_CPU_OUT": str(records)}
    load, children = _load(), resource.getrusage(resource.RUSAGE_CHILDREN)
    peaks: dict[int, int] = {}
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(proc.stdout), daemon=True)
    reader.start()
    while proc.poll() is None:
        for pid in [proc.pid, *_descendants(proc.pid)]:
            peaks[pid] = max(peaks.get(pid, 0), _peak_rss_kb(pid))
        time.sleep(0.1)
    wall = time.perf_counter() - start
    reader.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    summary = next(
        (line.strip() for line in reversed(output) if re.search(r" in [\d.]+s", line)), ""
    )
    try:  # what the run computed and how long each took (the report's cache events)
        events = json.loads((report / "audit.json").read_text())["metadata"]["cache"]["events"]
    except (OSError, KeyError, ValueError):
        events = []
    out = {
        "wall_s": wall,
        "cpu_s": after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime,
        "exit_code": proc.returncode,
        "summary": summary,
        "peak_rss_mb": max(peaks.values(), default=0) / 1024,
        "computed": [e for e in events if e["status"] != "hit"],
        "load_before": load,
        "load_after": _load(),
    }
    if cpu_split:
        found = [json.loads(path.read_text()) for path in sorted(records.glob("*.json"))]
        out["cpu_split"] = split_cpu(out["cpu_s"], found)
    return out


def split_cpu(total_s: float, processes: list[dict]) -> dict:
    """The run's CPU seconds (`total_s`, its whole process tree) split by what the processes'
    scripts/audit_cpu.py records say ran: training, compiling, the processes the tests
    started (children), and the rest (start-up, collection, evaluation, judging, resampling,
    rendering; the run's own CPU outside the plugin's samples)."""
    sampled = Counter[str]()
    for record in processes:
        sampled.update(record["sampled_cpu_s"])
    training = {recipe: sampled[f"training {recipe}"] for recipe in ("calibration", "uncertainty")}
    parts = {
        "training_s": sum(training.values()),
        "compiling_s": sampled["compiling"],
        "child_processes_s": sum(record["children_cpu_s"] for record in processes),
    }
    return {
        "total_s": total_s,
        **parts,
        "rest_s": total_s - sum(parts.values()),
        "training_by_recipe_s": training,
        "compile_wall_s": sum(record["compile_wall_s"] for record in processes),
        "compiles": sum(record["compiles"] for record in processes),
        "processes": len(processes),
        "method": "CPU seconds of the run's process tree; each pytest process samples its CPU "
        "every 0.2 s (scripts/audit_cpu.py): compiling while XLA compiled (at most a core per "
        "compile running; JAX's monitoring events), training while a thread was in a recipe's "
        "training function, child processes from getrusage(RUSAGE_CHILDREN) of the test "
        "processes, the rest the remainder",
    }


def calibration_training_floor(computed: list[dict], per_seed_s: dict[str, float]) -> dict:
    """The matmul floor of the calibration nets a run trained (its computed cache entries:
    the faithful and scan orders on the published seeds, and the twin batches), from each
    net's floor per seed (`per_seed_s`)."""
    nets = Counter[str]()
    for event in computed:
        found = re.fullmatch(r"calibration-(\w+?)(-scan_vmap|-twins-\d+)?", event["entry"])
        if found and found[1] in per_seed_s:
            twins = TWIN_BATCH if (found[2] or "").startswith("-twins") else 1
            nets[found[1]] += twins * len(PUBLISHED_SEEDS)
    return {
        "nets_trained": dict(nets),
        "floor_s": sum(n * per_seed_s[net] for net, n in nets.items()),
    }


def cold_and_warm(args: list[str], warm: bool = True, cpu_split: bool = False) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-pytest-") as tmp:
        cache, report = Path(tmp, "cache"), Path(tmp, "report")
        runs = {"cold": pytest_run(args, cache, report, cpu_split)}
        print(f"  cold  {runs['cold']['wall_s']:.1f} s  {runs['cold']['summary']}", flush=True)
        if warm:
            runs["warm"] = pytest_run(args, cache, report)
            print(f"  warm  {runs['warm']['wall_s']:.1f} s  {runs['warm']['summary']}", flush=True)
    return {
        "command": f"pytest {' '.join(args)} -p no:cacheprovider -p no:benchmark -q, "
        "CLAIMS_CACHE_DIR (results and compiled programs) in a new temporary folder (cold), "
        "then again on what it stored (warm)",
        **runs,
        **{f"{kind}_s": r["wall_s"] for kind, r in runs.items()},
        "peak_rss_mb": max(r["peak_rss_mb"] for r in runs.values()),
    }


def print_cpu_split(cold: dict, per_seed_s: dict[str, float]) -> None:
    """Add the calibration training's floor to the cold run's CPU split, and print it."""
    split = cold["cpu_split"]
    split["calibration_floor"] = calibration_training_floor(cold["computed"], per_seed_s)
    floor_s = split["calibration_floor"]["floor_s"]
    calibration_s = split["training_by_recipe_s"]["calibration"]
    split["calibration_over_floor"] = calibration_s / floor_s if floor_s else None
    print(f"  cold audit, CPU seconds of its processes: {split['total_s']:.1f}")
    for name in ("training_s", "compiling_s", "child_processes_s", "rest_s"):
        share = split[name] / split["total_s"] if split["total_s"] else float("nan")
        print(
            f"    {name.removesuffix('_s').replace('_', ' '):16s} {split[name]:7.1f}  {share:4.0%}"
        )
    nets = split["calibration_floor"]["nets_trained"]
    print(
        f"    of the training: calibration {calibration_s:.1f} ({sum(nets.values())} nets; "
        f"matmul floor {floor_s:.1f} CPU s), uncertainty "
        f"{split['training_by_recipe_s']['uncertainty']:.1f}",
        flush=True,
    )


# --------------------------------------------------------------------------- scripts

# The calibration post's script is not published with it: its recipe in the post's own order
# (the faithful one, docs/RECIPES.md), both nets on seeds 0-2, trained and evaluated, stands in.
CALIBRATION_SCRIPT = """
from uncertainty_claims.calibration.experiment import NETS, PUBLISHED_SEEDS, train_faithful
for net in NETS:
    train_faithful(net, PUBLISHED_SEEDS)
"""


def timed_process(argv: list[str]) -> float:
    """Wall seconds of `argv` in a fresh process, start to exit, on empty caches."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_CACHE_DIR")}
    with tempfile.TemporaryDirectory(prefix="bench-script-") as tmp:
        env["CLAIMS_CACHE_DIR"] = tmp
        start = time.perf_counter()
        subprocess.run(argv, cwd=REPO, env=env, check=True, stdout=subprocess.DEVNULL)
        return time.perf_counter() - start


def bench_scripts(workers: str) -> dict:
    """The cold audit against the documents' own two scripts, one after the other in one
    sitting on this machine (`scripts.audit_over_scripts` bounds the audit's cost over both)."""
    calibration_s = timed_process([sys.executable, "-c", CALIBRATION_SCRIPT])
    print(f"  calibration post's recipe, faithful order  {calibration_s:.1f} s", flush=True)
    guide_s = timed_process([sys.executable, "-m", "uncertainty_claims.uncertainty.timing"])
    print(f"  the guide's example, whole                  {guide_s:.1f} s", flush=True)
    audit = cold_and_warm(["claims", "-n", workers, "-m", "claim or health"], warm=False)
    return {
        "calibration_script_s": calibration_s,
        "guide_script_s": guide_s,
        "audit_cold_s": audit["cold_s"],
        "audit_over_scripts": audit["cold_s"] / (calibration_s + guide_s),
        "method": "each script in a fresh process on empty caches, then the cold audit "
        "(pytest claims -m 'claim or health'), one after the other",
    }


# --------------------------------------------------------------------------- report


def verdicts(report: dict) -> dict[str, dict]:
    out = {}
    for name, (op, bound) in TARGETS.items():
        if name == "audit.cold_s" and report["machine"]["backend"] != "cpu":
            bound = GPU_COLD_AUDIT_S
        size = report.get("sweep", {}).get("seeds" if "calibration" in name else "keys", 0)
        if name.startswith("sweep.") and size < SWEEP_TARGET_SIZE:
            continue  # the targets are about 1,000 seeds (keys)
        value: object = report
        for part in name.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        met = None if value is None else (value >= bound if op == ">=" else value <= bound)
        out[name] = {"value": value, "target": f"{op} {bound:g}", "met": met}
    return out


def write_json(report: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as handle:
            json.dump(report, handle, indent=1)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _sections(text: str) -> list[str]:
    names = [s.strip() for s in text.split(",") if s.strip()]
    unknown = sorted(set(names) - set(SECTIONS))
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown sections {unknown}; choose from {', '.join(SECTIONS)}"
        )
    return names


def _counts(text: str) -> list[int]:
    try:
        counts = [int(c) for c in text.split(",") if c.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected counts like 40,100; got {text!r}") from None
    if any(c < 1 for c in counts):
        raise argparse.ArgumentTypeError(f"counts must be positive; got {text!r}")
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", type=_sections, default=[s for s in SECTIONS if s != "sweep"])
    parser.add_argument("--repeats", type=int, default=1, help="steady calls after the first")
    parser.add_argument("--ensemble-steps", type=int, default=50, help="ensemble steps timed")
    parser.add_argument("--spread-keys", type=_counts, default=[], help="more run_many counts")
    parser.add_argument("--seeds", type=int, default=1000, help="sweep: seeds per net (0: skip)")
    parser.add_argument("--keys", type=int, default=1000, help="sweep: root keys (0: skip)")
    parser.add_argument(
        "--profile-keys", type=int, default=0, help="sweep: profile run_many on this many keys"
    )
    parser.add_argument(
        "--batch-mc", action="store_true", help="sweep: run_many's MC-Dropout nets batched"
    )
    parser.add_argument("--workers", default="auto", help="pytest-xdist workers of audit/suite")
    parser.add_argument("--no-warm", action="store_true", help="audit/suite: the cold run only")
    parser.add_argument("--out", type=Path, default=REPO / "report" / "bench.json")
    args = parser.parse_args()
    request_deterministic_gpu_ops()  # as the pytest plugin does: the same programs
    report: dict = {"machine": machine(), "sections": args.only}
    print(f"machine: {report['machine']}, load {_load()}", flush=True)
    split = load_split() if {"calibration", "sweep"} & set(args.only) else None
    for section in args.only:
        print(f"{section} ...", flush=True)
        if section == "calibration":
            report[section] = bench_calibration(split, args.repeats)
        elif section == "floor":
            ours = report.get("calibration", {}).get("ours", {}).get("median_s")
            report[section] = bench_floor(ours if ours else float("nan"))
            report.setdefault("calibration", {}).update(
                {k: report[section][k] for k in ("floor_ratio", "floor_ratio_vs_square")}
            )
        elif section == "uncertainty":
            report[section] = bench_uncertainty(args.repeats, args.ensemble_steps)
        elif section == "spread":
            spread = bench_spread(args.spread_keys, args.repeats)
            report.setdefault("uncertainty", {})["spread"] = spread
            report["uncertainty"]["spread_speedup"] = spread["spread_speedup"]
        elif section == "audit":
            floor = report.get("floor") or bench_floor(float("nan"))  # before the run, alone
            report[section] = cold_and_warm(
                ["claims", "-n", args.workers, "-m", "claim or health"],
                not args.no_warm,
                cpu_split=True,
            )
            print_cpu_split(report[section]["cold"], floor["floor_per_seed_cpu_s"])
        elif section == "suite":
            report[section] = cold_and_warm(
                ["claims", "tests", "-n", args.workers], not args.no_warm
            )
        elif section == "scripts":
            report[section] = bench_scripts(args.workers)
        elif section == "sweep":
            report[section] = bench_sweep(split, args.seeds, args.keys, args.repeats, args.batch_mc)
            if args.profile_keys:
                report[section]["profile"] = profile_run_many(args.profile_keys)
        write_json(report, args.out)  # what is measured so far survives a later failure
    report["targets"] = verdicts(report)
    print(f"\n{'target':34s} {'measured':>10s} {'target':>9s}  verdict")
    for name, v in report["targets"].items():
        if v["value"] is not None:
            verdict = "met" if v["met"] else "NOT met"
            print(f"{name:34s} {v['value']:10.2f} {v['target']:>9s}  {verdict}")
    write_json(report, args.out)
    print(f"\nwrote {args.out}")


# --------------------------------------------------------------------------- device table


def _audit_command(text: str) -> str:
    """The audit's command as a user types it, from a record's `command`: bench.py's own
    records add its plugin switches, -q and a sentence on the caches, and join unquoted."""
    command = text.split(",", 1)[0].replace(" -p no:cacheprovider -p no:benchmark -q", "")
    return re.sub(r'-m (?!")(.+)$', r'-m "\1"', command)


def _device(machine: dict) -> str:
    if machine["backend"] == "cpu":
        return f"{machine['cores']}-core CPU ({machine.get('cpu', 'model not recorded')})"
    return f"{machine['devices']} x {machine['device_kind']}, {machine['cores']} host cores"


def device_row(path: Path) -> str:
    """One markdown row (device, command, cold s, warm s) from a bench JSON file: bench.py's
    own (`--only audit`) or device_bench.sh's bench-gpu.json (the audit under `parts`)."""
    try:
        report = json.loads(path.read_text())
        machine = report["machine"]
        audit = report["parts"]["audit"]["audit"] if "parts" in report else report["audit"]
        command, cold = _audit_command(audit["command"]), audit["cold_s"]
        device = _device(machine)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(
            f"{path}: not a bench record with a machine and a cold audit ({error!r})"
        ) from None
    warm = audit.get("warm_s")
    warm_text = "not measured" if warm is None else f"{warm:.0f}"
    return f"| {device} | `{command}` | {cold:.0f} | {warm_text} |"


def device_table(paths: list[Path]) -> str:
    """The accelerator runs' table of docs/GPU.md: one row per bench JSON file, in order."""
    header = "| device | command | cold s | warm s |\n|---|---|---|---|"
    return "\n".join([header, *(device_row(path) for path in paths)])


def device_table_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=device_table.__doc__)
    parser.add_argument("--device-table", nargs="+", type=Path, required=True, metavar="FILE")
    args = parser.parse_args(argv)
    try:
        print(device_table(args.device_table))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    if "--device-table" in sys.argv[1:]:
        sys.exit(device_table_main(sys.argv[1:]))
    main()
