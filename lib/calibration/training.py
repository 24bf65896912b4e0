"""Training of the calibration nets exactly as docs/RECIPES.md (Calibration) prescribes.

Three implementations of the same recipe, each a valid float order:
- `train_nets_faithful`: the documents' computation order (docs/RECIPES.md, Computation order), one seed and one
  net at a time, each batch through the documents' step (their `nnx.jit` update traced over
  the split model and optimizer state), in chunks of steps scanned on the device once each
  run has proved on its first chunk that the scan gives the step-by-step loop's bits. It
  gives the same bits as `train_net_per_step` (tests/test_recipe.py) at about a quarter of
  the cost.
- `train_net_per_step`: the documents' code as written (`nnx.jit` step, device arrays);
  the reference the faithful path is checked against.
- `train_nets`: all steps of one net in one `jax.lax.scan`, the seeds stacked under
  `jax.vmap` in chunks (`SEED_CHUNK`) and splittable over devices (lib/sharding.py).
  Another valid order: its gradients differ from the faithful ones in the last bits from
  step 1, and the chaotic nets amplify that (the audit judges every claim on each order:
  lib/orders/).
- `train_twins`: float-rounding twins of one seed (initial weights one float32 step off),
  batched under `jax.vmap`: the extra orders the verdicts are taken over.
All draw the same batches in the same order from the recipe's permutations.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx
from jax.sharding import Mesh

from ..nudge import nudge_params
from ..numerics import full_precision, same_bits, stack_on_host
from ..optimizers import adam
from ..sharding import compile_aside, input_shapes, over_runs, placed_inputs
from . import orders
from .models import ReluMLP, YatMLP, build_model, build_models, stacked_shapes


@dataclass(frozen=True)
class TrainConfig:
    """Hyperparameters of the calibration recipe (docs/RECIPES.md, Calibration, "Training")."""

    learning_rate: float = 4e-3
    epochs: int = 12
    batch_size: int = 256


def batch_indices(seed: int, n_train: int, config: TrainConfig) -> np.ndarray:
    """Training-row indices of every step for one seed, [epochs * batches, batch_size]
    (`orders.batch_indices`)."""
    return orders.batch_indices(seed, n_train, config.epochs, config.batch_size)


def _cross_entropy(model: nnx.Module, xb: jax.Array, yb: jax.Array) -> jax.Array:
    return optax.softmax_cross_entropy_with_integer_labels(model(xb), yb).mean()


SEED_CHUNK = 125
"""`train_nets` trains its seeds in chunks of this many, one chunk after another, each
chunk's seeds batched under `jax.vmap`: on a TPU and on a CPU a step of 1,000 seeds takes
less time in chunks than with all of them batched at once (bench.py `sweep.calibration_first_s`)."""


@partial(jax.jit, static_argnames=("graphdef", "learning_rate", "mesh", "seed_chunk"))
def _scan_train(
    graphdef, params, images, labels, steps_idx, *, learning_rate, mesh=None, seed_chunk
):
    tx = optax.adam(learning_rate)

    def train_seeds(params, steps_idx, images, labels):
        def train_one_seed(seed):
            params, idx = seed

            def step(carry, batch):
                params, opt_state = carry
                loss, grads = jax.value_and_grad(
                    lambda p: _cross_entropy(nnx.merge(graphdef, p), images[batch], labels[batch])
                )(params)
                updates, opt_state = tx.update(grads, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), loss

            (params, _), losses = jax.lax.scan(step, (params, tx.init(params)), idx)
            return params, losses

        return jax.lax.map(train_one_seed, (params, steps_idx), batch_size=seed_chunk)

    return over_runs(train_seeds, mesh, (params, steps_idx), (images, labels))


ONE_BY_ONE_SEEDS = 16
"""`train_nets` builds up to this many nets one by one: one program's compilation (seconds on
a CPU) would cost more."""


@full_precision
def train_nets(
    net: str,
    seeds: tuple[int, ...],
    train_images: np.ndarray,
    train_labels: np.ndarray,
    config: TrainConfig = TrainConfig(),
    *,
    mesh: Mesh | None = None,
    inputs_on: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext,
) -> tuple[list[YatMLP | ReluMLP], np.ndarray]:
    """Train one net per seed with the recipe; returns the models and losses [seeds, steps].

    The training program compiles in a thread while the batch orders are drawn and the nets
    built: a few seeds' nets one by one (`build_model`) and stacked; a sweep's many by one
    program (`build_models`), under the context `inputs_on()`, the caller's choice of where
    (beside an accelerator `placement.on_host`: a CPU run's initial weights, compiled in a
    fraction of the chip's time). With a `mesh` (`uncertainty_claims.sharding.run_mesh()`),
    the seeds are split over its devices.
    """
    labels = np.asarray(train_labels, dtype=np.int32)
    graphdef, states = stacked_shapes(net, len(seeds), train_images)
    steps = orders.n_steps(len(train_images), config.epochs, config.batch_size)
    orders_shape = jax.ShapeDtypeStruct((len(seeds), steps, config.batch_size), np.int32)
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="train-nets") as pool:
        program = compile_aside(
            pool,
            _scan_train,
            graphdef,
            *input_shapes((states, train_images, labels, orders_shape), mesh),
            learning_rate=config.learning_rate,
            mesh=mesh,
            seed_chunk=SEED_CHUNK,
        )
        steps_idx = pool.submit(
            orders.many_batch_indices, seeds, len(train_images), config.epochs, config.batch_size
        )
        if len(seeds) > ONE_BY_ONE_SEEDS:
            with inputs_on():
                _, stacked = build_models(net, seeds, train_images)
        else:
            _, stacked = _stacked([build_model(net, seed, train_images) for seed in seeds])
        inputs = placed_inputs((stacked, train_images, labels, steps_idx.result()), mesh)
        params, losses = program.result()(*inputs)
    return _unstacked(graphdef, params, len(seeds)), np.asarray(losses)


# Stacking and unstacking happen on the host: on an accelerator, each eager stack, slice
# or conversion of another shape would compile a program of its own there, and copies are the same bits wherever they are made.


def _stacked(models: list[nnx.Module]) -> tuple[nnx.GraphDef, nnx.State]:
    """The models' shared graph definition and their states stacked on a leading axis (host
    arrays)."""
    graphdef, _ = nnx.split(models[0])
    states = jax.device_get([nnx.state(model) for model in models])
    return graphdef, jax.tree.map(lambda *leaves: np.stack(leaves), *states)


def _unstacked(graphdef: nnx.GraphDef, params: nnx.State, n: int) -> list:
    """The `n` models whose states `params` stacks, on the default device."""
    host = jax.device_get(params)
    return [
        nnx.merge(graphdef, jax.device_put(jax.tree.map(lambda a, i=i: a[i], host)))
        for i in range(n)
    ]


@partial(jax.jit, static_argnames=("graphdef", "learning_rate"))
def _scan_twins(graphdef, params, images, labels, steps_idx, *, learning_rate):
    """All steps of one seed's batches for a stack of twins (leading axis of `params`), the
    twins under `jax.vmap` and the batches shared: each batch is gathered once and each
    layer's products for all twins are one batched matmul."""
    tx = optax.adam(learning_rate)

    def step(carry, batch):
        params, opt_state = carry
        xb, yb = images[batch], labels[batch]

        def one(params, opt_state):
            loss, grads = jax.value_and_grad(
                lambda p: _cross_entropy(nnx.merge(graphdef, p), xb, yb)
            )(params)
            updates, opt_state = tx.update(grads, opt_state, params)
            return optax.apply_updates(params, updates), opt_state, loss

        params, opt_state, losses = jax.vmap(one)(params, opt_state)
        return (params, opt_state), losses

    (params, _), losses = jax.lax.scan(step, (params, jax.vmap(tx.init)(params)), steps_idx)
    return params, losses.T


