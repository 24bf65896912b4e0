"""Benchmark the suite's fast paths against the documents' per-step loops, the matmul floor and the suite.

Everything is measured in this one process run, on this machine, side by side:

- calibration: `train_nets` (one lax.scan per net, seeds vmapped; the two nets side by
  side in threads, as the suite trains them) against `train_net_per_step` (a Python loop
  over a jitted step, one net after the other), all six nets (3 seeds x 2), same recipe
  and data; per-seed test accuracy of the two must agree within 1 point.
- uncertainty: `run(0, implementation="scan")` against `"loop"` (must be bit-identical),
  and the 20-rerun spread as one program (`run_many`) against 20 sequential `run` calls.
- floor: matmul throughput on the recipe's layer shapes (forward and backward, alone and
  3 stacked as under the vmap over seeds) and on a 2048^2 float32 matmul; the
  calibration training's matmul FLOPs, counted analytically from the shapes (XLA's cost
  analysis of one step is reported beside, as a cross-check). `floor_ratio` = our
  steady time / the time those matmuls take at the rate measured on their own shapes;
  `floor_ratio_vs_square` = the same against the 2048^2 rate, the machine's peak.
- suite: `pytest claims -n auto` cold (empty temporary cache) and warm (same cache
  again), wall time and peak RSS of every worker.

A figure's "first" call includes tracing and XLA compilation; "steady" is the median of
the repeats after it; compile is estimated as first minus steady. Other jobs on the
machine inflate wall times: the load average is recorded beside each section.

    .venv/bin/python scripts/bench.py [--skip-suite] [--repeats 3] [--out report/bench.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from lib.calibration.experiment import NETS, PUBLISHED_SEEDS, load_split
from lib.calibration.training import TrainConfig, train_net_per_step, train_nets
from lib.uncertainty.experiment import run, run_many

REPO = Path(__file__).resolve().parent.parent
TARGETS = {
    "calibration.speedup_vs_loop": (">=", 4.0),
    "calibration.floor_ratio": ("<=", 2.5),
    "calibration.floor_ratio_vs_square": ("<=", 2.5),
    "uncertainty.speedup_vs_loop": (">=", 20.0),
    "suite.cold_s": ("<=", 45.0),
    "suite.warm_s": ("<=", 10.0),
    "suite.peak_rss_mb": ("<=", 3072.0),
}


def _cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.machine()
    match = re.search(r"model name\s*:\s*(.+)", text)
    return match.group(1).strip() if match else platform.machine()


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def timed(fn: Callable[[], object], repeats: int) -> dict:
    """First call (with compilation) and `repeats` steady calls of `fn`, in seconds."""
    start = time.perf_counter()
    jax.block_until_ready(fn())
    first = time.perf_counter() - start
    steady = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        steady.append(time.perf_counter() - start)
    median = statistics.median(steady) if steady else first
    return {
        "first_s": first,
        "steady_s": steady,
        "median_s": median,
        "compile_s": max(first - median, 0.0),
    }


# --------------------------------------------------------------------------- calibration


def _accuracy(model, images: np.ndarray, labels: np.ndarray) -> float:
    logits = jax.jit(lambda x: model(x))(jnp.asarray(images))
    return float(np.mean(np.asarray(logits).argmax(-1) == labels))


def _bench_net(net: str, split, repeats: int, baseline_repeats: int) -> tuple[dict, dict, list]:
    """Timings of both paths for one net on the published seeds, and per-seed accuracies."""
    trained = {}

    def ours():
        trained["ours"] = train_nets(net, PUBLISHED_SEEDS, split.train_x, split.train_y)[0]

    def loop():
        trained["loop"] = [
            train_net_per_step(net, s, split.train_x, split.train_y)[0] for s in PUBLISHED_SEEDS
        ]

    ours_t = timed(ours, repeats)
    print(f"  {net} ours   {_fmt(ours_t)}", flush=True)
    loop_t = timed(loop, baseline_repeats)
    print(f"  {net} loop   {_fmt(loop_t)}", flush=True)
    accuracy = []
    for seed, a, b in zip(PUBLISHED_SEEDS, trained["ours"], trained["loop"], strict=True):
        acc = {k: _accuracy(m, split.test_x, split.test_y) for k, m in (("ours", a), ("loop", b))}
        accuracy.append({"seed": seed, **acc, "diff_pt": 100 * abs(acc["ours"] - acc["loop"])})
    return ours_t, loop_t, accuracy


def bench_calibration(repeats: int, baseline_repeats: int) -> dict:
    split = load_split()
    ours, loop, accuracy = {}, {}, {}
    for net in NETS:
        ours[net], loop[net], accuracy[net] = _bench_net(net, split, repeats, baseline_repeats)
    worst = max(row["diff_pt"] for rows in accuracy.values() for row in rows)
    side_by_side = timed(lambda: _train_side_by_side(split), repeats)
    print(f"  both nets side by side {_fmt(side_by_side)}", flush=True)
    ours_s = side_by_side["median_s"]
    loop_s = sum(t["median_s"] for t in loop.values())
    return {
        "nets": len(NETS) * len(PUBLISHED_SEEDS),
        "steps_per_net": len(_steps()),
        "ours": ours,
        "loop": loop,
        "ours_side_by_side": side_by_side,
        "ours_one_net_at_a_time_s": sum(t["median_s"] for t in ours.values()),
        "ours_steady_s": ours_s,
        "loop_steady_s": loop_s,
        "speedup_vs_loop": loop_s / ours_s,
        "accuracy": accuracy,
        "accuracy_max_diff_pt": worst,
        "accuracy_agrees": worst <= 1.0,
    }


def _train_side_by_side(split) -> list:
    """Both nets at once, in threads, as `lib.calibration.experiment.run_nets` trains them."""
    with ThreadPoolExecutor(max_workers=len(NETS)) as pool:
        jobs = [
            pool.submit(train_nets, net, PUBLISHED_SEEDS, split.train_x, split.train_y)
            for net in NETS
        ]
        return [job.result() for job in jobs]


def _steps() -> range:
    config = TrainConfig()
    per_epoch = len(range(0, 55_000 - config.batch_size, config.batch_size))
    return range(config.epochs * per_epoch)


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


def _name(lhs: tuple[int, int], rhs: tuple[int, int], transposed: bool) -> str:
    return f"{lhs}x{rhs}{'^T' if transposed else ''}"


def _flops(lhs: tuple[int, int], rhs: tuple[int, int], transposed: bool) -> int:
    n = rhs[0] if transposed else rhs[1]
    return 2 * lhs[0] * lhs[1] * n


def matmul_seconds(
    lhs: tuple[int, int],
    rhs: tuple[int, int],
    transposed: bool,
    repeats: int,
    *,
    batch: int | None = None,
    inner: int = 100,
) -> float:
    """Median seconds of one float32 matmul of these shapes, per matrix pair.

    `inner` matmuls run in one lax.scan. Each adds the previous result's first entry
    (times 0) to its right operand, a cheap dependency that stops XLA from hoisting the
    matmul out of the loop. `batch` stacks that many pairs, as the vmap over seeds does.
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
    return timed(lambda: f(a, b), repeats)["median_s"] / inner / (batch or 1)


