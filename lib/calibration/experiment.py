"""The calibration experiment end to end: data, training, evaluation outputs.

`train_faithful`, `train_scan_vmap` and `twin_outputs` give, per net, everything the claims
need as arrays of logits and kernel scores, computed in one of the valid float orders
(`ORDERS`); `NetRun` holds them as float64, and lib/calibration/evaluation.py turns them into
the recipe's figures. Which order runs where, and the disk cache of the trained arrays, are
the order builder's (lib/orders/calibration.py).
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

import jax
import numpy as np
from flax import nnx
from jax.sharding import Mesh

from .. import data
from ..numerics import full_precision
from ..orders import FAITHFUL, twin_batches
from .training import (
    TrainConfig,
    train_nets,
    train_nets_faithful,
    train_twins,
)

NETS = ("yat", "relu")
PUBLISHED_SEEDS = (0, 1, 2)
POST_SEEDS = len(PUBLISHED_SEEDS)
"""The post averages three seeds: its comparative claims are about three-seed means."""

TWIN_BATCH = 6
"""Float-rounding twins trained together (`train_twins`): the unit in which orders are added."""


def order_names(n_orders: int | None = None) -> tuple[str, ...]:
    """The valid float orders judged: `faithful`, `scan_vmap` and whole batches of twins,
    at least `n_orders` in all (default `ORDERS`).

    `faithful` is the documents' own (docs/RECIPES.md, Computation order): the per-batch loop and un-jitted
    evaluation in chunks of 5,000 rows; its figures are the headline. `scan_vmap`: one scan
    per net, seeds under vmap, jitted evaluation (the fast path that seed sweeps use).
    `twin-k`: each net's initial weights nudged with seed k (lib/nudge.py), trained with its
    batch's other twins under vmap (`train_twins`), jitted evaluation: float-rounding twins.
    """
    n_twins = TWIN_BATCH * twin_batches(n_orders, TWIN_BATCH, document="calibration")
    return (FAITHFUL, "scan_vmap", *(f"twin-{k}" for k in range(1, n_twins + 1)))


ORDERS = order_names()
"""The orders of a default audit: faithful, scan_vmap and one batch of twins."""

_SCRIPT_CHUNK = 5000  # rows per un-jitted logits call in the calibration script
_JIT_CHUNK = 2000


@dataclass(frozen=True)
class Split:
    """Float32 images and int labels of the recipe's four sets."""

    train_x: np.ndarray
    train_y: np.ndarray
    heldout_x: np.ndarray
    heldout_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray
    ood_x: np.ndarray


# Per process, by the folders the three sets were read from (as lib/data.py memoises them).
_SPLITS: dict[tuple[str, str, str], Split] = {}
_SPLITS_LOCK = threading.Lock()


def load_split() -> Split:
    """Fashion-MNIST train split into 55,000 / 5,000 (RandomState(123)), test, MNIST test.

    Memoised per process (the nets of each order load it, in threads), its arrays read-only.
    """
    train = data.load_fashion_mnist("train")
    test = data.load_fashion_mnist("test")
    ood = data.load_mnist_test()
    sources = (train.source, test.source, ood.source)
    with _SPLITS_LOCK:
        if sources not in _SPLITS:
            _SPLITS[sources] = _split(train, test, ood)
        return _SPLITS[sources]


def _split(train: data.ImageSet, test: data.ImageSet, ood: data.ImageSet) -> Split:
    train_idx, heldout_idx = data.fashion_split(len(train.labels))
    # Rows picked before the (elementwise) conversion: the same floats, a quarter of the copying.
    split = Split(
        train_x=data.to_float(train.images[train_idx]),
        train_y=train.labels[train_idx],
        heldout_x=data.to_float(train.images[heldout_idx]),
        heldout_y=train.labels[heldout_idx],
        test_x=data.to_float(test.images),
        test_y=test.labels,
        ood_x=data.to_float(ood.images),
    )
    for array in vars(split).values():
        array.flags.writeable = False
    return split


@dataclass(frozen=True)
class NetRun:
    """One net trained on several seeds: float64 outputs, first axis = seed."""

    net: str
    seeds: tuple[int, ...]
    logits_test: np.ndarray
    logits_heldout: np.ndarray
    logits_ood: np.ndarray
    kmax_test: np.ndarray | None
    kmax_ood: np.ndarray | None
    train_loss: np.ndarray
    cache_status: str

    @classmethod
    def from_arrays(
        cls, net: str, seeds: tuple[int, ...], arrays: dict[str, np.ndarray], cache_status: str
    ) -> NetRun:
        """Wrap stored arrays, taking every figure to float64 (docs/RECIPES.md, Calibration: before any metric)."""
        as64 = {name: np.asarray(array, dtype=np.float64) for name, array in arrays.items()}
        return cls(
            net=net,
            seeds=seeds,
            logits_test=as64["logits_test"],
            logits_heldout=as64["logits_heldout"],
            logits_ood=as64["logits_ood"],
            kmax_test=as64.get("kmax_test"),
            kmax_ood=as64.get("kmax_ood"),
            train_loss=as64["train_loss"],
            cache_status=cache_status,
        )


