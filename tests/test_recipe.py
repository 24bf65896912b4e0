"""The reproductions follow the published recipes (docs/RECIPES.md, Calibration and Uncertainty) to the letter.

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

from uncertainty_claims.calibration import orders, training
from uncertainty_claims.calibration.experiment import _chunked, _evaluation, load_split
from uncertainty_claims.calibration.models import build_model, build_models, stacked_shapes
from uncertainty_claims.calibration.training import (
    TrainConfig,
    batch_indices,
    train_net_per_step,
    train_nets,
    train_nets_faithful,
)
from uncertainty_claims.uncertainty.config import UncertaintyConfig
from uncertainty_claims.uncertainty.data import ToyData, make_data, root_keys, stacked_arrays
from uncertainty_claims.uncertainty.experiment import run
from uncertainty_claims.uncertainty.model import GaussianMLP
from uncertainty_claims.uncertainty.training import (
    make_ensemble,
    mc_batch_key_after,
    train_ensemble_loop,
    train_mc_dropout,
    train_mc_dropout_loop,
)

RECIPE = UncertaintyConfig()
THIRTY_STEPS = UncertaintyConfig(ensemble_steps=30)
FOUR_STEPS = UncertaintyConfig(ensemble_steps=4)


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


def test_a_sweeps_orders_drawn_in_child_processes_are_each_seeds_own():
    seeds = range(5, 5 + orders.IN_PROCESS_SEEDS + 3)
    drawn = orders.many_batch_indices(seeds, 1000, 2, 100, processes=3)
    np.testing.assert_array_equal(
        drawn, np.stack([orders.batch_indices(s, 1000, 2, 100) for s in seeds])
    )


def test_a_child_that_cannot_draw_its_orders_is_named():
    with pytest.raises(RuntimeError, match="child process drawing batch orders exited with 1"):
        orders.many_batch_indices(range(orders.IN_PROCESS_SEEDS + 1), 100, 1, 200, processes=2)


def test_stacked_initial_values_equal_plain_construction():
    """Stacking seeds on a leading axis (as train_nets does) keeps every layer's initial values."""
    images = np.random.default_rng(0).random((55000, 784), dtype=np.float32)
    for net in ("yat", "relu"):
        plain = [nnx.state(build_model(net, seed, images)) for seed in (0, 1, 2)]
        stacked = jax.tree.map(lambda *leaves: jnp.stack(leaves), *plain)
        for index, state in enumerate(plain):
            unstacked = jax.tree.map(lambda a, i=index: a[i], stacked)
            assert same_values(state, unstacked)


def test_a_padded_last_chunk_gives_each_rows_own_logits():
    """The jitted evaluation fills a short last chunk with zero rows (one program per set of
    chunks): on a CPU every kept row's logits and kernel maxima are those of the short chunk
    computed alone, bit for bit, and the filler rows are dropped."""
    images = np.random.default_rng(1).random((55000, 784), dtype=np.float32)
    rows = images[:5000]  # the held-out set's size: 2,000 + 2,000 + 1,000
    for net in ("yat", "relu"):
        logits, kmax = _evaluation(build_model(net, 0, images), eager=False)
        for fn in (logits, kmax) if net == "yat" else (logits,):
            padded = _chunked(fn, rows, 2000, pad=True)
            assert padded.shape[0] == len(rows)
            np.testing.assert_array_equal(padded, _chunked(fn, rows, 2000))


def test_stacked_shapes_are_what_build_models_builds():
    """train_nets compiles its training from `stacked_shapes` before the nets are built: the
    same graph definition and the built states' shapes and dtypes."""
    images = np.zeros((300, 784), np.float32)
    for net in ("yat", "relu"):
        graphdef, states = build_models(net, (0, 1, 2), images)
        shape_graphdef, shapes = stacked_shapes(net, 3, images)
        assert shape_graphdef == graphdef == nnx.graphdef(build_model(net, 0, images))
        assert jax.tree.structure(shapes) == jax.tree.structure(states)
        for shape, state in zip(jax.tree.leaves(shapes), jax.tree.leaves(states), strict=True):
            assert (shape.shape, shape.dtype) == (state.shape, state.dtype)


def test_one_program_builds_the_plain_construction():
    """build_models (train_nets' construction) gives each seed build_model's bits on a CPU."""
    images = np.random.default_rng(0).random((55000, 784), dtype=np.float32)
    for net in ("yat", "relu"):
        _, stacked = build_models(net, (0, 1, 2), images)
        for index, seed in enumerate((0, 1, 2)):
            plain = nnx.state(build_model(net, seed, images))
            assert same_values(plain, jax.tree.map(lambda a, i=index: a[i], stacked))


