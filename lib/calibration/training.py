"""Training of the calibration nets exactly as RECIPE.md A prescribes.

Three implementations of the same recipe, each a valid float order:
- `train_net_faithful`: the documents' computation order (RECIPE.md C), one seed and one
  net at a time: a Python loop over batches gathered in NumPy, each passed to one compiled
  step. The step is `jax.jit` over the split model and optimizer state, tracing the same
  update as the documents' `nnx.jit` step; it gives the same bits as `train_net_per_step`
  (claims/test_recipe.py) at a third of the cost.
- `train_net_per_step`: the documents' code as written (`nnx.jit` step, device arrays);
  the reference the faithful path is checked against.
- `train_nets`: all steps of one net in one `jax.lax.scan`, the seeds stacked under
  `jax.vmap` and splittable over devices (lib/sharding.py). Another valid order: its
  gradients differ from the faithful ones in the last bits from step 1, and the chaotic
  nets amplify that (lib/orders.py judges every claim on each order).
All draw the same batches in the same order from the recipe's permutations.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx
from jax.sharding import Mesh

from lib.calibration.models import ReluMLP, YatMLP, build_model
from lib.numerics import full_precision, stack_on_host
from lib.optimizers import adam
from lib.sharding import over_runs, replicate


@dataclass(frozen=True)
class TrainConfig:
    """Hyperparameters of the calibration recipe (RECIPE.md A, "Training")."""

    learning_rate: float = 4e-3
    epochs: int = 12
    batch_size: int = 256


def batch_indices(seed: int, n_train: int, config: TrainConfig) -> np.ndarray:
    """Training-row indices of every step for one seed, [epochs * batches, batch_size].

    Epoch e visits RandomState(1000 * seed + e).permutation(n_train) in batches
    starting at range(0, n_train - batch_size, batch_size); the tail is dropped.
    """
    starts = range(0, n_train - config.batch_size, config.batch_size)
    steps = []
    for epoch in range(config.epochs):
        order = np.random.RandomState(1000 * seed + epoch).permutation(n_train)
        steps.extend(order[s : s + config.batch_size] for s in starts)
    return np.stack(steps).astype(np.int32)


def _cross_entropy(model: nnx.Module, xb: jax.Array, yb: jax.Array) -> jax.Array:
    return optax.softmax_cross_entropy_with_integer_labels(model(xb), yb).mean()


@partial(jax.jit, static_argnames=("graphdef", "learning_rate", "mesh"))
def _scan_train(graphdef, params, images, labels, steps_idx, *, learning_rate, mesh=None):
    tx = optax.adam(learning_rate)

    def train_seeds(params, steps_idx, images, labels):
        def train_one_seed(params, idx):
            def step(carry, batch):
                params, opt_state = carry
                loss, grads = jax.value_and_grad(
                    lambda p: _cross_entropy(nnx.merge(graphdef, p), images[batch], labels[batch])
                )(params)
                updates, opt_state = tx.update(grads, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), loss

            (params, _), losses = jax.lax.scan(step, (params, tx.init(params)), idx)
            return params, losses

        return jax.vmap(train_one_seed)(params, steps_idx)

    return over_runs(train_seeds, mesh, (params, steps_idx), (images, labels))


@full_precision
def train_nets(
    net: str,
    seeds: tuple[int, ...],
    train_images: np.ndarray,
    train_labels: np.ndarray,
    config: TrainConfig = TrainConfig(),
    *,
    mesh: Mesh | None = None,
) -> tuple[list[YatMLP | ReluMLP], np.ndarray]:
    """Train one net per seed with the recipe; returns the models and losses [seeds, steps].

    Each model starts from the recipe's plain construction (`build_model`), so
    stacking the seeds cannot change any layer's initial values. With a `mesh`
    (`lib.sharding.run_mesh()`), the seeds are split over its devices.
    """
    models = [build_model(net, seed, train_images) for seed in seeds]
    graphdef, _ = nnx.split(models[0])
    stacked = jax.tree.map(lambda *leaves: jnp.stack(leaves), *[nnx.state(m) for m in models])
    steps_idx = np.stack([batch_indices(s, len(train_images), config) for s in seeds])
    inputs = (stacked, train_images, np.asarray(train_labels, dtype=np.int32), steps_idx)
    params, losses = _scan_train(
        graphdef,
        *(jax.tree.map(jnp.asarray, inputs) if mesh is None else replicate(inputs, mesh)),
        learning_rate=config.learning_rate,
        mesh=mesh,
    )
    if mesh is not None:
        params = jax.tree.map(jnp.asarray, jax.device_get(params))  # off the mesh, onto this host
    trained = [
        nnx.merge(graphdef, jax.tree.map(lambda a, i=i: a[i], params)) for i in range(len(seeds))
    ]
    return trained, np.asarray(losses)


def _update(model: nnx.Module, optimizer: nnx.Optimizer, xb: jax.Array, yb: jax.Array):
    """The documents' training step: loss and gradients, one Adam update; returns the loss."""
    loss, grads = nnx.value_and_grad(_cross_entropy)(model, xb, yb)
    optimizer.update(model, grads)
    return loss


_train_step = nnx.jit(_update)


@partial(jax.jit, static_argnums=0)
def _split_step(graphdef, state, xb, yb):
    # `_update` traced over plain state: the program `nnx.jit` compiles, without nnx.jit's
    # per-call graph traversal on the host.
    model, optimizer = nnx.merge(graphdef, state)
    loss = _update(model, optimizer, xb, yb)
    return nnx.state((model, optimizer)), loss


@full_precision
def train_net_faithful(
    net: str,
    seed: int,
    train_images: np.ndarray,
    train_labels: np.ndarray,
    config: TrainConfig = TrainConfig(),
) -> tuple[YatMLP | ReluMLP, np.ndarray]:
    """One seed of one net in the documents' order; returns the model and losses [steps].

    Each batch is gathered on the host (`train_x[idx]`), as the calibration script does,
    and handed to one compiled step.
    """
    model = build_model(net, seed, train_images)
    optimizer = nnx.Optimizer(model, adam(config.learning_rate), wrt=nnx.Param)
    graphdef, state = nnx.split((model, optimizer))
    labels = np.asarray(train_labels, dtype=np.int32)
    losses = []
    for idx in batch_indices(seed, len(train_images), config):
        state, loss = _split_step(graphdef, state, train_images[idx], labels[idx])
        losses.append(loss)
    model, _ = nnx.merge(graphdef, state)
    return model, stack_on_host(losses)


@full_precision
def train_net_per_step(
    net: str,
    seed: int,
    train_images: np.ndarray,
    train_labels: np.ndarray,
    config: TrainConfig = TrainConfig(),
) -> tuple[YatMLP | ReluMLP, np.ndarray]:
    """The documents' code as written: one `nnx.jit` step per batch, gathered on the device.

    The reference that `train_net_faithful` must equal bit for bit; slower, since each step
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