def bench_floor(calibration: dict, repeats: int) -> dict:
    shapes = {}
    for lhs, rhs, transposed in sorted({m for ms in STEP_MATMULS.values() for m in ms}):
        single = matmul_seconds(lhs, rhs, transposed, repeats)
        batched = matmul_seconds(lhs, rhs, transposed, repeats, batch=len(PUBLISHED_SEEDS))
        flops = _flops(lhs, rhs, transposed)
        shapes[_name(lhs, rhs, transposed)] = {
            "flops": flops,
            "gflops_single": flops / single / 1e9,
            "gflops_batched_3": flops / batched / 1e9,
            "seconds": min(single, batched),  # the floor takes the faster of the two
        }
    n = 2048
    square = jax.random.normal(jax.random.key(1), (n, n), jnp.float32)
    matmul = jax.jit(jnp.matmul)
    square_s = timed(lambda: matmul(square, square), repeats)["median_s"]
    square_gflops = 2 * n**3 / square_s / 1e9

    steps = calibration["nets"] // len(NETS) * len(_steps())  # training steps of each net kind
    flops = floor_s = 0.0
    for ms in STEP_MATMULS.values():
        for lhs, rhs, transposed in ms:
            shape = shapes[_name(lhs, rhs, transposed)]
            flops += steps * shape["flops"]
            floor_s += steps * shape["seconds"]
    ours_s = calibration["ours_steady_s"]
    return {
        "method": "analytic: the matmuls of forward and backward per step from the layer "
        "shapes (elementwise ops, Adam and the batch gather not counted)",
        "xla_cost_analysis_step_flops": _xla_step_flops(),
        "shapes": shapes,
        "square_2048_gflops": square_gflops,
        "training_matmul_flops": flops,
        "floor_shapes_s": floor_s,
        "floor_square_s": flops / (square_gflops * 1e9),
        "floor_ratio": ours_s / floor_s,
        "floor_ratio_vs_square": ours_s / (flops / (square_gflops * 1e9)),
    }


