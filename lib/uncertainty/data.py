"""The guide's toy data: two clusters of 1-D heteroscedastic regression points and a grid.

Recipe (docs/RECIPES.md, Uncertainty): ``k1, k2, k3 = split(dkey, 3)``; 60 points uniform on
[-4, -2] from ``k1``, 60 uniform on [2, 4] from ``k2`` (left cluster first);
``y = sin(1.5 x) + 0.1 x + normal(k3) * (0.05 + 0.05 |x|)``; evaluation grid
``linspace(-7, 7, 200)``.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

N_PER_CLUSTER = 60
LEFT_CLUSTER = (-4.0, -2.0)
RIGHT_CLUSTER = (2.0, 4.0)
GRID_RANGE = (-7.0, 7.0)
GRID_POINTS = 200


@dataclasses.dataclass(frozen=True)
class ToyData:
    """Training points (float32 jax arrays) and the evaluation grid with its region masks.

    Attributes:
      x: training inputs [120, 1], left cluster first.
      y: noisy targets [120, 1].
      noise_std: the true noise standard deviation 0.05 + 0.05|x| at each x [120, 1].
      grid: evaluation inputs linspace(-7, 7, 200) [200, 1].
      in_cluster: grid mask [200] (numpy bool), -4 <= x <= -2 or 2 <= x <= 4.
      away: grid mask [200], the complement of ``in_cluster`` (gap and tails).
      gap: grid mask [200], -2 < x < 2.
      tails: grid mask [200], x < -4 or x > 4.
    """

    x: jax.Array
    y: jax.Array
    noise_std: jax.Array
    grid: jax.Array
    in_cluster: np.ndarray
    away: np.ndarray
    gap: np.ndarray
    tails: np.ndarray

    @classmethod
    def from_arrays(
        cls, x: jax.Array, noise_std: jax.Array, y: jax.Array, grid: jax.Array
    ) -> ToyData:
        """The data with these arrays and the grid's region masks."""
        return cls(x=x, y=y, noise_std=noise_std, grid=grid, **region_masks(np.asarray(grid)))


def root_keys(root_seed: int) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The guide's top-level keys: ``dkey, tkey, bkey = split(key(root_seed), 3)``."""
    dkey, tkey, bkey = jax.random.split(jax.random.key(root_seed), 3)
    return dkey, tkey, bkey


def true_function(x):
    """Noise-free target sin(1.5 x) + 0.1 x (works on numpy and jax arrays)."""
    return np.sin(1.5 * x) + 0.1 * x if isinstance(x, np.ndarray) else jnp.sin(1.5 * x) + 0.1 * x


def region_masks(grid: np.ndarray) -> dict[str, np.ndarray]:
    """Boolean masks ``in_cluster``, ``away``, ``gap``, ``tails`` over a 1-D array of inputs."""
    g = np.asarray(grid).reshape(-1)
    left = (g >= LEFT_CLUSTER[0]) & (g <= LEFT_CLUSTER[1])
    right = (g >= RIGHT_CLUSTER[0]) & (g <= RIGHT_CLUSTER[1])
    in_cluster = left | right
    gap = (g > LEFT_CLUSTER[1]) & (g < RIGHT_CLUSTER[0])
    tails = (g < LEFT_CLUSTER[0]) | (g > RIGHT_CLUSTER[1])
    return {"in_cluster": in_cluster, "away": ~in_cluster, "gap": gap, "tails": tails}


def _draws(dkey: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The random part of the data: inputs x [120, 1] and the standard normal noise draws."""
    k1, k2, k3 = jax.random.split(dkey, 3)
    x = jnp.concatenate(
        [
            jax.random.uniform(
                k1, (N_PER_CLUSTER, 1), minval=LEFT_CLUSTER[0], maxval=LEFT_CLUSTER[1]
            ),
            jax.random.uniform(
                k2, (N_PER_CLUSTER, 1), minval=RIGHT_CLUSTER[0], maxval=RIGHT_CLUSTER[1]
            ),
        ],
        axis=0,
    )
    return x, jax.random.normal(k3, x.shape)


def _toy_arrays(x: jax.Array, z: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    """noise_std, y and the grid from the draws (`x` and `z` stacked or not), op by op in the
    guide's order: compiled together, XLA would round y differently."""
    noise_std = 0.05 + 0.05 * jnp.abs(x)
    y = jnp.sin(1.5 * x) + 0.1 * x + z * (0.05 + 0.05 * jnp.abs(x))
    grid = jnp.linspace(*GRID_RANGE, GRID_POINTS)[:, None]
    return noise_std, y, grid


def make_data(dkey: jax.Array) -> ToyData:
    """Build the guide's training set and evaluation grid from the data key ``dkey``."""
    x, z = _draws(dkey)
    return ToyData.from_arrays(x, *_toy_arrays(x, z))


_stacked_draws = jax.jit(jax.vmap(_draws))


def stacked_arrays(dkeys: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """The data of each of the stacked keys ``dkeys`` [runs] (`ToyData.from_arrays` takes
    them): x, noise_std and y stacked on a leading axis, and the grid, the same for every run.
    They are `make_data`'s bits for each key: the draws made by one program (threefry and its
    transforms give a batch of keys the bits of each key alone) and the arithmetic op by op
    on the whole stack (tests/test_recipe.py). Traceable: under `jax.eval_shape` they are
    the data's shapes, drawn and computed by no program."""
    x, z = _stacked_draws(dkeys)
    return x, *_toy_arrays(x, z)
