"""Independent runs stacked on a leading axis, spread over devices along that axis.

A seed sweep (or a spread of reruns) is embarrassingly parallel: every run trains on
its own, so each device takes a block of runs and nothing is communicated until the
results are gathered at the end. `over_runs` does this with a 1-D `Mesh` and
`jax.shard_map`; the same code runs on one CPU and on the GPUs of one host. Over several
processes (hosts), each process computes the block of runs `process_block` gives it on its
own devices, and the blocks are gathered (lib/distributed.py).

When the number of runs does not divide the number of devices, the run axis is
padded by repeating the last run, and every device gets at least two runs (see
`padded_length`); the copies' results are dropped. So a device may do up to one run
more than needed, and a sweep with fewer than two runs per device pays for two.
Runs never interact, so the padding cannot change a result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from .numerics import full_precision
from .placement._devices import carry_placement

# TARGETS["sweep.calibration_first_s"] over several devices; one device takes no mesh.
RUN_AXIS = "runs"


def run_mesh(devices: Sequence[jax.Device] | None = None) -> Mesh:
    """A 1-D mesh named `RUN_AXIS` over `devices` (default: every device of every process)."""
    return Mesh(np.asarray(jax.devices() if devices is None else list(devices)), (RUN_AXIS,))


def default_mesh() -> Mesh | None:
    """`run_mesh()` when JAX sees several devices, else None (one device needs no mesh).

    The experiments' cached runs use this, so a multi-GPU host spreads the seeds of a
    sweep without being asked; split or not, a run's result is the same
    (tests/test_sharding.py).
    """
    return run_mesh() if len(jax.devices()) > 1 else None


def padded_length(n_runs: int, n_devices: int) -> int:
    """`n_runs` rounded up to a multiple of `n_devices`, with at least 2 runs per device.

    Two or more: XLA compiles a batch of one run as an unbatched computation, whose
    float order differs from a batch's, so one run per device would not reproduce the
    unsharded run bit for bit.
    """
    per_device = -(-n_runs // n_devices)
    return max(per_device, 2 if n_runs > 1 else 1) * n_devices


def process_block(
    n_runs: int, n_processes: int, devices_per_process: int, process_index: int
) -> list[int]:
    """The runs (indices, repeats included) process `process_index` computes on its devices.

    The blocks its devices get when one process holding all `n_processes *
    devices_per_process` devices splits `n_runs` runs (`over_runs`: padded by repeating the
    last run, `padded_length`). So each device computes the same program on the same runs
    either way (for two runs or more: a single run's copies make two runs per device), and
    the blocks joined in process order are that padded run axis: its first `n_runs` are
    the sweep. Every process gets as many runs.
    """
    if n_runs < 1 or devices_per_process < 1 or not 0 <= process_index < n_processes:
        raise ValueError(
            f"need n_runs >= 1, devices_per_process >= 1 and 0 <= process_index < n_processes; "
            f"got {n_runs}, {devices_per_process}, {process_index} of {n_processes}"
        )
    per_process = padded_length(n_runs, n_processes * devices_per_process) // n_processes
    start = process_index * per_process
    return [min(run, n_runs - 1) for run in range(start, start + per_process)]


def _input_sharding(mesh: Mesh | None) -> NamedSharding | None:
    """Where a program's inputs go: replicated over `mesh`, or with no mesh (None) on the
    default device."""
    return None if mesh is None else NamedSharding(mesh, PartitionSpec())


def placed_inputs(tree: Any, mesh: Mesh | None) -> Any:
    """`tree`'s arrays, wherever they were computed (the host's CPU, say), placed as
    `input_shapes` places a program's inputs (`_input_sharding`)."""
    host = jax.device_get(tree)  # `device_put` would leave another device's array there
    return jax.device_put(host, _input_sharding(mesh))


def input_shapes(tree: Any, mesh: Mesh | None) -> Any:
    """The shapes (`jax.ShapeDtypeStruct`s) of `tree`'s arrays or shapes, placed as a
    program's inputs are (`_input_sharding`)."""
    sharding = _input_sharding(mesh)
    return jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(
            a.shape, a.dtype, sharding=sharding, weak_type=getattr(a, "weak_type", False)
        ),
        tree,
    )


def compile_aside(pool: Executor, jitted: Any, *args: Any, **static: Any) -> Future:
    """The `jax.jit` function `jitted` lowered for `args` (arrays or shapes, as
    `input_shapes` gives them) and compiled in `pool`, with this thread's default device and
    every matrix product at full precision: a program compiling while this thread prepares
    its inputs. The future's result, JAX's compiled program, takes the arguments that are
    not static."""
    lower = carry_placement(full_precision(jitted.lower))  # both settings are per thread
    return pool.submit(lambda: lower(*args, **static).compile())


def over_runs(fn: Callable[..., Any], mesh: Mesh | None, stacked: tuple, shared: tuple = ()) -> Any:
    """`fn(*stacked, *shared)`, with the leading (run) axis of `stacked` split over `mesh`.

    Call it under `jax.jit`. `fn` must treat the runs independently (e.g. a `jax.vmap`)
    and return arrays whose leading axis is the run axis. `shared` is replicated on every
    device. With `mesh=None` this is just `fn(*stacked, *shared)` on the default device.
    The outputs come back replicated (they are small: trained parameters, losses,
    predictions).
    """
    if mesh is None:
        return fn(*stacked, *shared)
    n_runs = jax.tree.leaves(stacked)[0].shape[0]
    pad = padded_length(n_runs, mesh.size) - n_runs

    def pad_runs(a: jax.Array) -> jax.Array:
        return jnp.concatenate([a, jnp.repeat(a[-1:], pad, axis=0)]) if pad else a

    sharded = jax.shard_map(
        fn,
        mesh=mesh,
        in_specs=(PartitionSpec(RUN_AXIS),) * len(stacked) + (PartitionSpec(),) * len(shared),
        out_specs=PartitionSpec(RUN_AXIS),
    )
    out = sharded(*jax.tree.map(pad_runs, stacked), *shared)
    out = jax.tree.map(lambda a: a[:n_runs], out)
    return jax.lax.with_sharding_constraint(out, NamedSharding(mesh, PartitionSpec()))