@full_precision
def train_twins(
    net: str,
    seed: int,
    nudges: tuple[int, ...],
    train_images: np.ndarray,
    train_labels: np.ndarray,
    config: TrainConfig = TrainConfig(),
) -> tuple[list[YatMLP | ReluMLP], np.ndarray]:
    """Float-rounding twins of one seed (not in the recipe): the recipe's net with its
    initial weights nudged by each seed in `nudges` (lib/nudge.py), all trained in one scan
    (`_scan_twins`, another valid float order); returns the models and losses [twins, steps].
    Batched this way a twin costs about a third of one trained alone on 2 CPU cores."""
    models = [build_model(net, seed, train_images) for _ in nudges]
    for model, nudge in zip(models, nudges, strict=True):
        nudge_params(model, nudge)
    graphdef, stacked = _stacked(models)
    steps_idx = batch_indices(seed, len(train_images), config)
    params, losses = _scan_twins(
        graphdef,
        stacked,
        *jax.device_put((train_images, np.asarray(train_labels, dtype=np.int32), steps_idx)),
        learning_rate=config.learning_rate,
    )
    return _unstacked(graphdef, params, len(nudges)), np.asarray(losses)


def _update(model: nnx.Module, optimizer: nnx.Optimizer, xb: jax.Array, yb: jax.Array):
    """The documents' training step: loss and gradients, one Adam update; returns the loss."""
    loss, grads = nnx.value_and_grad(_cross_entropy)(model, xb, yb)
    optimizer.update(model, grads)
    return loss


_train_step = nnx.jit(_update)


def _step(graphdef, state, xb, yb):
    model, optimizer = nnx.merge(graphdef, state)
    loss = _update(model, optimizer, xb, yb)
    return nnx.state((model, optimizer)), loss


# `_update` traced over plain state: the program `nnx.jit` compiles, without nnx.jit's
# per-call graph traversal on the host.
_split_step = jax.jit(_step, static_argnums=0)


