"""The guide's whole experiment as one pure function, and the figures the guide prints.

``run(root_seed)`` reproduces docs/RECIPES.md, Uncertainty: data, MC-Dropout (train, then 30 stochastic
passes on the grid and on the training inputs), the deep ensemble (train, then predict on
the grid and the training inputs). It returns plain numpy arrays; everything the guide
reports is derived from them by the small functions below.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx
from jax.sharding import Mesh

from ..metrics import decompose_variance
from ..numerics import full_precision
from ..sharding import compile_aside, input_shapes, over_runs, placed_inputs
from .config import (
    ENSEMBLE_PRINT_EVERY,
    MC_PRINT_EVERY,
    UncertaintyConfig,
)
from .data import ToyData, make_data, root_keys, stacked_arrays
from .prediction import _mc_passes, ensemble_predict, mc_predict, mc_predict_loop
from .training import (
    _ensemble_scan,
    _mc_scan,
    bootstrap_indices,
    make_ensemble,
    mc_batch_key_after,
    new_mc_model,
    nudge_params,
    train_ensemble,
    train_ensemble_loop,
    train_mc_dropout,
    train_mc_dropout_loop,
)

REGIONS = ("in", "away", "gap", "tails")
REGION_MASKS = ("in_cluster", "away", "gap", "tails")


@dataclasses.dataclass(frozen=True)
class UncertaintyResult:
    """Everything one run produces, as numpy arrays (float32 network outputs).

    Shapes: N = 120 training points, G = 200 grid points, T = MC passes, M = members.
    MC passes are drawn on the grid first, then (continuing the dropout stream) on x.
    """

    root_seed: int
    x: np.ndarray  # [N, 1]
    y: np.ndarray  # [N, 1]
    noise_std: np.ndarray  # [N, 1]
    grid: np.ndarray  # [G, 1]
    in_cluster: np.ndarray  # [G] bool
    away: np.ndarray  # [G] bool
    gap: np.ndarray  # [G] bool
    tails: np.ndarray  # [G] bool
    mc_loss: np.ndarray  # [mc_steps], loss of step i's batch at index i - 1
    ens_loss: np.ndarray  # [ensemble_steps, M]
    bootstrap_idx: np.ndarray  # [M, N] int32
    mc_grid_means: np.ndarray  # [T, G, 1]
    mc_grid_vars: np.ndarray  # [T, G, 1]
    mc_train_means: np.ndarray  # [T, N, 1]
    mc_train_vars: np.ndarray  # [T, N, 1]
    mc_off_grid_means: np.ndarray  # [T, G, 1], dropout off
    ens_grid_means: np.ndarray  # [M, G, 1]
    ens_grid_vars: np.ndarray  # [M, G, 1]
    ens_train_means: np.ndarray  # [M, N, 1]
    ens_train_vars: np.ndarray  # [M, N, 1]

    def as_arrays(self) -> dict[str, np.ndarray]:
        """All fields as a flat dict of numpy arrays (e.g. for ``np.savez``)."""
        return {f.name: np.asarray(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_arrays(cls, arrays) -> UncertaintyResult:
        """Inverse of :meth:`as_arrays` (accepts any mapping, e.g. an ``np.load`` result)."""
        values = {f.name: np.asarray(arrays[f.name]) for f in dataclasses.fields(cls)}
        values["root_seed"] = int(values["root_seed"])
        return cls(**values)


@full_precision
def run(
    root_seed: int = 0,
    *,
    config: UncertaintyConfig = UncertaintyConfig(),
    implementation: Literal["faithful", "scan"] = "scan",
    nudge: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> UncertaintyResult:
    """Run the guide's recipe from ``jax.random.key(root_seed)``.

    The MC-Dropout net is built with ``nnx.Rngs(root_seed)`` (the guide: 0 and 0).
    ``implementation="faithful"`` is the guide's computation order (docs/RECIPES.md, Computation order): Python
    loops over an ``nnx.jit`` MC-Dropout step and its passes, and the vmapped ensemble step
    called without jit, op by op (replayed from a recording of that eager step: the same
    bits, lib/eager_replay.py). ``"scan"`` (default) runs each
    training in one jitted ``lax.scan`` and the MC passes as one vmap: its MC-Dropout part
    equals the faithful one bit for bit on a CPU, its jitted ensemble is another valid
    float order (tests/test_recipe.py).
    ``nudge`` (an addition beside the recipe, off by default): if an int, 5% of each net's
    initial weights, chosen with that seed, are moved by one float32 ulp before training —
    a float-noise twin of the same run, for measuring how far rounding alone moves a figure.
    ``progress``, if given, receives the guide's log lines.
    """
    if implementation not in ("faithful", "scan"):
        raise ValueError(f"implementation must be 'faithful' or 'scan'; got {implementation!r}")
    faithful = implementation == "faithful"
    say = progress or (lambda _msg: None)
    dkey, tkey, bkey = root_keys(root_seed)
    data = make_data(dkey)
    say(f"Training points: {data.x.shape[0]} (two clusters, heteroscedastic noise)")

    say("[1/2] Training a single MC-Dropout network...")
    if faithful:
        mc_model, mc_loss, bkey = train_mc_dropout_loop(
            data, bkey, config, model_seed=root_seed, nudge=nudge, progress=progress
        )
    else:
        mc_model, mc_loss, bkey = train_mc_dropout(
            data, bkey, config, model_seed=root_seed, nudge=nudge, progress=progress
        )
    predict_mc = mc_predict_loop if faithful else mc_predict
    mc_grid = predict_mc(mc_model, data.grid, n_samples=config.mc_samples)
    mc_train = predict_mc(mc_model, data.x, n_samples=config.mc_samples)
    # The guide's first pitfall: the same passes with dropout off (drawn last, changes nothing above).
    mc_off = predict_mc(mc_model, data.grid, n_samples=config.mc_samples, train=False)

    say(f"[2/2] Training a deep ensemble of {config.members} networks (nnx.vmap)...")
    if faithful:
        models, ens_loss = train_ensemble_loop(
            data, tkey, bkey, config, step="replay", nudge=nudge, progress=progress
        )
    else:
        models, ens_loss = train_ensemble(data, tkey, bkey, config, nudge=nudge, progress=progress)
    ens_grid = ensemble_predict(models, data.grid)
    ens_train = ensemble_predict(models, data.x)

    boot = bootstrap_indices(bkey, members=config.members, n=data.x.shape[0])
    out = jax.device_get(
        {
            "x": data.x,
            "y": data.y,
            "noise_std": data.noise_std,
            "grid": data.grid,
            "mc_loss": mc_loss,
            "ens_loss": ens_loss,
            "bootstrap_idx": boot,
            "mc_grid_means": mc_grid.means,
            "mc_grid_vars": mc_grid.variances,
            "mc_train_means": mc_train.means,
            "mc_train_vars": mc_train.variances,
            "mc_off_grid_means": mc_off.means,
            "ens_grid_means": ens_grid.means,
            "ens_grid_vars": ens_grid.variances,
            "ens_train_means": ens_train.means,
            "ens_train_vars": ens_train.variances,
        }
    )
    result = UncertaintyResult(
        root_seed=root_seed,
        in_cluster=data.in_cluster,
        away=data.away,
        gap=data.gap,
        tails=data.tails,
        **{k: np.asarray(v) for k, v in out.items()},
    )
    if progress is not None:
        s = region_summary(result)
        progress(
            f"  MC-Dropout epistemic: in-cluster {s['mc']['epistemic_in']:.5f}"
            f" | away {s['mc']['epistemic_away']:.5f}"
        )
        progress(
            f"  Ensemble epistemic:   in-cluster {s['ensemble']['epistemic_in']:.5f}"
            f" | away {s['ensemble']['epistemic_away']:.5f}"
        )
    return result


@full_precision
def run_many(
    root_seeds: Sequence[int],
    *,
    nudges: Sequence[int | None] | None = None,
    config: UncertaintyConfig = UncertaintyConfig(),
    mesh: Mesh | None = None,
    batch_mc: bool = False,
    inputs_on: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext,
) -> list[UncertaintyResult]:
    """``run(root_seeds[i], nudge=nudges[i])`` for every i, as jitted programs over the runs.

    Every run draws the random streams of :func:`run` (data, initial weights, batches,
    dropout masks, bootstrap resamples). The data and initial weights are drawn under the
    context `inputs_on()`, the caller's choice of where (beside an accelerator
    `placement.on_host`: a CPU run's bits, whose programs compile in a fraction of the
    chip's time); the initial weights of all runs in one batched program, which gives the
    same bits as drawing them one run at a time. The
    MC-Dropout nets train one after another, unbatched as in :func:`run`, so on a CPU their
    outputs equal ``run``'s bit for bit (batched, XLA computes their small matrix products
    in another order). The ensembles of all runs train stacked under one ``jax.vmap``, a valid
    computation order that XLA compiles differently from ``run``'s once the batch is large
    (on a CPU from about 8 runs): their outputs then move by float rounding, which
    training can amplify a lot. So this is for spreads over reruns, where any valid order
    gives a valid sample; the faithful key-0 result always comes from :func:`run`. With a
    ``mesh`` (``uncertainty_claims.sharding.run_mesh()``), the runs are split over its devices.

    ``batch_mc=True`` trains the MC-Dropout nets batched too, another valid order (their
    outputs then differ from ``run``'s by float rounding, amplified by training): a large
    sweep's fast path on an accelerator, which otherwise takes every run's small training
    steps one after another.
    """
    nudges = [None] * len(root_seeds) if nudges is None else list(nudges)
    if len(nudges) != len(root_seeds):
        raise ValueError(f"got {len(root_seeds)} root seeds but {len(nudges)} nudges")
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="compile-runs") as pool:
        programs = _compile_runs(pool, len(root_seeds), config, mesh, batch_mc)
        with inputs_on():
            data, (_, _, *inputs) = _inputs(root_seeds, nudges, config)
        out = jax.device_get(_runs(programs, *placed_inputs(inputs, mesh)))
    drawn = jax.device_get({name: getattr(data, name) for name in ("x", "y", "noise_std")})
    grid, masks = np.asarray(data.grid), {name: getattr(data, name) for name in REGION_MASKS}
    return [
        UncertaintyResult(
            root_seed=seed,
            **{name: array[i] for name, array in drawn.items()},
            grid=grid,
            **masks,
            **{name: array[i] for name, array in out.items()},
        )
        for i, seed in enumerate(root_seeds)
    ]


def _inputs(root_seeds: Sequence[int], nudges: Sequence[int | None], c: UncertaintyConfig):
    """The runs' data (`stacked_arrays`: run()'s bits on the same device), and the arguments
    of their programs (graphdefs, then arrays stacked over runs)."""
    arrays, mc_state, ens_state, bkeys = _stacked_inputs(jnp.asarray(root_seeds, jnp.int32), c)
    data = ToyData.from_arrays(*arrays)
    mc_def, ens_def = _graphdefs(c)
    return data, (
        mc_def,
        ens_def,
        _nudged(mc_def, mc_state, nudges),
        _nudged(ens_def, ens_state, nudges),
        bkeys,
        data.x,
        data.y,
        data.grid,
    )


def _stacked_inputs(seeds: jax.Array, c: UncertaintyConfig):
    """Each run's data arrays, initial states and bootstrap key, from its root seed, stacked
    over the runs; traced by `jax.eval_shape`, their shapes (`_argument_shapes`)."""
    dkeys, tkeys, bkeys = jax.vmap(root_keys)(seeds)  # threefry: each key's bits
    data = stacked_arrays(dkeys)
    mc_state, ens_state = _initial_states(seeds, tkeys, c=c)
    return data, mc_state, ens_state, bkeys


def _argument_shapes(n_runs: int, c: UncertaintyConfig, mesh: Mesh | None):
    """The array arguments `_inputs` gives the programs of `n_runs` runs, as shapes placed
    as `run_many` places them: drawn and computed by no program."""
    seeds = jax.ShapeDtypeStruct((n_runs,), jnp.int32)
    (x, _, y, grid), mc_state, ens_state, bkeys = jax.eval_shape(
        functools.partial(_stacked_inputs, c=c), seeds
    )
    return input_shapes((mc_state, ens_state, bkeys, x, y, grid), mesh)


def _models(seed: jax.Array, tkey: jax.Array, c: UncertaintyConfig):
    """One run's MC-Dropout net and optimizer, and its ensemble, as :func:`run` builds them."""
    mc = new_mc_model(jax.random.key(seed), c)
    ensemble = make_ensemble(tkey, c)
    return mc, ensemble


