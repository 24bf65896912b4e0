"""The reproductions follow the published recipes (RECIPE.md A and B) to the letter.

Not claims of the documents: checks that our restructured code (scan, vmap, stacking)
draws the same data, batches and initial values as the recipes' plain code.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from lib.calibration.models import build_model
from lib.calibration.training import TrainConfig, batch_indices, train_nets
from lib.uncertainty import GaussianMLP, UncertaintyConfig, make_ensemble, root_keys
from lib.uncertainty.data import make_data
from lib.uncertainty.experiment import run


def same_values(a, b) -> bool:
    """Whether two pytrees of arrays are equal leaf by leaf, bit for bit."""
    return jax.tree.all(jax.tree.map(lambda x, y: bool(jnp.array_equal(x, y)), a, b))


def toy_training_set() -> tuple[np.ndarray, np.ndarray, TrainConfig]:
    """2,000 random images and labels and a one-epoch recipe: quick to train, same code."""
    rng = np.random.default_rng(0)
    return (
        rng.random((2000, 784), dtype=np.float32),
        rng.integers(0, 10, 2000),
        TrainConfig(epochs=1),
    )


def test_batches_follow_the_recipe():
    config = TrainConfig()
    steps = batch_indices(1, 55000, config)
    assert steps.shape == (12 * 214, 256)
    for epoch in (0, 11):
        order = np.random.RandomState(1000 * 1 + epoch).permutation(55000)
        epoch_steps = steps[epoch * 214 : (epoch + 1) * 214]
        np.testing.assert_array_equal(epoch_steps.reshape(-1), order[: 214 * 256])


def test_stacked_initial_values_equal_plain_construction():
    """Stacking seeds on a leading axis (as train_nets does) keeps every layer's initial values."""
    images = np.random.default_rng(0).random((55000, 784), dtype=np.float32)
    for net in ("yat", "relu"):
        plain = [nnx.state(build_model(net, seed, images)) for seed in (0, 1, 2)]
        stacked = jax.tree.map(lambda *leaves: jnp.stack(leaves), *plain)
        for index, state in enumerate(plain):
            unstacked = jax.tree.map(lambda a, i=index: a[i], stacked)
            assert same_values(state, unstacked)


def test_readout_draws_first_key_in_yat_net():
    """Recipe A: the Yat layer draws no key, so the Yat readout gets the ReLU net's first draw."""
    images = np.zeros((55000, 784), np.float32)
    yat, relu = build_model("yat", 0, images), build_model("relu", 0, images)
    first_kernel = nnx.Linear(50, 10, rngs=nnx.Rngs(0)).kernel[...]
    np.testing.assert_array_equal(yat.readout.kernel[...], first_kernel)
    assert relu.l2.kernel[...].shape == (50, 10)


def test_vmapped_ensemble_matches_plain_members():
    """Recipe B: the vmapped constructor gives member m the values of GaussianMLP(rngs=Rngs(keys[m]))."""
    _, tkey, _ = root_keys(0)
    models, _ = make_ensemble(tkey)
    stacked = nnx.state(models, nnx.Param)
    for m, key in enumerate(jax.random.split(tkey, 5)):
        plain = nnx.state(GaussianMLP(rngs=nnx.Rngs(key)), nnx.Param)
        member = jax.tree.map(lambda a, i=m: a[i], stacked)
        assert same_values(plain, member)


def test_toy_data_follows_the_recipe():
    dkey, _, _ = root_keys(0)
    data = make_data(dkey)
    k1, k2, k3 = jax.random.split(dkey, 3)
    x = jnp.concatenate(
        [
            jax.random.uniform(k1, (60, 1), minval=-4, maxval=-2),
            jax.random.uniform(k2, (60, 1), minval=2, maxval=4),
        ]
    )
    y = jnp.sin(1.5 * x) + 0.1 * x + jax.random.normal(k3, x.shape) * (0.05 + 0.05 * jnp.abs(x))
    np.testing.assert_array_equal(np.asarray(data.x), np.asarray(x))
    np.testing.assert_array_equal(np.asarray(data.y), np.asarray(y))
    np.testing.assert_array_equal(np.asarray(data.grid)[:, 0], np.asarray(jnp.linspace(-7, 7, 200)))


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="a CPU computes float32 dots in full")
def test_full_precision_changes_no_bit_on_a_cpu():
    """The experiments trace their matrix products at 'highest' precision (lib/numerics.py)
    for GPUs' sake; on a CPU the trained values are those of JAX's default, bit for bit."""
    images, labels, config = toy_training_set()
    for net in ("yat", "relu"):
        full = train_nets(net, (0, 1), images, labels, config)
        default = train_nets.__wrapped__(net, (0, 1), images, labels, config)
        np.testing.assert_array_equal(full[1], default[1])
        for a, b in zip(full[0], default[0], strict=True):
            assert same_values(nnx.state(a), nnx.state(b))
    small = UncertaintyConfig(mc_steps=40, mc_samples=6, ensemble_steps=40)
    full, default = run(0, config=small).as_arrays(), run.__wrapped__(0, config=small).as_arrays()
    for name, array in full.items():
        np.testing.assert_array_equal(array, default[name], err_msg=name)


def test_nets_trained_side_by_side_equal_nets_trained_alone():
    """`run_nets` trains the two nets in threads at the same time; each net's values are
    those of training it alone, bit for bit."""
    images, labels, config = toy_training_set()
    alone = {net: train_nets(net, (0, 1), images, labels, config) for net in ("yat", "relu")}
    with ThreadPoolExecutor(max_workers=2) as pool:
        jobs = {n: pool.submit(train_nets, n, (0, 1), images, labels, config) for n in alone}
    for net, job in jobs.items():
        together = job.result()
        np.testing.assert_array_equal(together[1], alone[net][1])
        for a, b in zip(together[0], alone[net][0], strict=True):
            assert same_values(nnx.state(a), nnx.state(b))
