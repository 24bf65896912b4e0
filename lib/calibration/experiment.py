"""The calibration experiment end to end: data, training (cached), evaluation.

`run_calibration()` returns, per net, everything the claims need as arrays of
float64 logits and kernel scores; `evaluate()` turns them into the recipe's
figures. The trained arrays are cached on disk (see lib/cache.py).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

import jax
import jax.numpy as jnp
import numpy as np

from lib import data
from lib.cache import CacheResult, cached, lib_sources, runtime_key, source_digest
from lib.calibration.training import TrainConfig, train_nets
from lib.numerics import full_precision
from lib.sharding import default_mesh

NETS = ("yat", "relu")
PUBLISHED_SEEDS = (0, 1, 2)
_EVAL_BATCH = 2000


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


def load_split() -> Split:
    """Fashion-MNIST train split into 55,000 / 5,000 (RandomState(123)), test, MNIST test."""
    train = data.load_fashion_mnist("train")
    test = data.load_fashion_mnist("test")
    ood = data.load_mnist_test()
    train_idx, heldout_idx = data.fashion_split(len(train.labels))
    images = data.to_float(train.images)
    return Split(
        train_x=images[train_idx],
        train_y=train.labels[train_idx],
        heldout_x=images[heldout_idx],
        heldout_y=train.labels[heldout_idx],
        test_x=data.to_float(test.images),
        test_y=test.labels,
        ood_x=data.to_float(ood.images),
    )


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
        """Wrap stored arrays, taking every figure to float64 (RECIPE.md A: before any metric)."""
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


def _batched(fn, x: np.ndarray) -> np.ndarray:
    return np.concatenate(
        [np.asarray(fn(jnp.asarray(x[i : i + _EVAL_BATCH]))) for i in range(0, len(x), _EVAL_BATCH)]
    )


@full_precision
def forward_outputs(
    net: str, models: list, losses: np.ndarray, split: Split
) -> dict[str, np.ndarray]:
    """The arrays a trained net contributes: losses, logits on every set, kernel maxima (Yat)."""
    out: dict[str, list[np.ndarray]] = {"logits_test": [], "logits_heldout": [], "logits_ood": []}
    if net == "yat":
        out |= {"kmax_test": [], "kmax_ood": []}
    for model in models:
        logits = jax.jit(lambda x, m=model: m(x))
        out["logits_test"].append(_batched(logits, split.test_x))
        out["logits_heldout"].append(_batched(logits, split.heldout_x))
        out["logits_ood"].append(_batched(logits, split.ood_x))
        if net == "yat":
            kmax = jax.jit(lambda x, m=model: m.features(x).max(-1))
            out["kmax_test"].append(_batched(kmax, split.test_x))
            out["kmax_ood"].append(_batched(kmax, split.ood_x))
    return {"train_loss": np.asarray(losses), **{name: np.stack(v) for name, v in out.items()}}


def _validator(net: str, n_seeds: int, split: Split, config: TrainConfig):
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

    def validate(arrays: dict[str, np.ndarray]) -> None:
        got = {name: array.shape for name, array in arrays.items()}
        if got != shapes:
            raise ValueError(f"expected arrays {shapes}, got {got}")
        for name, array in arrays.items():
            if not np.all(np.isfinite(array)):
                raise ValueError(f"{name} holds NaN or inf")

    return validate


# Hashed once, when this code is imported: a process must key its results by the code it
# runs, not by whatever the source files hold later (an edit during a long run).
_CODE_DIGEST = source_digest(lib_sources(__name__))


def cache_key(net: str, seeds: tuple[int, ...], config: TrainConfig) -> dict:
    """Everything that changes a net's trained outputs."""
    return {
        "net": net,
        "seeds": list(seeds),
        "config": asdict(config),
        "data": data.data_digests(),
        "code": _CODE_DIGEST,
        **runtime_key(),
    }


def run_net(
    net: str, seeds: tuple[int, ...] = PUBLISHED_SEEDS, config: TrainConfig = TrainConfig()
) -> NetRun:
    """Train (or load from the cache) one net on the given seeds, with its evaluation outputs."""
    if net not in NETS:
        raise ValueError(f"net must be one of {NETS}; got {net!r}")
    split = load_split()
    result: CacheResult = cached(
        f"calibration-{net}",
        cache_key(net, seeds, config),
        lambda: forward_outputs(
            net,
            *train_nets(net, seeds, split.train_x, split.train_y, config, mesh=default_mesh()),
            split,
        ),
        validate=_validator(net, len(seeds), split, config),
    )
    return NetRun.from_arrays(net, seeds, result.arrays, result.status)


def run_nets(
    seeds: tuple[int, ...] = PUBLISHED_SEEDS, config: TrainConfig = TrainConfig()
) -> dict[str, NetRun]:
    """`run_net` for every net, the nets trained side by side in threads.

    One net's program keeps about 1.6 of this machine's 2 cores busy (its matrices are
    small); two side by side fill them, 1.4x faster. Each program is the executable it
    would be alone, so no result changes (claims/test_recipe.py).
    """
    with ThreadPoolExecutor(max_workers=len(NETS)) as pool:
        runs = {net: pool.submit(run_net, net, seeds, config) for net in NETS}
    return {net: run.result() for net, run in runs.items()}