@functools.cache
def _graphdefs(c: UncertaintyConfig):
    mc, ensemble = nnx.eval_shape(lambda: _models(0, jax.random.key(0), c))
    return nnx.graphdef(mc), nnx.graphdef(ensemble)


@functools.partial(jax.jit, static_argnames=("c",))
def _initial_states(seeds: jax.Array, tkeys: jax.Array, *, c: UncertaintyConfig):
    # Threefry draws the same bits for a batch of keys as for each key alone, and the
    # initializers' float arithmetic is elementwise: these are run()'s initial weights
    # (tests/test_sharding.py compares the trained results).
    def one(seed, tkey):
        mc, ensemble = _models(seed, tkey, c)
        return nnx.state(mc), nnx.state(ensemble)

    return jax.vmap(one)(seeds, tkeys)


def _nudged(graphdef, states, nudges: Sequence[int | None]):
    """`states` (stacked over runs) with `nudge_params` applied to each run that has a nudge,
    to its nets' weights as :func:`run` does before training. The runs are cut out and put
    back on the host, in NumPy (the same bits): on a device each cut and each put-back is a
    program of its own per array shape. Random keys stay on the device, unchanged."""
    if all(nudge is None for nudge in nudges):
        return states

    def on_host(a: jax.Array):
        return a if jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key) else np.array(a)

    host = jax.tree.map(on_host, states)
    for i, nudge in enumerate(nudges):
        if nudge is None:
            continue
        models, optimizers = nnx.merge(graphdef, jax.tree.map(lambda a, i=i: a[i], host))
        nudge_params(models, nudge)
        one = nnx.state((models, optimizers))
        for stacked, run_leaf in zip(jax.tree.leaves(host), jax.tree.leaves(one), strict=True):
            if isinstance(stacked, np.ndarray):
                stacked[i] = np.asarray(run_leaf)
    return jax.tree.map(lambda a: jax.device_put(a) if isinstance(a, np.ndarray) else a, host)