def _chunked(fn, x: np.ndarray, chunk: int | None, *, pad: bool = False) -> np.ndarray:
    """`fn` on consecutive row chunks of `x` (None: all rows at once), concatenated. With
    `pad`, a short last chunk is filled up with zero rows, dropped from the output, so that
    a jitted `fn` compiles one program per set of chunks, not two (the held-out set's 5,000
    rows are 2,000 + 2,000 + 1,000); `fn` must compute each row on its own."""
    chunk = chunk or len(x)
    outputs = []
    for i in range(0, len(x), chunk):
        rows = x[i : i + chunk]
        filler = chunk - len(rows) if pad else 0
        batch = np.pad(rows, [(0, filler)] + [(0, 0)] * (rows.ndim - 1)) if filler else rows
        outputs.append(np.asarray(fn(jax.device_put(batch)))[: len(rows)])
    return np.concatenate(outputs)


@full_precision
def forward_outputs(
    net: str,
    models: list,
    losses: np.ndarray,
    split: Split,
    *,
    eager: bool = False,
    own_programs: bool = True,
) -> dict[str, np.ndarray]:
    """The arrays a trained net contributes: losses, logits on every set, kernel maxima (Yat).

    `eager=True` calls the model op by op, as the calibration script does: logits on chunks
    of 5,000 rows, the kernel scores on each whole set. Otherwise each output is one jitted
    program on chunks of 2,000 rows (another valid order: the Yat logits move by ~1e-4),
    compiled as `own_programs` says (`_evaluation`).
    """
    out: dict[str, list[np.ndarray]] = {"logits_test": [], "logits_heldout": [], "logits_ood": []}
    if net == "yat":
        out |= {"kmax_test": [], "kmax_ood": []}
    logits_chunk = _SCRIPT_CHUNK if eager else _JIT_CHUNK
    chunked = functools.partial(_chunked, pad=not eager)  # the script's own chunks are its own
    for model in models:
        logits, kmax = _evaluation(model, eager, own_programs)
        out["logits_test"].append(chunked(logits, split.test_x, logits_chunk))
        out["logits_heldout"].append(chunked(logits, split.heldout_x, logits_chunk))
        out["logits_ood"].append(chunked(logits, split.ood_x, logits_chunk))
        if net == "yat":
            kmax_chunk = None if eager else _JIT_CHUNK
            out["kmax_test"].append(chunked(kmax, split.test_x, kmax_chunk))
            out["kmax_ood"].append(chunked(kmax, split.ood_x, kmax_chunk))
    return {"train_loss": np.asarray(losses), **{name: np.stack(v) for name, v in out.items()}}


@functools.partial(jax.jit, static_argnums=0)
def _logits_of(graphdef: nnx.GraphDef, state: nnx.State, x: jax.Array) -> jax.Array:
    return nnx.merge(graphdef, state)(x)


@functools.partial(jax.jit, static_argnums=0)
def _kernel_max_of(graphdef: nnx.GraphDef, state: nnx.State, x: jax.Array) -> jax.Array:
    return nnx.merge(graphdef, state).features(x).max(-1)


def _evaluation(model, eager: bool, own_programs: bool = True):
    """The model's logits and kernel maxima (Yat) as callables: op by op when `eager`, else
    jitted. With `own_programs` each model's weights are compiled into its own programs, the
    order the CPU audits are recorded in; else, where compiling costs seconds a program (on an
    accelerator), all models of a net share one program per input shape that takes the
    weights as arguments (XLA may round the Yat kernel otherwise there: another valid
    order)."""

    def logits(x):
        return model(x)

    def kernel_max(x):
        return model.features(x).max(-1)

    if eager:
        return logits, kernel_max
    if own_programs:
        return jax.jit(logits), jax.jit(kernel_max)
    graphdef, state = nnx.split(model)
    return (
        functools.partial(_logits_of, graphdef, state),
        functools.partial(_kernel_max_of, graphdef, state),
    )


def twin_index(order: str) -> int | None:
    """k of the order `twin-k` (k >= 1), else None."""
    k = order.removeprefix("twin-")
    return int(k) if order.startswith("twin-") and k.isdigit() and int(k) >= 1 else None


