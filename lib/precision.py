"""Float32 matrix products at full precision on every backend.

JAX's default precision lets a GPU round the inputs of float32 matrix products to
TensorFloat-32 (10 mantissa bits) on Ampere and Hopper chips; a CPU always computes them
in full float32. Measured on an H200 (jax 0.11.2, seeds 0-2): under the default, four
calibration figures left their tolerances (cal-08b, cal-09c, cal-11b, cal-14) and the
MC-Dropout trace no longer reproduced (unc-04a); under "highest" every published figure
held as on the CPU and the MC trace matched the guide's to four digits. So the
experiments' programs are traced under "highest": the recipe is float32 arithmetic, and
on a CPU this changes no bit (claims/test_recipe.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import jax

MATMUL_PRECISION = "highest"

P = ParamSpec("P")
R = TypeVar("R")


def full_precision(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn` with every matrix product it traces computed at `MATMUL_PRECISION`."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with jax.default_matmul_precision(MATMUL_PRECISION):
            return fn(*args, **kwargs)

    return wrapper
