"""Training: MC-Dropout (one net) and the nnx.vmap deep ensemble, as the guide writes them
(a Python loop over a jitted step) and as one jitted ``lax.scan`` over all steps.

Both implementations share the model, the loss and the single-step update ``_update``, and
consume the random streams identically: the scan carries the guide's ``bkey`` chain and
the model's dropout RNG state, so it yields the same batches and dropout masks.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Literal

import jax
import jax.numpy as jnp
from flax import nnx

from ..eager_replay import replay_steps
from ..nudge import nudge_params
from ..numerics import stack_on_host
from ..optimizers import adam
from .config import ENSEMBLE_PRINT_EVERY, MC_PRINT_EVERY, UncertaintyConfig
from .data import ToyData
from .model import GaussianMLP, gaussian_nll

Progress = Callable[[str], None] | None


def _loss_fn(model: GaussianMLP, batch: dict[str, jax.Array]) -> jax.Array:
    mu, log_var = model(batch["x"], train=True)
    return gaussian_nll(mu, log_var, batch["y"])


def _update(model: GaussianMLP, optimizer: nnx.Optimizer, batch: dict[str, jax.Array]):
    """One optimisation step with dropout on; returns the batch loss before the update."""
    loss, grads = nnx.value_and_grad(_loss_fn)(model, batch)
    optimizer.update(model, grads)
    return loss


train_step = nnx.jit(_update)
"""The guide's ``@nnx.jit train_step`` for a single net (returns the step's loss)."""

ensemble_train_step = nnx.vmap(_update, in_axes=(0, 0, 0), out_axes=0)
"""The guide's vmapped ensemble step: each member updates on its own batch; returns [M] losses."""

_jit_ensemble_train_step = nnx.jit(ensemble_train_step)


# --------------------------------------------------------------------------- MC-Dropout


def new_mc_model(
    model_seed: int | jax.Array, config: UncertaintyConfig, *, nudge: int | None = None
) -> tuple[GaussianMLP, nnx.Optimizer]:
    """The MC-Dropout net ``GaussianMLP(rngs=nnx.Rngs(model_seed))`` and its Adam optimizer.

    ``model_seed``: an int, or ``jax.random.key(seed)``, which draws the same weights
    (and can be traced, e.g. under ``vmap`` over runs)."""
    model = GaussianMLP(dropout_rate=config.dropout_rate, rngs=nnx.Rngs(model_seed))
    if nudge is not None:
        nudge_params(model, nudge)
    return model, nnx.Optimizer(model, adam(config.lr), wrt=nnx.Param)


def _report(progress: Progress, losses, every: int, label: str) -> None:
    if progress is None:
        return
    steps = len(losses)
    for i in range(every, steps + 1, every):
        progress(f"  step {i:4d}/{steps} | {label} {float(losses[i - 1]):.4f}")


def train_mc_dropout_loop(
    data: ToyData,
    bkey: jax.Array,
    config: UncertaintyConfig,
    *,
    model_seed: int,
    nudge: int | None = None,
    progress: Progress = None,
) -> tuple[GaussianMLP, jax.Array, jax.Array]:
    """Train the MC-Dropout net the way the guide writes it: a Python loop over ``train_step``.

    Each of ``config.mc_steps`` steps: ``bkey, sub = split(bkey)``; batch =
    ``randint(sub, (config.mc_batch,), 0, N)``.
    ``nudge`` (not in the recipe; default off): see :func:`nudge_params`.

    Returns:
      (model, per-step losses [steps] float32, the bkey left after the steps' splits).
    """
    model, optimizer = new_mc_model(model_seed, config, nudge=nudge)
    n = data.x.shape[0]
    steps = config.mc_steps
    losses = []
    for i in range(1, steps + 1):
        bkey, sub = jax.random.split(bkey)
        idx = jax.random.randint(sub, (config.mc_batch,), 0, n)
        loss = train_step(model, optimizer, {"x": data.x[idx], "y": data.y[idx]})
        losses.append(loss)
        if progress is not None and i % MC_PRINT_EVERY == 0:
            progress(f"  step {i:4d}/{steps} | NLL {float(loss):.4f}")
    return model, jnp.asarray(stack_on_host(losses)), bkey