def _compile_runs(
    pool: ThreadPoolExecutor, n_runs: int, c: UncertaintyConfig, mesh: Mesh | None, batch_mc: bool
) -> tuple[Future, Future]:
    """The two programs of `n_runs` runs, compiling side by side in `pool` from their inputs'
    shapes while `_inputs` draws the inputs: the MC-Dropout nets' and the ensembles'. On a
    TPU both are compiled side by side in little more than the longer one takes alone, while
    the host draws the inputs."""
    mc_def, ens_def = _graphdefs(c)
    mc_state, ens_state, bkey, x, y, grid = _argument_shapes(n_runs, c, mesh)
    shared = {"c": c, "mesh": mesh}
    return (
        compile_aside(
            pool, _mc_runs, mc_def, mc_state, bkey, x, y, grid, batch_mc=batch_mc, **shared
        ),
        compile_aside(pool, _ensemble_runs, ens_def, ens_state, bkey, x, y, grid, **shared),
    )


def _runs(programs: tuple[Future, Future], mc_state, ens_state, bkey, x, y, grid):
    """Every run's outputs from the two programs (`_compile_runs`): the MC-Dropout nets' and
    the ensembles'. Neither waits on the other's outputs, so each starts as soon as it is
    compiled."""
    mc_program, ensemble_program = programs
    arguments = {
        mc_program: (mc_state, bkey, x, y, grid),
        ensemble_program: (ens_state, bkey, x, y, grid),
    }
    out = {}
    for compiled in as_completed(arguments):
        out |= compiled.result()(*arguments[compiled])
    return out