def check_order(order: str) -> None:
    """Raise ValueError unless `order` names a calibration order: faithful, scan_vmap or
    twin-k (k >= 1)."""
    if order not in (FAITHFUL, "scan_vmap") and twin_index(order) is None:
        raise ValueError(f"order must be faithful, scan_vmap or twin-k (k >= 1); got {order!r}")


def twin_nudges(batch: int) -> tuple[int, ...]:
    """The nudge seeds of the twins in batch `batch` (0: twin-1 to twin-TWIN_BATCH)."""
    return tuple(range(batch * TWIN_BATCH + 1, (batch + 1) * TWIN_BATCH + 1))


def train_faithful(
    net: str, seeds: tuple[int, ...], config: TrainConfig = TrainConfig()
) -> dict[str, np.ndarray]:
    """`net` trained on `seeds` in the faithful order on the recipe's split (read here, so
    that a child process reads it for itself) and its outputs, uncached."""
    split = load_split()
    models, losses = train_nets_faithful(net, seeds, split.train_x, split.train_y, config)
    return forward_outputs(net, models, losses, split, eager=True)


def train_scan_vmap(
    net: str,
    seeds: tuple[int, ...],
    split: Split,
    config: TrainConfig = TrainConfig(),
    *,
    mesh: Mesh | None = None,
    own_programs: bool = True,
    inputs_on: Callable[[], contextlib.AbstractContextManager[object]] = contextlib.nullcontext,
) -> dict[str, np.ndarray]:
    """`net` trained on `seeds` in the scan_vmap order (`train_nets`, split over `mesh`, a
    sweep's initial weights built under `inputs_on()`) and its outputs (`forward_outputs`
    with `own_programs`), uncached."""
    models, losses = train_nets(
        net, seeds, split.train_x, split.train_y, config, mesh=mesh, inputs_on=inputs_on
    )
    return forward_outputs(net, models, losses, split, own_programs=own_programs)


def twin_outputs(
    nudges: Sequence[int],
    *,
    net: str,
    seeds: tuple[int, ...],
    split: Split,
    config: TrainConfig = TrainConfig(),
    own_programs: bool = True,
) -> list[list[dict[str, np.ndarray]]]:
    """The twins of `nudges` of `net` on each seed of `seeds` (`train_twins`), uncached: per
    twin, one output of `forward_outputs` per seed."""
    by_twin: list[list[dict[str, np.ndarray]]] = [[] for _ in nudges]
    for seed in seeds:
        models, losses = train_twins(net, seed, tuple(nudges), split.train_x, split.train_y, config)
        for i, model in enumerate(models):
            by_twin[i].append(
                forward_outputs(net, [model], losses[i : i + 1], split, own_programs=own_programs)
            )
    return by_twin


def stacked_twins(by_twin: Sequence[Sequence[dict[str, np.ndarray]]]) -> dict[str, np.ndarray]:
    """`twin_outputs`' outputs as arrays: a leading axis over the twins, then one over the
    seeds."""
    return {
        name: np.stack([np.concatenate([one[name] for one in seeds_of]) for seeds_of in by_twin])
        for name in by_twin[0][0]
    }


def validator(
    net: str, n_seeds: int, split: Split, config: TrainConfig, twins: int = 0
) -> Callable[[dict[str, np.ndarray]], None]:
    """A check of stored outputs of `net` on `n_seeds` seeds (with `twins`, a leading axis
    over that many twins): every array of its shape, every value finite; ValueError
    otherwise."""
    n_steps = config.epochs * len(
        range(0, len(split.train_y) - config.batch_size, config.batch_size)
    )
    shapes = {
        "train_loss": (n_seeds, n_steps),
        "logits_test": (n_seeds, len(split.test_y), 10),
        "logits_heldout": (n_seeds, len(split.heldout_y), 10),
        "logits_ood": (n_seeds, len(split.ood_x), 10),
    }
    if net == "yat":
        shapes |= {
            "kmax_test": (n_seeds, len(split.test_y)),
            "kmax_ood": (n_seeds, len(split.ood_x)),
        }

    if twins:
        shapes = {name: (twins, *shape) for name, shape in shapes.items()}

    def validate(arrays: dict[str, np.ndarray]) -> None:
        got = {name: array.shape for name, array in arrays.items()}
        if got != shapes:
            raise ValueError(f"expected arrays {shapes}, got {got}")
        for name, array in arrays.items():
            if not np.all(np.isfinite(array)):
                raise ValueError(f"{name} holds NaN or inf")

    return validate


def cache_key(net: str, seeds: tuple[int, ...], config: TrainConfig, order: str) -> dict:
    """Everything that changes a net's trained outputs."""
    return {
        "net": net,
        "seeds": list(seeds),
        "order": order,
        "config": asdict(config),
        "data": data.data_digests(),
    }