@partial(jax.jit, static_argnums=0)
def _scanned_steps(graphdef, state, images, labels, steps_idx):
    """`_step` on each batch of a chunk (`steps_idx` [steps, batch] rows of the device-resident
    training set) in turn, in one program."""
    return jax.lax.scan(
        lambda state, idx: _step(graphdef, state, images[idx], labels[idx]), state, steps_idx
    )


SCAN_CHUNK = 24
"""Steps per call of `_scanned_steps` (2,568 = 107 x 24)."""


def _looped_steps(graphdef, state, xs, ys):
    losses = []
    for xb, yb in zip(xs, ys, strict=True):
        state, loss = _split_step(graphdef, state, xb, yb)
        losses.append(loss)
    return state, stack_on_host(losses)


@full_precision  # in its own thread: JAX's precision setting is per thread
def _train_seed_faithful(
    net: str,
    seed: int,
    host_set: tuple[np.ndarray, np.ndarray],
    device_set: tuple[jax.Array, jax.Array],
    config: TrainConfig,
) -> tuple[YatMLP | ReluMLP, np.ndarray]:
    images, labels = host_set
    model = build_model(net, seed, images)
    optimizer = nnx.Optimizer(model, adam(config.learning_rate), wrt=nnx.Param)
    graphdef, state = nnx.split((model, optimizer))
    steps = batch_indices(seed, len(images), config)
    chunks = [steps[i : i + SCAN_CHUNK] for i in range(0, len(steps), SCAN_CHUNK)]
    losses, scan = [], False
    for i, idx in enumerate(chunks):
        if i == 0 and len(idx) == SCAN_CHUNK:
            looped = _looped_steps(graphdef, state, images[idx], labels[idx])
            scan = same_bits(looped, _scanned_steps(graphdef, state, *device_set, idx))
            state, chunk_losses = looped
        elif scan and len(idx) == SCAN_CHUNK:
            state, chunk_losses = _scanned_steps(graphdef, state, *device_set, idx)
        else:
            state, chunk_losses = _looped_steps(graphdef, state, images[idx], labels[idx])
        losses.append(chunk_losses)
    model, _ = nnx.merge(graphdef, state)
    return model, np.concatenate([np.zeros(0, np.float32), *map(np.asarray, losses)])


def train_nets_faithful(
    net: str,
    seeds: tuple[int, ...],
    train_images: np.ndarray,
    train_labels: np.ndarray,
    config: TrainConfig = TrainConfig(),
) -> tuple[list[YatMLP | ReluMLP], np.ndarray]:
    """Train one net per seed in the documents' order; returns the models and losses
    [seeds, steps].

    Each seed is trained alone, as the documents do (side by side in threads: each program
    is the one it would be alone). Each batch passes through the documents' step. The
    steps run in chunks of `SCAN_CHUNK`, each a `jax.lax.scan` of that step, which only
    moves the loop from the host to the device: on this stack XLA compiles its body as
    the same arithmetic (all 12 epochs of the published seeds: the same bits). Each seed
    proves it on its first chunk (one differing operation would show
    within a few steps of real data), run both ways; if the bits differ, every step runs as
    one call, with the batch gathered on the host as the calibration script does. Steps
    past the last whole chunk run one call each too.

    Every seed computes on the caller's choice of device: its `jax.default_device`, a
    setting each seed's thread takes over from the caller (threads do not inherit it).
    """
    labels = np.asarray(train_labels, dtype=np.int32)
    host_set = (train_images, labels)
    device_set = (jnp.asarray(train_images), jnp.asarray(labels))  # one copy for all seeds
    device = jax.config.jax_default_device

    def train_seed(*args):
        with contextlib.nullcontext() if device is None else jax.default_device(device):
            return _train_seed_faithful(*args)

    with ThreadPoolExecutor(max_workers=max(len(seeds), 1)) as pool:
        trained = list(pool.map(lambda s: train_seed(net, s, host_set, device_set, config), seeds))
    models, losses = [m for m, _ in trained], [loss for _, loss in trained]
    return models, np.stack(losses) if losses else np.zeros((0, 0), np.float32)


@full_precision
def train_net_per_step(
    net: str,
    seed: int,
    train_images: np.ndarray,
    train_labels: np.ndarray,
    config: TrainConfig = TrainConfig(),
) -> tuple[YatMLP | ReluMLP, np.ndarray]:
    """The documents' code as written: one `nnx.jit` step per batch, gathered on the device.

    The reference that `train_nets_faithful` must equal bit for bit; slower, since each step
    traverses the module graph on the host and gathers the batch eagerly."""
    model = build_model(net, seed, train_images)
    optimizer = nnx.Optimizer(model, adam(config.learning_rate), wrt=nnx.Param)
    images = jnp.asarray(train_images)
    labels = jnp.asarray(train_labels, dtype=jnp.int32)
    losses = [
        _train_step(model, optimizer, images[idx], labels[idx])
        for idx in batch_indices(seed, len(train_images), config)
    ]
    return model, stack_on_host(losses)