@functools.partial(jax.jit, static_argnames=("mc_def", "c", "mesh", "batch_mc"))
def _mc_runs(mc_def, mc_state, bkey, x, y, grid, *, c: UncertaintyConfig, mesh, batch_mc: bool):
    def mc_run(mc_state, bkey, x, y, grid):
        mc_state, _, mc_loss = _mc_scan(
            mc_def, mc_state, bkey, x, y, steps=c.mc_steps, batch=c.mc_batch
        )
        # The MC passes continue the dropout stream as run() does: grid, then x, then dropout off.
        pass_def, counts, rest = nnx.split(nnx.merge(mc_def, mc_state)[0], nnx.RngCount, ...)
        out = {"mc_loss": mc_loss}
        for name, inputs, train in (("grid", grid, True), ("train", x, True), ("off", grid, False)):
            means, variances, counts = _mc_passes(
                pass_def, counts, rest, inputs, n_samples=c.mc_samples, train=train
            )
            if name == "off":
                out["mc_off_grid_means"] = means
            else:
                out |= {f"mc_{name}_means": means, f"mc_{name}_vars": variances}
        return out

    def runs(mc_state, bkey, x, y, grid):
        if batch_mc:
            return jax.vmap(mc_run, in_axes=(0, 0, 0, 0, None))(mc_state, bkey, x, y, grid)
        # One run after another (lax.map), unbatched as in run(), so bit for bit run()'s; on
        # a CPU a small part of the work.
        return jax.lax.map(lambda run: mc_run(*run, grid), (mc_state, bkey, x, y))

    return over_runs(runs, mesh, (mc_state, bkey, x, y), (grid,))


