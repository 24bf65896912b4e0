"""The two contestants of "Calibrating a Bounded Net": a Yat-kernel MLP and a ReLU MLP.

Both map 784 pixels to 50 features to 10 logits through the same kind of linear
readout; only the feature layer differs (docs/RECIPES.md, Calibration, "Models").
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

HIDDEN = 50
N_CLASSES = 10
N_PIXELS = 784


def _inverse_softplus(value: float) -> jax.Array:
    return jnp.log(jnp.expm1(jnp.asarray(value, dtype=jnp.float32)))


class YatLayer(nnx.Module):
    """K units, each the Yat kernel score of the input against a prototype row of W.

    Score of unit k: (x.w_k + b)^2 / (|x|^2 + |w_k|^2 - 2 x.w_k + eps), with one
    scalar b and one scalar eps shared by all units, each stored as a raw
    parameter whose softplus is the value (both start at 1.0).
    """

    def __init__(self, prototypes: jax.Array, *, b0: float = 1.0, eps0: float = 1.0):
        self.W = nnx.Param(jnp.asarray(prototypes, dtype=jnp.float32))
        self.log_b = nnx.Param(jnp.full((), _inverse_softplus(b0)))
        self.log_eps = nnx.Param(jnp.full((), _inverse_softplus(eps0)))

    def __call__(self, x: jax.Array) -> jax.Array:
        b = jax.nn.softplus(self.log_b[...])
        eps = jax.nn.softplus(self.log_eps[...])
        w = self.W[...]
        dot = x @ w.T
        sq_dist = jnp.sum(x**2, -1, keepdims=True) + jnp.sum(w**2, -1) - 2 * dot
        return (dot + b) ** 2 / (sq_dist + eps)


class YatMLP(nnx.Module):
    """Yat feature layer (draws no key) followed by a linear readout to 10 logits."""

    def __init__(self, prototypes: jax.Array, *, rngs: nnx.Rngs):
        self.yat = YatLayer(prototypes)
        self.readout = nnx.Linear(HIDDEN, N_CLASSES, rngs=rngs)

    def features(self, x: jax.Array) -> jax.Array:
        """Kernel scores of the Yat layer, [N, 50]; their row max is the "field magnitude"."""
        return self.yat(x)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.readout(self.yat(x))


class ReluMLP(nnx.Module):
    """Linear(784, 50), relu, Linear(50, 10)."""

    def __init__(self, *, rngs: nnx.Rngs):
        self.l1 = nnx.Linear(N_PIXELS, HIDDEN, rngs=rngs)
        self.l2 = nnx.Linear(HIDDEN, N_CLASSES, rngs=rngs)

    def features(self, x: jax.Array) -> jax.Array:
        """Hidden activations after the relu, [N, 50]."""
        return jax.nn.relu(self.l1(x))

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.l2(self.features(x))


def _construct(net: str, rngs: nnx.Rngs, prototypes: jax.Array) -> YatMLP | ReluMLP:
    if net == "yat":
        return YatMLP(prototypes, rngs=rngs)
    if net == "relu":
        return ReluMLP(rngs=rngs)
    raise ValueError(f"net must be 'yat' or 'relu'; got {net!r}")


def yat_prototype_indices(seed: int, n_train: int) -> np.ndarray:
    """Rows of the training set that seed the Yat prototypes for this seed."""
    return np.random.RandomState(seed + 1).permutation(n_train)[:HIDDEN]


def _prototype_rows(net: str, seeds: Sequence[int], n_train: int) -> np.ndarray:
    """Each seed's Yat prototype rows [seeds, HIDDEN] (none for a ReLU net: [seeds, 0])."""
    if net != "yat":
        return np.zeros((len(seeds), 0), np.int32)
    return np.stack([yat_prototype_indices(seed, n_train) for seed in seeds])


def build_model(net: str, seed: int, train_images: np.ndarray) -> YatMLP | ReluMLP:
    """The recipe's plain construction of one net for one seed.

    Args:
      net: "yat" or "relu".
      seed: the seed s; the net is built with nnx.Rngs(s).
      train_images: float32 [55000, 784] training images (prototype source).
    """
    rows = _prototype_rows(net, (seed,), len(train_images))[0]
    return _construct(net, nnx.Rngs(seed), jax.device_put(train_images[rows]))


def build_models(
    net: str, seeds: Sequence[int], train_images: np.ndarray
) -> tuple[nnx.GraphDef, nnx.State]:
    """`build_model` for each seed, as one program: the nets' graph definition and their
    states stacked on a leading axis. On a CPU these are `build_model`'s bits
    (tests/test_recipe.py); on a TPU, XLA's compiled initializers differ from its eager
    ones in the last bits, another valid float order of the same draws."""
    prototypes = train_images[_prototype_rows(net, seeds, len(train_images))]
    return _graphdef(net, prototypes[0]), _stacked_states(
        net, jnp.asarray(seeds, jnp.int32), prototypes
    )


def stacked_shapes(
    net: str, n_seeds: int, train_images: np.ndarray
) -> tuple[nnx.GraphDef, nnx.State]:
    """What `build_models` returns for `n_seeds` seeds, with `jax.ShapeDtypeStruct`s for the
    states: traced, computed by no program (the prototypes' shape is one seed's rows)."""
    one = train_images[_prototype_rows(net, (0,), len(train_images))]
    prototypes = jax.ShapeDtypeStruct((n_seeds, *one.shape[1:]), one.dtype)
    seeds = jax.ShapeDtypeStruct((n_seeds,), jnp.int32)
    return _graphdef(net, one[0]), jax.eval_shape(partial(_stacked_states, net), seeds, prototypes)


def _graphdef(net: str, prototypes: np.ndarray) -> nnx.GraphDef:
    return nnx.graphdef(nnx.eval_shape(lambda: _construct(net, nnx.Rngs(0), prototypes)))


@partial(jax.jit, static_argnums=0)
def _stacked_states(net: str, seeds: jax.Array, prototypes: jax.Array) -> nnx.State:
    def one(seed: jax.Array, prototypes: jax.Array) -> nnx.State:
        return nnx.state(_construct(net, nnx.Rngs(jax.random.key(seed)), prototypes))

    return jax.vmap(one)(seeds, prototypes)
