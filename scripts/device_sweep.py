"""A seed sweep on whatever devices JAX sees, split over them (lib/sharding.py), timed.

Trains the calibration nets on `--seeds` and the uncertainty recipe from `--keys` root
keys, each as one program whose run axis is split over `jax.devices()`, and prints (and
with `--out` writes as JSON) per-seed test accuracy, per-key figures and wall times
(first call, compile included, and a second, steady call). With `--reference` (a JSON
written by this script elsewhere, e.g. on the CPU) it also reports, per seed, how far the
accuracies moved: another device is another valid computation order, so they may differ
by float rounding amplified by training (the performance issue allows 1 point).

    python scripts/device_sweep.py --seeds 0-9 --keys 1-20 --out sweep.json

Several processes (hosts) run one sweep when each is started with the same arguments and
its launch options (lib/distributed.py; docs/GPU.md, "Over several hosts"): each computes
its block of the seeds and keys on its own devices, every process then holds all results
and prints their digest, and only process 0 writes `--out` and `--arrays`:

    python scripts/device_sweep.py --coordinator 10.0.0.1:4711 --num-processes 2 \\
        --process-id 0 --out sweep.json      # on 10.0.0.1; --process-id 1 on the other host

`--nets`, `--epochs`, `--train-rows` and the uncertainty step counts make a small sweep
(tests, smoke runs); their defaults are the recipes'.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

# Light imports only up here: a usage error, or a process that cannot join the others,
# should not wait for the experiments' imports.
from claim_audit import cache, parse_seeds

from uncertainty_claims import distributed
from uncertainty_claims.numerics import request_deterministic_gpu_ops


def timed(fn: Callable[[], Any], repeats: int) -> tuple[Any, list[float]]:
    """`fn()` `repeats` times; its last result and each call's wall time."""
    import jax

    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return result, times


def _nets(text: str) -> tuple[str, ...]:
    """Comma-separated net names, each once (which names exist is checked in main)."""
    nets = tuple(part.strip() for part in text.split(","))
    if "" in nets or len(set(nets)) != len(nets):
        raise argparse.ArgumentTypeError(
            f"expected distinct net names, comma-separated; got {text!r}"
        )
    return nets


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text}")
    return value


def _overrides(cls: type, **given: int | None) -> Any:
    """`cls()` with the given (not None) fields replaced: the defaults stay the recipe's."""
    return dataclasses.replace(cls(), **{k: v for k, v in given.items() if v is not None})