def test_stacked_data_are_each_keys_data():
    """stacked_arrays (run_many's data) gives each root key make_data's bits."""
    keys = [root_keys(seed) for seed in (0, 1, 7)]
    stacked = ToyData.from_arrays(*stacked_arrays(jnp.stack([dkey for dkey, _, _ in keys])))
    for i, (dkey, _, _) in enumerate(keys):
        alone = make_data(dkey)
        for name in ("x", "y", "noise_std"):
            assert np.array_equal(getattr(stacked, name)[i], getattr(alone, name)), name
        assert np.array_equal(stacked.grid, alone.grid)


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
    models, _ = make_ensemble(tkey, RECIPE)
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


def test_seeds_in_chunks_train_as_each_chunk_alone(monkeypatch):
    """`train_nets` trains its seeds `SEED_CHUNK` at a time, one chunk after another: every
    chunk's nets and losses, and the remainder's, are those of training its seeds alone."""
    images, labels, config = toy_training_set()
    monkeypatch.setattr(training, "SEED_CHUNK", 2)
    models, losses = train_nets("yat", (0, 1, 2, 3, 4), images, labels, config)
    monkeypatch.undo()
    for chunk in ((0, 1), (2, 3), (4,)):
        alone, alone_losses = train_nets("yat", chunk, images, labels, config)
        np.testing.assert_array_equal(losses[list(chunk)], alone_losses)
        for seed, model in zip(chunk, alone, strict=True):
            assert same_values(nnx.state(models[seed]), nnx.state(model))


# --- The documents' computation order (docs/RECIPES.md, Computation order) -------------------------------------------

ONE_EPOCH = TrainConfig(epochs=1)


@pytest.mark.slow
def test_faithful_training_equals_the_documents_loop():
    """`train_nets_faithful` (the documents' step scanned in chunks once checked, two seeds
    side by side in threads, as the suite runs it) gives the documents' `nnx.jit` loop bit
    for bit: every parameter and loss after one epoch of the real data (eight scanned
    chunks and a 22-step tail), both nets, chaotic seeds."""
    split = load_split()
    for net in ("yat", "relu"):
        models, losses = train_nets_faithful(net, (1, 2), split.train_x, split.train_y, ONE_EPOCH)
        for seed, model, seed_losses in zip((1, 2), models, losses, strict=True):
            ref_model, ref_losses = train_net_per_step(
                net, seed, split.train_x, split.train_y, ONE_EPOCH
            )
            np.testing.assert_array_equal(seed_losses, ref_losses)
            assert same_values(nnx.state(model), nnx.state(ref_model)), (net, seed)


EIGHT_TOY_EPOCHS = TrainConfig(epochs=8)  # 56 steps of the toy set: two chunks and 8 steps


def count_scans(monkeypatch, scan) -> list[int]:
    """Replace the faithful order's chunk scan by `scan`, counting its calls."""
    calls = []

    def counted(*args):
        calls.append(1)
        return scan(*args)

    monkeypatch.setattr(training, "_scanned_steps", counted)
    return calls


def test_faithful_training_scans_its_chunks_on_this_stack(monkeypatch):
    """On this stack the scan passes its check, so the faithful order scans every whole
    chunk, and its bits are the documents' loop's."""
    images, labels, _ = toy_training_set()
    calls = count_scans(monkeypatch, training._scanned_steps)
    models, losses = train_nets_faithful("yat", (0,), images, labels, EIGHT_TOY_EPOCHS)
    ref_model, ref_losses = train_net_per_step("yat", 0, images, labels, EIGHT_TOY_EPOCHS)
    assert len(calls) == 2  # the first chunk (checked against the loop), the second
    np.testing.assert_array_equal(losses[0], ref_losses)
    assert same_values(nnx.state(models[0]), nnx.state(ref_model))


def test_faithful_training_loops_when_the_scan_gives_other_bits(monkeypatch):
    """A scan whose arithmetic differed from the step's (here: one weight one float32 step
    off) fails the check on the first chunk; every step then runs as one call, and the bits
    are still the documents' loop's."""
    images, labels, _ = toy_training_set()
    scan = training._scanned_steps

    def off_by_one_ulp(graphdef, state, *rest):
        state, losses = scan(graphdef, state, *rest)
        leaves, tree = jax.tree.flatten(state)
        i = next(i for i, x in enumerate(leaves) if jnp.issubdtype(x.dtype, jnp.floating))
        leaves[i] = jnp.nextafter(leaves[i], jnp.inf)
        return jax.tree.unflatten(tree, leaves), losses

    calls = count_scans(monkeypatch, off_by_one_ulp)
    models, losses = train_nets_faithful("relu", (0,), images, labels, EIGHT_TOY_EPOCHS)
    ref_model, ref_losses = train_net_per_step("relu", 0, images, labels, EIGHT_TOY_EPOCHS)
    assert len(calls) == 1
    np.testing.assert_array_equal(losses[0], ref_losses)
    assert same_values(nnx.state(models[0]), nnx.state(ref_model))