def _xla_step_flops() -> dict[str, float]:
    """XLA's own count for one training step of one net (cross-check; includes elementwise)."""
    import optax
    from flax import nnx

    from lib.calibration.models import build_model
    from lib.calibration.training import _cross_entropy

    images = np.zeros((1000, 784), np.float32)
    out = {}
    for net in NETS:
        graphdef, params = nnx.split(build_model(net, 0, images))
        tx = optax.adam(4e-3)

        def step(params, opt_state, x, y, graphdef=graphdef, tx=tx):
            grads = jax.grad(lambda p: _cross_entropy(nnx.merge(graphdef, p), x, y))(params)
            updates, opt_state = tx.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state

        args = (params, tx.init(params), jnp.zeros((256, 784)), jnp.zeros(256, jnp.int32))
        cost = jax.jit(step).lower(*args).compile().cost_analysis()
        cost = cost[0] if isinstance(cost, list) else cost
        out[net] = float(cost.get("flops", float("nan")))
    return out


# --------------------------------------------------------------------------- uncertainty


def bench_uncertainty(repeats: int) -> dict:
    results = {}

    def call(implementation: str):
        results[implementation] = run(0, implementation=implementation)

    scan = timed(lambda: call("scan"), repeats)
    print(f"  run(0) scan  {_fmt(scan)}", flush=True)
    loop = timed(lambda: call("loop"), repeats)
    print(f"  run(0) loop  {_fmt(loop)}", flush=True)
    a, b = results["scan"].as_arrays(), results["loop"].as_arrays()
    identical = all(np.array_equal(a[k], b[k]) for k in a)

    seeds = tuple(range(1, 21))
    many = {}

    def batched():
        many["results"] = run_many(seeds)

    batched_t = timed(batched, 1)
    print(f"  spread, run_many(20)    {_fmt(batched_t)}", flush=True)
    start = time.perf_counter()
    sequential = [run(s) for s in seeds]
    sequential_s = time.perf_counter() - start
    print(f"  spread, 20 x run        {sequential_s:.2f} s (compiled)", flush=True)
    spread_diff = {}
    for r, s in zip(many["results"], sequential, strict=True):
        for name, a in r.as_arrays().items():
            diff = np.max(np.abs(np.float64(a) - np.float64(s.as_arrays()[name])), initial=0)
            spread_diff[name] = max(spread_diff.get(name, 0.0), float(diff))
    return {
        "scan": scan,
        "loop": loop,
        "speedup_vs_loop": loop["median_s"] / scan["median_s"],
        "identical": identical,
        "spread": {
            "runs": len(seeds),
            "run_many": batched_t,
            "sequential_compiled_s": sequential_s,
            "speedup": sequential_s / batched_t["median_s"],
            "max_abs_diff_vs_run": spread_diff,
        },
    }


# --------------------------------------------------------------------------- suite


def _descendants(pid: int) -> list[int]:
    out, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        try:
            children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
        except OSError:
            continue
        out += [int(c) for c in children]
        frontier += [int(c) for c in children]
    return out


