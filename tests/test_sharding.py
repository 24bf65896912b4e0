"""Batched and sharded reruns reproduce the one-at-a-time runs.

A sweep stacks its runs on a leading axis and may split that axis over devices
(lib/sharding.py). Neither may change a run's result beyond float rounding: the
calibration training split over devices equals the unsharded training bit for bit;
`run_many` (the uncertainty spreads), on one device or split over two, equals `run`
called once per key bit for bit except the ensembles' outputs, which may move by
rounding. Several devices on a CPU need XLA_FLAGS before jax is imported, hence a
subprocess.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest
from fault_tools import child_env
from flax import nnx

from uncertainty_claims.nudge import nudge_params
from uncertainty_claims.sharding import padded_length
from uncertainty_claims.uncertainty.config import UncertaintyConfig
from uncertainty_claims.uncertainty.data import root_keys
from uncertainty_claims.uncertainty.experiment import _argument_shapes, _inputs, run_many
from uncertainty_claims.uncertainty.training import make_ensemble, new_mc_model

# A short uncertainty recipe: the check is about the order of computation, not convergence.
SMALL = UncertaintyConfig(mc_steps=40, mc_samples=6, ensemble_steps=40)
ENSEMBLE_OUTPUTS = {
    "ens_loss",
    "ens_grid_means",
    "ens_grid_vars",
    "ens_train_means",
    "ens_train_vars",
}


@pytest.mark.parametrize(
    ("runs", "devices", "expected"),
    [(3, 1, 3), (1, 2, 2), (2, 2, 4), (3, 2, 4), (5, 2, 6), (8, 4, 8), (9, 4, 12), (3, 8, 16)],
)
def test_padding_gives_every_device_the_same_number_of_runs(runs, devices, expected):
    assert padded_length(runs, devices) == expected


_SCRIPT = textwrap.dedent(
    """
    import json, sys, jax, numpy as np
    from flax import nnx
    from uncertainty_claims.calibration.training import TrainConfig, train_nets
    from uncertainty_claims.placement._compile_cache import enable_compilation_cache
    from uncertainty_claims.sharding import run_mesh
    from uncertainty_claims.uncertainty.config import UncertaintyConfig
    from uncertainty_claims.uncertainty.experiment import run, run_many

    enable_compilation_cache()

    def max_diff(a, b):
        return float(np.max(np.abs(np.float64(a) - np.float64(b)), initial=0))

    rng = np.random.default_rng(0)
    images = rng.random((2000, 784), dtype=np.float32)
    labels = rng.integers(0, 10, 2000)
    out = {"devices": len(jax.devices()), "calibration": {}, "run_many": {}, "sharded": {}}
    # Three seeds pad to four on two devices, one seed to two; each net once (compiling is
    # what this test spends its time on).
    for net, seeds in (("yat", (0, 1, 2)), ("relu", (4,))):
        plain, sharded = (
            train_nets(net, seeds, images, labels, TrainConfig(epochs=2), mesh=mesh)
            for mesh in (None, run_mesh())
        )
        leaves = [
            (a, b)
            for p, s in zip(plain[0], sharded[0], strict=True)
            for a, b in zip(jax.tree.leaves(nnx.state(p)), jax.tree.leaves(nnx.state(s)))
        ]
        out["calibration"][f"{net} {seeds}"] = max(
            max_diff(plain[1], sharded[1]), *(max_diff(a, b) for a, b in leaves)
        )

    config = UncertaintyConfig(**json.loads(sys.argv[1]))
    # (root seed, nudge): nine runs, a batch that XLA compiles differently from one run;
    # the first three are compared with run().
    keys = ((0, None), (3, None), (0, 2), *((k, None) for k in range(4, 10)))
    seeds, nudges = zip(*keys)
    plain, sharded = (
        run_many(seeds, nudges=nudges, config=config, mesh=m) for m in (None, run_mesh())
    )
    for (seed, nudge), many, split in zip(keys[:3], plain, sharded):
        single = run(seed, nudge=nudge, config=config).as_arrays()
        for kind, other in (("run_many", many), ("sharded", split)):
            for name, array in other.as_arrays().items():
                diff = max_diff(array, single[name])
                out[kind][name] = max(out[kind].get(name, 0.0), diff)
    print(json.dumps(out))
    """
)


@pytest.mark.slow
def test_batched_and_sharded_runs_reproduce_single_runs():
    env = child_env(XLA_FLAGS="--xla_force_host_platform_device_count=2")
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, json.dumps(dataclasses.asdict(SMALL))],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["devices"] == 2
    # Calibration on two devices, bit for bit: seeds (0, 1, 2) are padded to 4, the
    # single seed to 2 (see padded_length).
    assert out["calibration"] == dict.fromkeys(out["calibration"], 0.0)
    # run_many, on one device and split over two: the ensembles' outputs may move by float
    # rounding (batched, or spanning two devices, their training steps can round otherwise;
    # measured 0 to ~1e-4 after 40 steps), everything else is bit for bit run()'s.
    for kind in ("run_many", "sharded"):
        moved = {name: d for name, d in out[kind].items() if d}
        assert set(moved) <= ENSEMBLE_OUTPUTS, (kind, moved)
        assert max(moved.values(), default=0.0) < 1e-3, (kind, moved)


def _values(state) -> list:
    """The leaves of an nnx state as plain arrays (PRNG keys as their key data)."""
    return [
        jax.random.key_data(leaf)
        if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key)
        else leaf
        for leaf in jax.tree.leaves(state)
    ]


def test_argument_shapes_are_those_of_the_drawn_inputs():
    """`run_many` compiles its programs from `_argument_shapes` while `_inputs` draws the
    inputs (a nudged run's included): the same pytrees, shapes and dtypes."""
    _, (_, _, *inputs) = _inputs((0, 7, 0), (None, None, 3), SMALL)
    shapes = _argument_shapes(3, SMALL, None)
    assert jax.tree.structure(shapes) == jax.tree.structure(tuple(inputs))
    for shape, array in zip(jax.tree.leaves(shapes), jax.tree.leaves(inputs), strict=True):
        drawn = jax.typeof(array)
        assert (shape.shape, shape.dtype, shape.weak_type) == (
            drawn.shape,
            drawn.dtype,
            drawn.weak_type,
        )


def test_batched_initial_weights_are_those_of_single_runs():
    """`run_many` draws every run's initial weights (and RNG states) in one batched program:
    they are the values `run` starts from, bit for bit, the nudged twins' included."""
    seeds, nudges = (0, 7, 0), (None, None, 3)
    _, (_, _, mc_state, ens_state, *_) = _inputs(seeds, nudges, SMALL)
    for i, (seed, nudge) in enumerate(zip(seeds, nudges, strict=True)):
        _, tkey, _ = root_keys(seed)
        mc = new_mc_model(seed, SMALL, nudge=nudge)
        models, optimizers = make_ensemble(tkey, SMALL)
        if nudge is not None:
            nudge_params(models, nudge)
        for batched, single in (
            (mc_state, nnx.state(mc)),
            (ens_state, nnx.state((models, optimizers))),
        ):
            ours = _values(jax.tree.map(lambda a, i=i: a[i], batched))
            theirs = _values(single)
            assert len(ours) == len(theirs)
            for a, b in zip(ours, theirs, strict=True):
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_batched_mc_dropout_is_another_order_of_the_same_runs():
    """`run_many(batch_mc=True)` trains the MC-Dropout nets batched: the same random streams
    in another float order. The ensembles, which draw their bootstrap resamples from the key
    the MC-Dropout training leaves, and the data are unchanged bit for bit; the MC-Dropout
    outputs may move by rounding (bound as for the ensembles above)."""
    seeds, nudges = (0, 3, 0, 5), (None, None, 2, None)
    one_by_one, batched = (
        run_many(seeds, nudges=nudges, config=SMALL, batch_mc=b) for b in (False, True)
    )
    for a, b in zip(one_by_one, batched, strict=True):
        theirs = b.as_arrays()
        for name, array in a.as_arrays().items():
            if name.startswith("mc_"):
                np.testing.assert_allclose(theirs[name], array, rtol=0, atol=1e-3, err_msg=name)
            else:
                np.testing.assert_array_equal(theirs[name], array, err_msg=name)