@functools.partial(jax.jit, static_argnames=("graphdef", "steps", "batch"))
def _mc_scan(graphdef, state, bkey, x, y, *, steps: int, batch: int):
    n = x.shape[0]

    def body(carry, _):
        state, bkey = carry
        model, optimizer = nnx.merge(graphdef, state)
        bkey, sub = jax.random.split(bkey)
        idx = jax.random.randint(sub, (batch,), 0, n)
        loss = _update(model, optimizer, {"x": x[idx], "y": y[idx]})
        return (nnx.state((model, optimizer)), bkey), loss

    (state, bkey), losses = jax.lax.scan(body, (state, bkey), length=steps)
    return state, bkey, losses


def mc_batch_key_after(bkey: jax.Array, steps: int) -> jax.Array:
    """The batch key the MC-Dropout training leaves after `steps` steps (one split per step,
    in `_mc_scan` as in the guide's loop), without training: the key the ensemble's bootstrap
    resamples are drawn from."""
    return jax.lax.fori_loop(0, steps, lambda _, key: jax.random.split(key)[0], bkey)


def train_mc_dropout(
    data: ToyData,
    bkey: jax.Array,
    config: UncertaintyConfig,
    *,
    model_seed: int,
    nudge: int | None = None,
    progress: Progress = None,
) -> tuple[GaussianMLP, jax.Array, jax.Array]:
    """Same as :func:`train_mc_dropout_loop`, but all steps run in one jitted ``lax.scan``."""
    model, optimizer = new_mc_model(model_seed, config, nudge=nudge)
    graphdef, state = nnx.split((model, optimizer))
    state, bkey, losses = _mc_scan(
        graphdef, state, bkey, data.x, data.y, steps=config.mc_steps, batch=config.mc_batch
    )
    nnx.update((model, optimizer), state)
    _report(progress, losses, MC_PRINT_EVERY, "NLL")
    return model, losses, bkey


# --------------------------------------------------------------------------- Deep ensemble


@functools.cache
def _ensemble_constructor(config: UncertaintyConfig):
    # The guide's pitfall: the vmapped constructor takes only the mapped key;
    # constants are baked in (here via this closure), not passed as defaulted args.
    @nnx.vmap(in_axes=0, out_axes=0)
    def make_ensemble(key):
        model = GaussianMLP(dropout_rate=config.dropout_rate, rngs=nnx.Rngs(key))
        optimizer = nnx.Optimizer(model, adam(config.lr), wrt=nnx.Param)
        return model, optimizer

    return make_ensemble


def make_ensemble(tkey: jax.Array, config: UncertaintyConfig) -> tuple[GaussianMLP, nnx.Optimizer]:
    """The guide's vmapped constructor over ``split(tkey, config.members)``: stacked models,
    optimizers."""
    return _ensemble_constructor(config)(jax.random.split(tkey, config.members))


def bootstrap_indices(bkey: jax.Array, *, members: int, n: int) -> jax.Array:
    """Per-member bootstrap resamples [members, n]: ``randint(split(bkey, members)[m], (n,), 0, n)``."""
    keys = jax.random.split(bkey, members)
    return jnp.stack([jax.random.randint(keys[m], (n,), 0, n) for m in range(members)])


EnsembleStep = Literal["jit", "eager", "replay"]


