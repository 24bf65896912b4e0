"""The guide's recipe with its log-variance clamp removed: an addition beside the faithful
recipe (its fifth pitfall), never a change to it.

`train_unclamped()` trains, from each of root keys 0..20, the MC-Dropout net and the
ensemble as `uncertainty_claims.uncertainty.experiment.run_many` does (same data, keys, initial weights,
batches, resamples; the MC-Dropout nets train one after another, so on a CPU their losses
are the faithful order's bit for bit; the ensembles of all keys train batched under `vmap`
and the forward passes are jitted: other valid orders), but with a model whose
log-variance head is not clipped. It keeps the training losses and the log-variances
reached on the training inputs.

`steps_past_overflow` trains the MC-Dropout net of root key 0 for a few of the guide's
steps with its log-variance head set where `exp(-log_var)` overflows in float32 (below
`-OVERFLOW_LOG_VAR`), with and without the clip: what the guide's fifth pitfall warns of.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from ..numerics import full_precision
from ..optimizers import adam
from .config import UncertaintyConfig
from .data import make_data, root_keys
from .experiment import _inputs
from .model import GaussianMLP
from .training import _ensemble_scan, _mc_scan, bootstrap_indices, train_step

KEYS = tuple(range(21))
OVERFLOW_LOG_VAR = float(np.log(np.finfo(np.float32).max))
"""exp(x) overflows float32 for x above this (about 88.72): exp(-log_var) does below -it."""


class UnclampedMLP(GaussianMLP):
    """The guide's GaussianMLP (same layers, construction order, initial weights) without
    `jnp.clip` on the log-variance."""

    def __call__(self, x, train: bool = False):
        h = nnx.relu(self.l1(x))
        h = self.drop(h, deterministic=not train)
        h = nnx.relu(self.l2(h))
        h = self.drop(h, deterministic=not train)
        return self.mu_head(h), self.logvar_head(h)


@functools.cache
def _graphdefs(config: UncertaintyConfig):
    """The graph definitions of `run`'s MC-Dropout net and ensemble (with their optimizers),
    built of `UnclampedMLP`s: the same parameters and states, another forward pass."""

    def models():
        model = UnclampedMLP(dropout_rate=config.dropout_rate, rngs=nnx.Rngs(0))

        @nnx.vmap(in_axes=0, out_axes=0)
        def make_ensemble(key):
            member = UnclampedMLP(dropout_rate=config.dropout_rate, rngs=nnx.Rngs(key))
            return member, nnx.Optimizer(member, adam(config.lr), wrt=nnx.Param)

        ensemble = make_ensemble(jax.random.split(jax.random.key(0), config.members))
        return (model, nnx.Optimizer(model, adam(config.lr), wrt=nnx.Param)), ensemble

    mc, ensemble = nnx.eval_shape(models)
    return nnx.graphdef(mc), nnx.graphdef(ensemble)


@functools.partial(jax.jit, static_argnames=("mc_def", "ens_def", "config"))
def _train(mc_def, ens_def, mc_state, ens_state, bkey, x, y, *, config: UncertaintyConfig):
    """Every key's nets (states and inputs stacked over the keys): losses, log-variances."""

    def mc_run(run):
        state, bkey, x, y = run
        state, bkey, loss = _mc_scan(
            mc_def, state, bkey, x, y, steps=config.mc_steps, batch=config.mc_batch
        )
        _, log_var = nnx.merge(mc_def, state)[0](x, train=False)
        return loss, log_var, bkey

    def ensemble_run(state, bkey, x, y):
        idx = bootstrap_indices(bkey, members=config.members, n=x.shape[0])
        state, loss = _ensemble_scan(ens_def, state, x[idx], y[idx], steps=config.ensemble_steps)
        members = nnx.merge(ens_def, state)[0]
        _, log_var = nnx.vmap(lambda m, x: m(x), in_axes=(0, None))(members, x)
        return loss, log_var

    mc_loss, mc_log_var, bkey = jax.lax.map(mc_run, (mc_state, bkey, x, y))
    ens_loss, ens_log_var = jax.vmap(ensemble_run)(ens_state, bkey, x, y)
    return {
        "mc_loss": mc_loss,
        "ens_loss": ens_loss,
        "mc_log_var": mc_log_var,
        "ens_log_var": ens_log_var,
    }


@full_precision
def train_unclamped(
    root_seeds: tuple[int, ...], config: UncertaintyConfig = UncertaintyConfig()
) -> dict[str, np.ndarray]:
    """The recipe without the clamp from each root key, uncached: losses and reached
    log-variances, stacked over the keys."""
    # run_many's inputs: each key's data, batch key and initial states, drawn as run draws them.
    _, (_, _, mc_state, ens_state, bkey, x, y, _) = _inputs(
        root_seeds, [None] * len(root_seeds), config
    )
    out = _train(*_graphdefs(config), mc_state, ens_state, bkey, x, y, config=config)
    return {name: np.asarray(array) for name, array in jax.device_get(out).items()}


@full_precision
def steps_past_overflow(
    log_var: float,
    *,
    clamped: bool,
    steps: int = 2,
    config: UncertaintyConfig = UncertaintyConfig(),
) -> tuple[list[float], bool]:
    """`steps` of the guide's train_step on root key 0's 120 points for its MC-Dropout net
    (initial weights of `nnx.Rngs(0)`, its Adam) with the log-variance head set to output
    `log_var` everywhere (kernel 0, bias `log_var`), as `GaussianMLP` (`clamped`) or
    `UnclampedMLP`: each step's loss, and whether the parameters end up holding a NaN."""
    dkey, _, _ = root_keys(0)
    data = make_data(dkey)
    model = (GaussianMLP if clamped else UnclampedMLP)(
        dropout_rate=config.dropout_rate, rngs=nnx.Rngs(0)
    )
    model.logvar_head.kernel[...] = jnp.zeros_like(model.logvar_head.kernel[...])
    model.logvar_head.bias[...] = jnp.full_like(model.logvar_head.bias[...], log_var)
    optimizer = nnx.Optimizer(model, adam(config.lr), wrt=nnx.Param)
    losses = [float(train_step(model, optimizer, {"x": data.x, "y": data.y})) for _ in range(steps)]
    params = jax.tree.leaves(nnx.state(model, nnx.Param))
    return losses, any(bool(jnp.isnan(p).any()) for p in params)