def _proc_status(pid: int) -> tuple[int, str] | None:
    """(VmHWM in kB, command line) of a live process, or None."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return None
    match = re.search(r"VmHWM:\s+(\d+) kB", status)
    return (int(match.group(1)), cmdline) if match else None


def run_suite(cache_dir: Path, report_dir: Path) -> dict:
    """One `pytest claims -n auto`, polling every descendant's peak RSS (VmHWM) meanwhile."""
    command = [sys.executable, "-m", "pytest", "claims", "-n", "auto", "-p", "no:cacheprovider"]
    command += ["-q", "--report-dir", str(report_dir)]
    # Cold means no stored results and no stored compiled programs (lib/compile_cache.py
    # puts those under CLAIMS_CACHE_DIR/xla unless told otherwise).
    inherited = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("JAX_") and k != "CLAIMS_COMPILATION_CACHE_DIR"
    }
    env = {**inherited, "CLAIMS_CACHE_DIR": str(cache_dir)}
    peaks: dict[int, tuple[int, str]] = {}
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(proc.stdout), daemon=True)
    reader.start()
    while proc.poll() is None:
        for pid in [proc.pid, *_descendants(proc.pid)]:
            status = _proc_status(pid)
            if status and status[0] >= peaks.get(pid, (0, ""))[0]:
                peaks[pid] = status
        time.sleep(0.1)
    wall = time.perf_counter() - start
    reader.join()
    workers = {pid: kb for pid, (kb, cmd) in peaks.items() if "sys.stdin.readline" in cmd}
    others = {pid: kb for pid, (kb, cmd) in peaks.items() if pid != proc.pid and pid not in workers}
    summary = next(
        (line.strip() for line in reversed(output) if re.search(r"\d+ passed.* in [\d.]+s", line)),
        "",
    )
    return {
        "wall_s": wall,
        "exit_code": proc.returncode,
        "summary": summary,
        "controller_peak_rss_mb": peaks.get(proc.pid, (0, ""))[0] / 1024,
        "worker_peak_rss_mb": sorted(kb / 1024 for kb in workers.values()),
        "other_descendants_peak_rss_mb": max(others.values(), default=0) / 1024,
    }


def bench_suite() -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as tmp:
        cache, report = Path(tmp, "cache"), Path(tmp, "report")
        cold = run_suite(cache, report)
        print(f"  cold  {cold['wall_s']:.1f} s  {cold['summary']}", flush=True)
        warm = run_suite(cache, report)
        print(f"  warm  {warm['wall_s']:.1f} s  {warm['summary']}", flush=True)
    peak = max(cold["worker_peak_rss_mb"] + warm["worker_peak_rss_mb"], default=0.0)
    return {
        "command": "pytest claims -n auto -p no:cacheprovider -q --report-dir TMP, "
        "CLAIMS_CACHE_DIR=TMP (results and compiled programs; empty for cold, reused for warm)",
        "rss_method": "/proc/<pid>/status VmHWM of the pytest process and every descendant, "
        "polled every 0.1 s; xdist workers are the execnet children",
        "cold": cold,
        "warm": warm,
        "cold_s": cold["wall_s"],
        "warm_s": warm["wall_s"],
        "peak_rss_mb": peak,
    }


# --------------------------------------------------------------------------- report


def _fmt(t: dict) -> str:
    return f"first {t['first_s']:7.2f} s | steady {t['median_s']:7.2f} s | compile ~{t['compile_s']:5.2f} s"


def _lookup(report: dict, dotted: str):
    value = report
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def verdicts(report: dict) -> dict[str, dict]:
    out = {}
    for name, (op, bound) in TARGETS.items():
        value = _lookup(report, name)
        met = None if value is None else (value >= bound if op == ">=" else value <= bound)
        out[name] = {"value": value, "target": f"{op} {bound:g}", "met": met}
    return out


