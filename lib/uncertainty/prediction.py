"""Predictive samples: MC-Dropout passes and ensemble members (decomposed by uncertainty_claims.metrics)."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
from flax import nnx

from .model import GaussianMLP


@dataclasses.dataclass(frozen=True)
class Samples:
    """K predictive Gaussians per input: ``means`` and ``variances`` = exp(log_var), [K, N, 1]."""

    means: jax.Array
    variances: jax.Array


# --------------------------------------------------------------------------- MC-Dropout


@nnx.jit(static_argnames=("train",))
def _mc_forward(model: GaussianMLP, x: jax.Array, train: bool = True):
    return model(x, train=train)  # dropout stays ACTIVE when train=True


def mc_predict_loop(
    model: GaussianMLP, x: jax.Array, *, n_samples: int, train: bool = True
) -> Samples:
    """The guide's ``mc_predict``: a Python loop of ``n_samples`` jitted stochastic passes.

    Each pass advances the model's dropout RNG counter (twice per pass for GaussianMLP).
    ``train=False`` disables dropout, so every pass is identical (the guide's first pitfall).
    """
    mus, variances = [], []
    for _ in range(n_samples):
        mu, log_var = _mc_forward(model, x, train=train)
        mus.append(mu)
        variances.append(jnp.exp(log_var))
    return Samples(means=jnp.stack(mus), variances=jnp.stack(variances))


@functools.partial(jax.jit, static_argnames=("graphdef", "n_samples", "train"))
def _mc_passes(graphdef, counts, rest, x, *, n_samples: int, train: bool):
    # How far one forward pass advances each RNG counter (a probe; its output is unused,
    # so XLA drops the probe's arithmetic). copy=True: merge would otherwise alias, and
    # the probe's pass would advance, the Variables inside ``counts``.
    probe = nnx.merge(graphdef, counts, rest, copy=True)
    probe(x[:1], train=train)
    stride = jax.tree.map(jnp.subtract, nnx.state(probe, nnx.RngCount), counts)

    def one_pass(t):
        # Pass t of the sequential loop starts from counter c0 + t * stride, so it draws
        # exactly the dropout keys fold_in(key, c0 + t * stride + j) that the loop draws.
        c = jax.tree.map(lambda c0, d: c0 + t * d, counts, stride)
        mu, log_var = nnx.merge(graphdef, c, rest, copy=True)(x, train=train)
        return mu, jnp.exp(log_var)

    means, variances = jax.vmap(one_pass)(jnp.arange(n_samples, dtype=jnp.uint32))
    final = jax.tree.map(lambda c0, d: c0 + jnp.uint32(n_samples) * d, counts, stride)
    return means, variances, final


def mc_predict(model: GaussianMLP, x: jax.Array, *, n_samples: int, train: bool = True) -> Samples:
    """Same samples as :func:`mc_predict_loop`, computed as one jitted vmap over the passes.

    Leaves the model's RNG counters where the loop would leave them.
    """
    graphdef, counts, rest = nnx.split(model, nnx.RngCount, ...)
    means, variances, final = _mc_passes(
        graphdef, counts, rest, x, n_samples=n_samples, train=train
    )
    nnx.update(model, final)
    return Samples(means=means, variances=variances)


# --------------------------------------------------------------------------- Deep ensemble


@nnx.jit
@nnx.vmap(in_axes=(0, None), out_axes=0)
def _ensemble_forward(model: GaussianMLP, x: jax.Array):
    return model(x, train=False)  # deterministic; diversity comes from params


def ensemble_predict(models: GaussianMLP, x: jax.Array) -> Samples:
    """Per-member predictions of a vmapped ensemble with dropout off: [M, N, 1] each."""
    mu, log_var = _ensemble_forward(models, x)
    return Samples(means=mu, variances=jnp.exp(log_var))
