"""The eager replay (lib/eager_replay.py) records what an eager call runs, through every
transformation, and replays it bit for bit on new inputs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from uncertainty_claims.eager_replay import EagerTape
from uncertainty_claims.numerics import same_bits


def step(w: jax.Array, x: jax.Array):
    """Per-row loss and gradient under an eager `vmap` of `value_and_grad`, through a custom
    derivative (ReLU's) and a nested jit, as in the guide's ensemble step."""
    nested = jax.jit(lambda v: v * 3.0)

    def loss(w, row):
        return jnp.mean(jax.nn.relu(nested(row @ w)) ** 2 / 0.9)

    return jax.vmap(jax.value_and_grad(loss), in_axes=(None, 0))(w, x)


def test_the_replay_on_new_inputs_is_the_eager_call():
    """Recorded once, replayed on other inputs: the eager call's bits. Bug fixed: the ops inside
    a custom derivative's function ran on JAX's own eager trace, unrecorded, so ReLU's output
    was taken for a constant and every replay reused the recording's activations."""
    key_w, key_x = jax.random.split(jax.random.key(0))
    w = jax.random.normal(key_w, (4, 3))
    x = jax.random.normal(key_x, (5, 2, 4))
    tape, out = EagerTape.record(step, w, x)
    assert same_bits(out, step(w, x))
    for scale in (0.5, -2.0, 7.0):
        assert same_bits(tape(w * scale, x + scale), step(w * scale, x + scale))


def test_a_call_whose_output_is_no_recorded_op_is_refused():
    """An output no recorded op made (here an array made before the call) cannot be replayed:
    refused at recording, never replayed stale."""
    made_before = jnp.zeros(3)
    with pytest.raises(ValueError, match="cannot replay"):
        EagerTape.record(lambda x: (x + 1.0, made_before), jnp.ones(3))
