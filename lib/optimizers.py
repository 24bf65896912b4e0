"""The recipes' optimizer, one instance per learning rate.

`optax.adam(lr)` builds new closures on every call, and an `nnx.Optimizer` keeps them in
its graph definition: two models given separate `adam(lr)`s have unequal graph
definitions, so `jax.jit` and `nnx.jit` compile their identical step once per model (per
seed: a third of a cold calibration's compiling). A shared instance computes the same
update (optax transformations hold no state of their own).
"""

from __future__ import annotations

import functools

import optax


@functools.cache
def adam(learning_rate: float) -> optax.GradientTransformation:
    """`optax.adam(learning_rate)`, the same object for every call with this rate."""
    return optax.adam(learning_rate)