def print_table(report: dict) -> None:
    cal, unc, floor = report["calibration"], report["uncertainty"], report["floor"]
    rows = [
        ("calibration, ours (train_nets, nets side by side), 6 nets", cal["ours_steady_s"]),
        ("calibration, per-step loop, 6 nets", cal["loop_steady_s"]),
        ("calibration, matmul floor (recipe shapes)", floor["floor_shapes_s"]),
        ("calibration, matmul floor (2048^2 rate)", floor["floor_square_s"]),
        ("uncertainty run(0), scan", unc["scan"]["median_s"]),
        ("uncertainty run(0), loop", unc["loop"]["median_s"]),
        ("uncertainty spread, run_many(20)", unc["spread"]["run_many"]["median_s"]),
        ("uncertainty spread, 20 x run", unc["spread"]["sequential_compiled_s"]),
    ]
    if "suite" in report:
        rows += [
            ("suite cold", report["suite"]["cold_s"]),
            ("suite warm", report["suite"]["warm_s"]),
        ]
    print(f"\n{'steady-state wall time':48s} {'seconds':>9s}")
    for name, seconds in rows:
        print(f"{name:48s} {seconds:9.2f}")
    print(f"\nmatmul throughput (GFLOP/s): 2048^2 {floor['square_2048_gflops']:.1f}; recipe shapes")
    print(f"  {'shape':32s} {'single':>7s} {'3 stacked':>9s}")
    for name, shape in floor["shapes"].items():
        print(f"  {name:32s} {shape['gflops_single']:7.1f} {shape['gflops_batched_3']:9.1f}")
    print(
        f"our time / matmul floor: {floor['floor_ratio']:.2f} at the recipe shapes' rates, "
        f"{floor['floor_ratio_vs_square']:.2f} at the 2048^2 rate"
    )
    print(
        f"calibration accuracy, ours vs loop: max |diff| {cal['accuracy_max_diff_pt']:.2f} pt "
        f"over 6 nets -> {'agree' if cal['accuracy_agrees'] else 'DISAGREE'} (<= 1 pt)"
    )
    print(f"uncertainty scan vs loop bit-identical: {unc['identical']}")
    moved = {k: v for k, v in unc["spread"]["max_abs_diff_vs_run"].items() if v}
    print(
        "uncertainty run_many(20) vs 20 x run: bit-identical except "
        + (", ".join(f"{k} (max |diff| {v:.2g})" for k, v in moved.items()) or "nothing")
    )
    print(f"\n{'target':32s} {'measured':>10s} {'target':>9s}  verdict")
    for name, v in report["targets"].items():
        value = "-" if v["value"] is None else f"{v['value']:.2f}"
        verdict = {True: "met", False: "NOT met", None: "skipped"}[v["met"]]
        print(f"{name:32s} {value:>10s} {v['target']:>9s}  {verdict}")


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-suite", action="store_true", help="skip the pytest timings")
    parser.add_argument("--repeats", type=int, default=3, help="steady repeats of the fast paths")
    parser.add_argument(
        "--baseline-repeats", type=int, default=1, help="steady repeats of the per-step loops"
    )
    parser.add_argument("--out", type=Path, default=REPO / "report" / "bench.json")
    args = parser.parse_args()
    report: dict = {
        "machine": {
            "cpu_count": os.cpu_count(),
            "cpu": _cpu_model(),
            "jax": jax.__version__,
            "backend": jax.default_backend(),
            "devices": [str(d) for d in jax.devices()],
            "python": platform.python_version(),
        },
        "load_average": {"start": _load()},
    }
    print("calibration ...", flush=True)
    report["calibration"] = bench_calibration(args.repeats, args.baseline_repeats)
    report["load_average"]["after_calibration"] = _load()
    print("floor ...", flush=True)
    report["floor"] = bench_floor(report["calibration"], args.repeats)
    for name in ("floor_ratio", "floor_ratio_vs_square"):
        report["calibration"][name] = report["floor"][name]
    print("uncertainty ...", flush=True)
    report["uncertainty"] = bench_uncertainty(args.repeats)
    report["load_average"]["after_uncertainty"] = _load()
    if not args.skip_suite:
        print("suite ...", flush=True)
        report["suite"] = bench_suite()
        report["load_average"]["after_suite"] = _load()
    report["targets"] = verdicts(report)
    print_table(report)
    write_json(report, args.out)
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()