def train_ensemble_loop(
    data: ToyData,
    tkey: jax.Array,
    bkey: jax.Array,
    config: UncertaintyConfig,
    *,
    step: EnsembleStep = "jit",
    nudge: int | None = None,
    progress: Progress = None,
) -> tuple[GaussianMLP, jax.Array]:
    """Train the ensemble the guide's way: a Python loop over the vmapped full-batch step.

    ``bkey`` is the key left after MC-Dropout training; member m trains on the fixed
    bootstrap resample ``bootstrap_indices(bkey)[m]``. ``step`` says how each step runs:
    - ``"eager"``: the vmapped step called without jit, op by op, literally as the guide's
      listing does (slow: Flax and JAX trace ``vmap`` and ``grad`` anew every step);
    - ``"replay"``: the guide's eager step once, recorded, then its primitives replayed
      eagerly on each step's state (:mod:`uncertainty_claims.eager_replay`): the same bits as ``"eager"``
      (tests/test_recipe.py) at a fraction of the cost;
    - ``"jit"``: the step under ``nnx.jit``, one fused program: another valid float order.
    ``nudge`` (not in the recipe; default off): see :func:`nudge_params`.

    Returns:
      (stacked models, per-step per-member losses [steps, members] float32).
    """
    if step not in ("jit", "eager", "replay"):
        raise ValueError(f"step must be 'jit', 'eager' or 'replay'; got {step!r}")
    models, optimizers = make_ensemble(tkey, config)
    if nudge is not None:
        nudge_params(models, nudge)
    idx = bootstrap_indices(bkey, members=config.members, n=data.x.shape[0])
    batch = {"x": data.x[idx], "y": data.y[idx]}
    steps = config.ensemble_steps
    if step == "replay":
        return models, _replay_steps(models, optimizers, batch, steps, progress)
    call = _jit_ensemble_train_step if step == "jit" else ensemble_train_step
    losses = []
    for i in range(1, steps + 1):
        loss = call(models, optimizers, batch)
        losses.append(loss)
        if progress is not None and i % ENSEMBLE_PRINT_EVERY == 0:
            progress(f"  step {i:4d}/{steps} | mean NLL {float(loss.mean()):.4f}")
    return models, jnp.asarray(stack_on_host(losses))


def _replay_steps(models, optimizers, batch, steps: int, progress: Progress) -> jax.Array:
    """`steps` eager ensemble steps, replayed from a recording of the first
    (`uncertainty_claims.eager_replay.replay_steps`); updates the models in place."""
    graphdef, state = nnx.split((models, optimizers))

    def functional_step(state, batch):
        models, optimizers = nnx.merge(graphdef, state)
        loss = ensemble_train_step(models, optimizers, batch)
        return nnx.state((models, optimizers)), loss

    def report(i: int, loss) -> None:
        if progress is not None and i % ENSEMBLE_PRINT_EVERY == 0:
            progress(f"  step {i:4d}/{steps} | mean NLL {float(loss.mean()):.4f}")

    state, losses = replay_steps(functional_step, state, batch, steps, on_step=report)
    nnx.update((models, optimizers), state)
    return jnp.asarray(stack_on_host(losses))


@functools.partial(jax.jit, static_argnames=("graphdef", "steps"))
def _ensemble_scan(graphdef, state, bx, by, *, steps: int):
    def body(state, _):
        models, optimizers = nnx.merge(graphdef, state)
        loss = ensemble_train_step(models, optimizers, {"x": bx, "y": by})
        return nnx.state((models, optimizers)), loss

    return jax.lax.scan(body, state, length=steps)


def train_ensemble(
    data: ToyData,
    tkey: jax.Array,
    bkey: jax.Array,
    config: UncertaintyConfig,
    *,
    nudge: int | None = None,
    progress: Progress = None,
) -> tuple[GaussianMLP, jax.Array]:
    """Same as :func:`train_ensemble_loop`, but all steps run in one jitted ``lax.scan``."""
    models, optimizers = make_ensemble(tkey, config)
    if nudge is not None:
        nudge_params(models, nudge)
    idx = bootstrap_indices(bkey, members=config.members, n=data.x.shape[0])
    graphdef, state = nnx.split((models, optimizers))
    state, losses = _ensemble_scan(
        graphdef, state, data.x[idx], data.y[idx], steps=config.ensemble_steps
    )
    nnx.update((models, optimizers), state)
    if progress is not None:
        _report(progress, losses.mean(axis=1), ENSEMBLE_PRINT_EVERY, "mean NLL")
    return models, losses
