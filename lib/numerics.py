"""What the recipes' float32 arithmetic needs on every backend: full-precision matrix
products and, on GPUs, run-to-run identical reductions.

Matrix products: JAX's default precision lets a GPU round the inputs of float32 matrix
products to TensorFloat-32 (10 mantissa bits) on Ampere and Hopper chips; a CPU always
computes them in full float32. On a GPU under the default, four calibration figures left
their tolerances (cal-08b, cal-09c, cal-11b, cal-14) and the MC-Dropout trace no longer
reproduced (unc-04a); under "highest" the MC trace matched the guide's to four digits and
the calibration figures held. So the
experiments' programs are traced under "highest"; on a CPU this changes no bit
(tests/test_recipe.py).

Determinism: by default XLA may sum in a different order from one GPU run to the next
(atomic reductions), so two runs of the same seeds differed on a GPU (in seed 0's Yat
accuracy); with `--xla_gpu_deterministic_ops=true` they were bit-identical.
The flag must be in XLA_FLAGS before JAX starts its backend; a CPU ignores it.

Random bits: JAX lowers its threefry2x32 hash as straight-line code on every backend but
the CPU, where it emits a loop of five rolled iterations (smaller programs). Both are the
same uint32 arithmetic, so they give the same bits (tests/test_random_bits.py checks the
hash's published test vectors and JAX's own CPU lowering); the rolled loop carries its
rotation amounts as data and passes every intermediate through memory, and on a CPU it
made the uncertainty recipe's dropout draws cost about twice as much as the unrolled code
(the losses equal bit for bit). The experiments therefore lower it unrolled on the CPU too.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

import numpy as np

MATMUL_PRECISION = "highest"
DETERMINISTIC_GPU_FLAG = "--xla_gpu_deterministic_ops=true"
NARROW_VECTORS_FLAG = "--xla_cpu_max_isa=SSE4_2"
"""XLA_FLAGS that make a CPU compute with 128-bit vectors: every program in another valid
float order on the same machine, a stand-in for another machine (`make order-check`)."""

P = ParamSpec("P")
R = TypeVar("R")


def full_precision(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn` with every matrix product it traces computed at `MATMUL_PRECISION`."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        # Imported here: the pytest plugin imports this module, and a command-line error
        # should not wait for jax.
        import jax

        unrolled_cpu_threefry()
        with jax.default_matmul_precision(MATMUL_PRECISION):
            return fn(*args, **kwargs)

    return wrapper


@functools.cache
def unrolled_cpu_threefry() -> bool:
    """Lower threefry2x32 on the CPU as JAX lowers it elsewhere: unrolled, same bits, faster.

    Affects programs lowered afterwards, in this process. Returns False (and changes
    nothing) where this JAX lacks the public hooks (`jax.extend.random.threefry2x32_p`,
    `jax.interpreters.mlir`): a speed-up, never a result.
    """
    try:
        from jax.extend.random import threefry2x32_p
        from jax.interpreters import mlir
    except ImportError:
        return False
    unrolled = mlir.lower_fun(_threefry2x32_unrolled, multiple_results=True)
    mlir.register_lowering(threefry2x32_p, unrolled, platform="cpu")
    return True


_THREEFRY_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _threefry2x32_unrolled(key1: Any, key2: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    """Threefry-2x32 with 20 rounds (Salmon et al., SC 2011) in plain uint32 arithmetic,
    unrolled: the hash JAX's `threefry2x32_p` computes, written with public operations."""
    import jax

    def rotate_left(v: Any, distance: int) -> Any:
        return jax.lax.shift_left(v, np.uint32(distance)) | jax.lax.shift_right_logical(
            v, np.uint32(32 - distance)
        )

    keys = (key1, key2, key1 ^ key2 ^ np.uint32(0x1BD11BDA))
    x = [x1 + keys[0], x2 + keys[1]]
    for block in range(5):
        for distance in _THREEFRY_ROTATIONS[block % 2]:
            x[0] = x[0] + x[1]
            x[1] = x[0] ^ rotate_left(x[1], distance)
        x[0] = x[0] + keys[(block + 1) % 3]
        x[1] = x[1] + keys[(block + 2) % 3] + np.uint32(block + 1)
    return x[0], x[1]


def request_deterministic_gpu_ops() -> None:
    """Add `DETERMINISTIC_GPU_FLAG` to XLA_FLAGS for this process and its children, unless
    XLA_FLAGS already says something about it. Call it before JAX's first computation."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_gpu_deterministic_ops" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {DETERMINISTIC_GPU_FLAG}".strip()


def stack_on_host(values: Sequence[Any]) -> np.ndarray:
    """Per-step device values (losses) as one host array. `jnp.stack` would compile a
    program with one input per step, seconds for thousands of steps; the values are the
    same."""
    import jax

    return np.stack(jax.device_get(list(values)))


def same_bits(a: Any, b: Any) -> bool:
    """Whether two pytrees of arrays hold the same values bit for bit (NaN matching NaN;
    random keys compared by their key data)."""
    import jax

    def bits(leaf: Any) -> np.ndarray:
        if jax.dtypes.issubdtype(getattr(leaf, "dtype", None), jax.dtypes.prng_key):
            leaf = jax.random.key_data(leaf)
        return np.asarray(leaf)

    leaves_a, leaves_b = jax.tree.leaves(a), jax.tree.leaves(b)
    if len(leaves_a) != len(leaves_b):
        return False
    for x, y in zip(map(bits, leaves_a), map(bits, leaves_b), strict=True):
        if x.dtype != y.dtype or not np.array_equal(x, y, equal_nan=x.dtype.kind in "fc"):
            return False
    return True
