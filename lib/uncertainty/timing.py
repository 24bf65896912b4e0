"""How long the guide's example takes as the guide writes it, on this machine: a benchmark
figure beside the recipe, recorded with the machine it was measured on, never a gate.

The guide's order on its small CPU defaults, from root key 0: the MC-Dropout net's
`nnx.jit` step loop and its 30 passes, then the ensemble's vmapped step called without
jit, op by op. That literal loop costs the same every step once its ops are compiled, so it
runs `WARMUP_STEPS` steps (compiling) and then `SAMPLED_STEPS` more, and the remaining
steps are scaled from the sample: the figure is the recipe's whole run less about a minute
of identical steps. Cached per machine (its CPU, cores and JAX backend) and code.
"""

from __future__ import annotations

import dataclasses
import os
import platform
import time
from pathlib import Path

import jax
import numpy as np

from ..cache import cached, lib_sources, runtime_key, source_digest
from .config import UncertaintyConfig
from .data import make_data, root_keys
from .prediction import ensemble_predict, mc_predict_loop
from .training import train_ensemble_loop, train_mc_dropout_loop

WARMUP_STEPS = 10
SAMPLED_STEPS = 40

_CODE_DIGEST = source_digest(lib_sources(__name__))


def machine() -> dict[str, str | int]:
    """The machine a timing belongs to: its CPU model, core count and JAX backend."""
    model = platform.processor() or platform.machine()
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                model = line.partition(":")[2].strip()
                break
    return {"cpu": model, "cores": os.cpu_count() or 0, "backend": jax.default_backend()}


def _measure(config: UncertaintyConfig) -> dict[str, np.ndarray]:
    load = os.getloadavg()[0]  # other work on the machine slows the figure: say how much
    start = time.perf_counter()
    dkey, tkey, bkey = root_keys(0)
    data = make_data(dkey)
    mc_model, _, bkey = train_mc_dropout_loop(data, bkey, config, model_seed=0)
    mc_predict_loop(mc_model, data.grid, n_samples=config.mc_samples)
    mc_predict_loop(mc_model, data.x, n_samples=config.mc_samples)
    mc_s = time.perf_counter() - start

    def ensemble_seconds(steps: int) -> float:
        begin = time.perf_counter()
        short = dataclasses.replace(config, ensemble_steps=steps)
        models, losses = train_ensemble_loop(data, tkey, bkey, short, step="eager")
        jax.block_until_ready((losses, ensemble_predict(models, data.grid).means))
        return time.perf_counter() - begin

    warmup_s = ensemble_seconds(WARMUP_STEPS)  # compiles every op of the step
    per_step = ensemble_seconds(SAMPLED_STEPS) / SAMPLED_STEPS
    ensemble_s = warmup_s + per_step * (config.ensemble_steps - WARMUP_STEPS)
    return {
        "seconds": np.array(mc_s + ensemble_s),
        "mc_dropout_s": np.array(mc_s),
        "ensemble_s": np.array(ensemble_s),
        "load_before": np.array(load),
    }


def guide_seconds(config: UncertaintyConfig = UncertaintyConfig()) -> dict[str, object]:
    """The guide's example, timed on this machine (measured once per machine and code):
    seconds in all and per method, and the machine."""
    where = machine()
    entry = cached(
        "uncertainty-guide-timing",
        {"config": dataclasses.asdict(config), "machine": where, "code": _CODE_DIGEST}
        | runtime_key(),
        lambda: _measure(config),
        validate=_check,
    )
    return {name: float(value) for name, value in entry.arrays.items()} | {"machine": where}


def _check(arrays: dict[str, np.ndarray]) -> None:
    names = {"seconds", "mc_dropout_s", "ensemble_s", "load_before"}
    if set(arrays) != names or not all(
        a.shape == () and np.isfinite(a) and a >= 0 for a in arrays.values()
    ):
        raise ValueError(f"expected the timings {sorted(names)}, finite and >= 0; got {arrays}")