@pytest.mark.slow
def test_cached_faithful_calibration_runs_start_as_the_documents_loop(calibration):
    """The headline calibration runs (cached) are the documents' loop: their first epoch of
    losses equals a fresh `nnx.jit` loop's, bit for bit (seed 1, both nets)."""
    split = calibration.faithful.split
    for net in ("yat", "relu"):
        _, reference = train_net_per_step(net, 1, split.train_x, split.train_y, ONE_EPOCH)
        stored = calibration.faithful.runs[net].train_loss[1, : len(reference)]
        np.testing.assert_array_equal(stored, reference.astype(np.float64))


@pytest.mark.slow
def test_cached_faithful_uncertainty_run_is_the_guides_loop(uncertainty):
    """The headline uncertainty run (cached) is the guide's order: its MC-Dropout losses equal
    a fresh `nnx.jit` loop's, and its first 30 ensemble steps a fresh un-jitted vmapped
    step's, bit for bit."""
    faithful = uncertainty.faithful
    dkey, tkey, bkey = root_keys(0)
    data = make_data(dkey)
    _, mc_loss, bkey = train_mc_dropout_loop(data, bkey, RECIPE, model_seed=0)
    np.testing.assert_array_equal(faithful.mc_loss, np.asarray(mc_loss))
    _, ens_loss = train_ensemble_loop(data, tkey, bkey, THIRTY_STEPS, step="eager")
    np.testing.assert_array_equal(faithful.ens_loss[:30], np.asarray(ens_loss))


def test_replayed_eager_ensemble_equals_the_eager_loop():
    """The faithful ensemble replays the per-op executables of one recorded eager step
    (lib/eager_replay.py): every loss and final parameter of 30 steps equals the guide's
    un-jitted loop, bit for bit."""
    dkey, tkey, bkey = root_keys(0)
    data = make_data(dkey)
    eager = train_ensemble_loop(data, tkey, bkey, THIRTY_STEPS, step="eager")
    replay = train_ensemble_loop(data, tkey, bkey, THIRTY_STEPS, step="replay")
    np.testing.assert_array_equal(np.asarray(eager[1]), np.asarray(replay[1]))
    assert same_values(nnx.state(eager[0]), nnx.state(replay[0]))


def test_scan_mc_dropout_equals_the_guides_loop():
    """The scan order's MC-Dropout part is the guide's loop bit for bit (only the ensemble
    step differs between the faithful and scan orders); a short run."""
    small = UncertaintyConfig(mc_steps=40, mc_samples=6, ensemble_steps=5)
    scan = run(0, config=small, implementation="scan")
    faithful = run(0, config=small, implementation="faithful")
    for name in ("mc_loss", "mc_grid_means", "mc_grid_vars", "mc_train_means", "mc_off_grid_means"):
        np.testing.assert_array_equal(getattr(scan, name), getattr(faithful, name), err_msg=name)


def test_the_ensembles_batch_key_is_the_one_mc_dropout_training_leaves():
    """`run_many` draws the ensembles' bootstrap key without the MC-Dropout training (its two
    programs then run independently): the key the guide's loop and the scan leave."""
    small = UncertaintyConfig(mc_steps=40)
    dkey, _, bkey = root_keys(3)
    data = make_data(dkey)
    drawn = jax.random.key_data(mc_batch_key_after(bkey, small.mc_steps))
    for train in (train_mc_dropout_loop, train_mc_dropout):
        left = train(data, bkey, small, model_seed=3)[2]
        np.testing.assert_array_equal(jax.random.key_data(left), drawn, err_msg=train.__name__)


@pytest.mark.parametrize("broken", ["record-fails", "replay-differs"])
def test_eager_replay_falls_back_to_eager_calls_with_one_warning(broken, monkeypatch):
    """Where a recording fails (a JAX whose eager trace works otherwise), or a replayed
    step is not the eager call's bits, the steps run as eager calls: one warning, the eager
    loop's bits."""
    from uncertainty_claims import eager_replay

    if broken == "record-fails":

        def fail(*_):
            raise TypeError("an internal signature changed")

        monkeypatch.setattr(eager_replay.EagerTape, "record", staticmethod(fail))
    else:
        replay = eager_replay.EagerTape.__call__

        def off_by_one(tape, state, batch):
            new_state, loss = replay(tape, state, batch)
            return new_state, loss + 1

        monkeypatch.setattr(eager_replay.EagerTape, "__call__", off_by_one)
    dkey, tkey, bkey = root_keys(0)
    data = make_data(dkey)
    eager = train_ensemble_loop(data, tkey, bkey, FOUR_STEPS, step="eager")
    with pytest.warns(UserWarning, match="eager replay off") as caught:
        replayed = train_ensemble_loop(data, tkey, bkey, FOUR_STEPS, step="replay")
    assert len(caught) == 1
    np.testing.assert_array_equal(np.asarray(eager[1]), np.asarray(replayed[1]))
    assert same_values(nnx.state(eager[0]), nnx.state(replayed[0]))