@functools.partial(jax.jit, static_argnames=("ens_def", "c", "mesh"))
def _ensemble_runs(ens_def, ens_state, bkey, x, y, grid, *, c: UncertaintyConfig, mesh):
    def ensemble_run(ens_state, bkey, x, y, grid):
        # The bootstrap resamples come from the key the MC-Dropout training leaves (as in
        # run()), drawn here so that this program need not wait for that training's.
        bkey = mc_batch_key_after(bkey, c.mc_steps)
        idx = bootstrap_indices(bkey, members=c.members, n=x.shape[0])
        ens_state, loss = _ensemble_scan(ens_def, ens_state, x[idx], y[idx], steps=c.ensemble_steps)
        models = nnx.merge(ens_def, ens_state)[0]
        out = {"ens_loss": loss, "bootstrap_idx": idx}
        for name, inputs in (("grid", grid), ("train", x)):
            predicted = ensemble_predict(models, inputs)
            out |= {f"ens_{name}_means": predicted.means, f"ens_{name}_vars": predicted.variances}
        return out

    # The ensembles carry most of a CPU's work: batched over the runs.
    runs = jax.vmap(ensemble_run, in_axes=(0, 0, 0, 0, None))
    return over_runs(runs, mesh, (ens_state, bkey, x, y), (grid,))


def _region_masks(result: UncertaintyResult) -> dict[str, np.ndarray]:
    return {"in": result.in_cluster, "away": result.away, "gap": result.gap, "tails": result.tails}


def region_summary(result: UncertaintyResult) -> dict[str, dict[str, float]]:
    """Mean epistemic / aleatoric / total variance over each grid region, per method.

    Returns ``{"mc": {...}, "ensemble": {...}}`` with keys ``{epistemic,aleatoric,total}_{in,
    away,gap,tails}``; computed in float64 from the float32 network outputs.
    """
    masks = _region_masks(result)
    summary = {}
    for method, (means, variances) in {
        "mc": (result.mc_grid_means, result.mc_grid_vars),
        "ensemble": (result.ens_grid_means, result.ens_grid_vars),
    }.items():
        dec = decompose_variance(means, variances)
        parts = {"epistemic": dec.epistemic, "aleatoric": dec.aleatoric, "total": dec.total}
        summary[method] = {
            f"{part}_{region}": float(values[:, 0][mask].mean())
            for part, values in parts.items()
            for region, mask in masks.items()
        }
    return summary


def _printed_steps(every: int, steps: int) -> range:
    return range(every, steps + 1, every)


def printed_trace(result: UncertaintyResult) -> dict[str, dict[int, float]]:
    """The training losses the guide prints: MC loss at steps 100..500 (the loss of that
    step's batch), ensemble mean-over-members loss at steps 200..1000."""
    ens_mean = result.ens_loss.astype(np.float64).mean(axis=1)
    return {
        "mc": {
            s: float(result.mc_loss[s - 1])
            for s in _printed_steps(MC_PRINT_EVERY, len(result.mc_loss))
        },
        "ensemble": {
            s: float(ens_mean[s - 1]) for s in _printed_steps(ENSEMBLE_PRINT_EVERY, len(ens_mean))
        },
    }


def printed_figure_names(config: UncertaintyConfig) -> tuple[str, ...]:
    """The names of the figures the guide prints for a run of `config`, in print order: the
    keys of :func:`headline_figures` (the printed values themselves: claims/test_uncertainty.py)."""
    mc = _printed_steps(MC_PRINT_EVERY, config.mc_steps)
    ensemble = _printed_steps(ENSEMBLE_PRINT_EVERY, config.ensemble_steps)
    return (
        *(f"mc_nll_{s}" for s in mc),
        "mc_epistemic_in",
        "mc_epistemic_away",
        *(f"ens_nll_{s}" for s in ensemble),
        "ens_epistemic_in",
        "ens_epistemic_away",
    )


def headline_figures(result: UncertaintyResult) -> dict[str, float]:
    """The guide's printed figures for this result, keyed as :func:`printed_figure_names`."""
    trace = printed_trace(result)
    summary = region_summary(result)
    figures = {f"mc_nll_{s}": v for s, v in trace["mc"].items()}
    figures["mc_epistemic_in"] = summary["mc"]["epistemic_in"]
    figures["mc_epistemic_away"] = summary["mc"]["epistemic_away"]
    figures.update({f"ens_nll_{s}": v for s, v in trace["ensemble"].items()})
    figures["ens_epistemic_in"] = summary["ensemble"]["epistemic_in"]
    figures["ens_epistemic_away"] = summary["ensemble"]["epistemic_away"]
    return figures