SETTINGS = ("seeds", "keys", "nets", "repeats", "epochs", "train_rows", "batch_mc")
SETTINGS += ("mc_steps", "ensemble_steps", "mc_samples")
"""The options every process must agree on: together they define the sweep."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=parse_seeds, default=parse_seeds("0-9"))
    parser.add_argument("--keys", type=parse_seeds, default=parse_seeds("1-20"))
    parser.add_argument(
        "--repeats", type=_positive, default=2, help="calls per program (first compiles)"
    )
    parser.add_argument("--reference", help="a JSON from another device to compare accuracies with")
    parser.add_argument("--out", help="write the figures as JSON here (process 0)")
    parser.add_argument("--arrays", help="write every trained array as .npz here (process 0)")
    parser.add_argument(
        "--compile-cache",
        action="store_true",
        help="keep compiled programs between runs (lib/placement/_compile_cache.py: "
        "$CLAIMS_COMPILATION_CACHE_DIR, else .cache/jax-programs); a first call then compiles only "
        "what no earlier run cached",
    )
    parser.add_argument(
        "--batch-mc",
        action="store_true",
        help="train run_many's MC-Dropout nets batched: another valid order (their outputs "
        "then differ from run()'s by rounding), an accelerator's fast path",
    )
    parser.add_argument(
        "--cpu-devices",
        type=_positive,
        metavar="K",
        help="when JAX runs on the CPU, split it into K devices (jax_num_cpu_devices; per process)",
    )
    small = parser.add_argument_group("a smaller sweep (defaults: the recipes')")
    small.add_argument("--nets", type=_nets, help="comma-separated, e.g. yat (default: both)")
    small.add_argument("--epochs", type=_positive, help="calibration epochs")
    small.add_argument("--train-rows", type=_positive, help="train on the first N training rows")
    small.add_argument("--mc-steps", type=_positive, help="uncertainty: MC-Dropout steps")
    small.add_argument("--ensemble-steps", type=_positive, help="uncertainty: ensemble steps")
    small.add_argument("--mc-samples", type=_positive, help="uncertainty: MC passes")
    distributed.add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        args.launch = distributed.from_arguments(args)
    except distributed.LaunchError as error:
        parser.error(str(error))
    return args


def block_outputs(
    net: str, models: list, losses: np.ndarray, split: Any, seeds: tuple[int, ...]
) -> dict[str, np.ndarray]:
    """The calibration outputs (`forward_outputs`) of a block of trained seeds, each distinct
    seed evaluated once (a block repeats the last seed to fill its devices): one row per
    seed of the block."""
    from uncertainty_claims.calibration.experiment import forward_outputs
    from uncertainty_claims.placement import where

    first = [seeds.index(seed) for seed in seeds]
    distinct = sorted(set(first))
    outputs = forward_outputs(
        net,
        [models[i] for i in distinct],
        np.asarray(losses)[distinct],
        split,
        own_programs=where().platform == "cpu",
    )
    rows = [distinct.index(i) for i in first]
    return {name: array[rows] for name, array in outputs.items()}


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    request_deterministic_gpu_ops()
    if args.compile_cache:
        from uncertainty_claims.placement._compile_cache import enable_compilation_cache

        enable_compilation_cache(cache.default_cache_dir())

    import jax

    if args.cpu_devices:
        jax.config.update("jax_num_cpu_devices", args.cpu_devices)
    try:
        distributed.join(args.launch)
        settings = {name: getattr(args, name) for name in SETTINGS} | {"jax": jax.__version__}
        distributed.check_same_everywhere(settings, args.launch)
    except distributed.LaunchError as error:
        sys.exit(f"device_sweep: {error}")

    from uncertainty_claims.calibration import experiment as calibration
    from uncertainty_claims.calibration.training import TrainConfig, train_nets
    from uncertainty_claims.placement import on_host
    from uncertainty_claims.sharding import process_block, run_mesh
    from uncertainty_claims.uncertainty.experiment import (
        UncertaintyConfig,
        UncertaintyResult,
        headline_figures,
        run_many,
    )

    nets = args.nets or calibration.NETS
    if set(nets) - set(calibration.NETS):
        sys.exit(f"device_sweep: --nets must name nets among {calibration.NETS}; got {nets}")
    train_config = _overrides(TrainConfig, epochs=args.epochs)
    uncertainty_config = _overrides(
        UncertaintyConfig,
        mc_steps=args.mc_steps,
        ensemble_steps=args.ensemble_steps,
        mc_samples=args.mc_samples,
    )
    mesh = run_mesh(jax.local_devices())
    process = f"process {jax.process_index()} of {jax.process_count()}"

    def block_of(runs: tuple[int, ...]) -> tuple[int, ...]:
        """This process's block of `runs` (all of them, padded, when it runs alone)."""
        block = process_block(
            len(runs), jax.process_count(), len(jax.local_devices()), jax.process_index()
        )
        return tuple(runs[i] for i in block)

    out: dict = {
        "jax": jax.__version__,
        "processes": jax.process_count(),
        "devices": [str(d) for d in jax.devices()],
        "device_kind": jax.devices()[0].device_kind,
        "seeds": list(args.seeds),
        "keys": list(args.keys),
        "train_config": dataclasses.asdict(train_config),
        "train_rows": args.train_rows,
        "uncertainty_config": dataclasses.asdict(uncertainty_config),
        "batch_mc": args.batch_mc,
        "calibration": {},
    }
    arrays: dict[str, np.ndarray] = {}
    print(f"{process}: jax {jax.__version__} on {out['devices']}", flush=True)
    split = calibration.load_split()
    rows = slice(args.train_rows)
    train_x, train_y = split.train_x[rows], split.train_y[rows]
    seeds = block_of(args.seeds)
    for net in nets:
        (models, losses), times = timed(
            lambda net=net: train_nets(
                net, seeds, train_x, train_y, train_config, mesh=mesh, inputs_on=on_host
            ),
            args.repeats,
        )
        outputs = distributed.gather_runs(
            block_outputs(net, models, losses, split, seeds),
            len(args.seeds),
        )
        arrays |= {f"calibration/{net}/{name}": a for name, a in outputs.items()}
        accuracy = (outputs["logits_test"].argmax(-1) == split.test_y).mean(-1)
        out["calibration"][net] = {
            "seconds": times,
            "accuracy": dict(zip(map(str, args.seeds), accuracy.tolist(), strict=True)),
            "final_loss": outputs["train_loss"][:, -1].tolist(),
        }
        print(
            f"{process}: {net}: {len(set(seeds))} of {len(args.seeds)} seeds here, "
            f"calls {times} s, accuracy {accuracy}",
            flush=True,
        )

    keys = block_of(args.keys)
    block, times = timed(
        lambda: run_many(
            keys,
            config=uncertainty_config,
            mesh=mesh,
            batch_mc=args.batch_mc,
            inputs_on=on_host,
        ),
        args.repeats,
    )
    stacked = distributed.gather_runs(
        {name: np.stack([r.as_arrays()[name] for r in block]) for name in block[0].as_arrays()},
        len(args.keys),
    )
    results = [
        UncertaintyResult.from_arrays({name: a[i] for name, a in stacked.items()})
        for i in range(len(args.keys))
    ]
    for result in results:
        arrays |= {f"uncertainty/{result.root_seed}/{k}": a for k, a in result.as_arrays().items()}
    figures = [headline_figures(r) for r in results]
    out["uncertainty"] = {
        "seconds": times,
        "figures": {name: [f[name] for f in figures] for name in figures[0]},
    }
    print(
        f"{process}: uncertainty: {len(set(keys))} of {len(args.keys)} root keys here, "
        f"calls {times} s",
        flush=True,
    )

    if args.reference:
        with open(args.reference) as handle:
            reference = json.load(handle)
        moved = {
            net: {
                seed: abs(out["calibration"][net]["accuracy"][seed] - value) * 100
                for seed, value in reference["calibration"][net]["accuracy"].items()
                if seed in out["calibration"][net]["accuracy"]
            }
            for net in nets
        }
        out["accuracy_moved_points"] = moved
        print(f"accuracy moved vs reference (points): {moved}", flush=True)
    out["arrays_sha256"] = cache.arrays_digest(arrays)
    # Every process holds every result: equal digests show they agree.
    print(f"{process}: arrays sha256 {out['arrays_sha256']}", flush=True)
    if jax.process_index() != 0:
        return
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(out, handle, indent=1)
    if args.arrays:
        with open(args.arrays, "wb") as handle:
            np.savez(handle, **arrays)


if __name__ == "__main__":
    main()
