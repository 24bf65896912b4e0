"""The calibration recipe's orders: which order runs where, cached on disk.

The recipe (lib/calibration/) computes; this module chooses where (uncertainty_claims.placement):
the faithful order on the host's CPU (beside an accelerator in a child process of its own),
the others on the default device, the twins spread over the machine's arithmetics, the
health checks' NumPy on the host. `calibration_orders` gives both nets on the published
seeds in every order judged; `calibration_results` one order's runs and figures;
`calibration_health` their health checks. The trained arrays, figures and checks are
cached on disk (lib/cache.py), keyed by where they were computed.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..cache import Entry, cached
from ..calibration.evaluation import CalibrationResults, evaluate, runs_key
from ..calibration.experiment import (
    NETS,
    PUBLISHED_SEEDS,
    TWIN_BATCH,
    NetRun,
    Split,
    cache_key,
    check_order,
    load_split,
    order_names,
    stacked_twins,
    train_faithful,
    train_scan_vmap,
    twin_index,
    twin_nudges,
    twin_outputs,
    validator,
)
from ..calibration.health import health_of
from ..calibration.training import TrainConfig
from ..health import HealthCheck
from ..placement import host_process, on_host, where
from . import FAITHFUL


def _own_programs() -> bool:
    """Whether this thread's evaluation compiles each model's own programs (on a CPU) or one
    program per net and input shape (on an accelerator: `forward_outputs`)."""
    return where().platform == "cpu"


def train(
    order: str, net: str, seeds: tuple[int, ...], split: Split, config: TrainConfig = TrainConfig()
) -> dict[str, np.ndarray]:
    """`net` trained on `seeds` in the float order `order` (faithful or scan_vmap), where this
    thread computes (a sweep's initial weights on the host's CPU), and its outputs, uncached.
    The twins train by batch: `train_twin_batch`."""
    if order == FAITHFUL:
        return train_faithful(net, seeds, config)
    if order != "scan_vmap":
        raise ValueError(f"order must be faithful or scan_vmap; got {order!r}")
    return train_scan_vmap(
        net,
        seeds,
        split,
        config,
        mesh=where().mesh,
        own_programs=_own_programs(),
        inputs_on=on_host,
    )


def train_twin_batch(
    batch: int, net: str, seeds: tuple[int, ...], split: Split, config: TrainConfig = TrainConfig()
) -> dict[str, np.ndarray]:
    """The twins of batch `batch` of `net` on `seeds`, uncached: every output with a leading
    axis over the batch's twins, then one over the seeds. On one accelerator the first half
    of the batch trains on the host's CPU beside the rest (`Where.spread`)."""

    def trained(nudges: Sequence[int]) -> list[list[dict[str, np.ndarray]]]:
        return twin_outputs(
            nudges, net=net, seeds=seeds, split=split, config=config, own_programs=_own_programs()
        )

    return stacked_twins(where().spread(trained, twin_nudges(batch)))


def run_net(
    net: str,
    seeds: tuple[int, ...] = PUBLISHED_SEEDS,
    config: TrainConfig = TrainConfig(),
    order: str = FAITHFUL,
) -> NetRun:
    """Train (or load from the cache) one net on the given seeds in the float order `order`,
    with its evaluation outputs. The faithful order computes on the host's CPU
    (`placement.host_process`), the others where this thread computes."""
    if net not in NETS:
        raise ValueError(f"net must be one of {NETS}; got {net!r}")
    check_order(order)
    k = twin_index(order)
    if k is not None:
        batch = _twin_batch(net, seeds, config, (k - 1) // TWIN_BATCH)
        arrays = {name: array[(k - 1) % TWIN_BATCH] for name, array in batch.arrays.items()}
        return NetRun.from_arrays(net, seeds, arrays, batch.status)
    split = load_split()
    name = f"calibration-{net}" if order == FAITHFUL else f"calibration-{net}-{order}"
    with on_host(order == FAITHFUL):  # in this thread: run_nets trains the nets in threads
        result: Entry = cached(
            name,
            cache_key(net, seeds, config, order),
            lambda: (
                host_process(train_faithful, net, seeds, config)
                if order == FAITHFUL
                else train(order, net, seeds, split, config)
            ),
            validate=validator(net, len(seeds), split, config),
        )
    return NetRun.from_arrays(net, seeds, result.arrays, result.status)


@functools.cache
def _twin_batch(net: str, seeds: tuple[int, ...], config: TrainConfig, batch: int) -> Entry:
    """One batch of `net`'s twins (trained, or loaded from the cache), memoised per process:
    each of its twins reads it."""
    split = load_split()
    return cached(
        f"calibration-{net}-twins-{batch}",
        cache_key(net, seeds, config, f"twins-{batch}")
        | {"nudges": list(twin_nudges(batch)), "backends": where().backends},
        lambda: train_twin_batch(batch, net, seeds, split, config),
        validate=validator(net, len(seeds), split, config, twins=TWIN_BATCH),
    )


def run_nets(
    seeds: tuple[int, ...] = PUBLISHED_SEEDS,
    config: TrainConfig = TrainConfig(),
    order: str = FAITHFUL,
) -> dict[str, NetRun]:
    """`run_net` for every net, the nets trained side by side in threads.

    One net's program keeps fewer than two cores busy (its matrices are small); two side by
    side fill a two-core machine. Each program is the executable it would be alone,
    so no result changes (tests/test_recipe.py).
    """
    with ThreadPoolExecutor(max_workers=len(NETS)) as pool:
        runs = {net: pool.submit(run_net, net, seeds, config, order) for net in NETS}
    return {net: run.result() for net, run in runs.items()}


_FIGURES_FIELD = "per_seed_json"


def _evaluated(
    runs: dict[str, NetRun], split: Split, seeds: tuple[int, ...], order: str
) -> dict[str, list[dict]]:
    """`evaluate` of every net's run, cached on disk beside the runs and keyed like them
    (plus this code): a warm process reads the figures instead of recomputing them.

    Stored as JSON text, which gives back every float bit for bit (shortest round-trip
    repr), the figures' order and their types.
    """
    key = {"runs": runs_key(runs, seeds, order)}

    def compute() -> dict[str, np.ndarray]:
        per_seed = {net: evaluate(run, split) for net, run in runs.items()}
        return {_FIGURES_FIELD: np.array(json.dumps(per_seed))}

    def validate(arrays: dict[str, np.ndarray]) -> None:
        text = arrays.get(_FIGURES_FIELD)
        if set(arrays) != {_FIGURES_FIELD} or text is None or text.shape != ():
            raise ValueError(f"expected one text field {_FIGURES_FIELD!r}; got {sorted(arrays)}")
        per_seed = json.loads(str(text.item()))
        if {net: [f.get("seed") for f in figures] for net, figures in per_seed.items()} != {
            net: list(seeds) for net in runs
        }:
            raise ValueError(f"the stored figures are not those of {sorted(runs)} on {seeds}")

    suffix = "" if order == FAITHFUL else f"-{order}"
    with on_host(order == FAITHFUL):  # keyed by where the runs were computed
        entry = cached(f"calibration-figures{suffix}", key, compute, validate=validate)
    return json.loads(str(entry.arrays[_FIGURES_FIELD].item()))


@functools.cache
def calibration_results(
    seeds: tuple[int, ...] = PUBLISHED_SEEDS, order: str = FAITHFUL
) -> CalibrationResults:
    """Train (or load) both nets for `seeds` in `order` and evaluate them (figures cached on
    disk beside the runs); memoised per process."""
    split = load_split()
    runs = run_nets(seeds, order=order)
    per_seed = _evaluated(runs, split, seeds, order)
    return CalibrationResults(split, runs, per_seed, order, runs_key(runs, seeds, order))


def calibration_orders(
    n_orders: int | None = None,
) -> tuple[dict[str, CalibrationResults], dict[str, str]]:
    """Both nets on the published seeds in at least `n_orders` valid orders (`order_names`;
    default `ORDERS`), faithful first; and each order's digest of its figures. The faithful
    order computes beside the others (`Where.side_by_side`)."""
    names = order_names(n_orders)
    faithful, others = where().side_by_side(
        lambda: calibration_results(order=FAITHFUL),
        lambda: {order: calibration_results(order=order) for order in names[1:]},
    )
    results = {FAITHFUL: faithful, **others}
    # An order whose every figure repeats another's to the last bit is a copy, not a draw.
    digests = {
        order: hashlib.sha256(json.dumps(r.per_seed, sort_keys=True).encode()).hexdigest()
        for order, r in results.items()
    }
    return results, digests


def compute_calibration_health(results: CalibrationResults) -> dict[str, list[list[HealthCheck]]]:
    """For each net, one list of checks per seed (`health_of`; computed, not cached; beside
    an accelerator in a child process on the host's CPU, `placement.host_process`)."""
    return host_process(health_of, results.runs, results.per_seed, results.split.heldout_y)


_CHECKS_FIELD = "checks_json"
# Per process, by the canonical text of the disk entry's key.
_MEMO: dict[str, dict[str, list[dict]]] = {}


def calibration_health(results: CalibrationResults) -> dict[str, list[list[HealthCheck]]]:
    """For each net, one list of checks per seed.

    For the cached experiment's results (`results.runs_key` set) the checks are cached on
    disk beside the evaluated figures, keyed by the runs' keys and this code, and memoised
    per process: each claim judges every order, and the held-out NLL at 402 temperatures
    per seed is computed once, not once per claim, order and worker. Other results are
    computed each time.
    """
    if results.runs_key is None:
        return compute_calibration_health(results)
    key = {"runs": results.runs_key}
    memo_key = json.dumps(key, sort_keys=True)
    if memo_key not in _MEMO:
        _MEMO[memo_key] = _cached_health(results, key)
    # Fresh objects each call: a caller cannot change what the next one reads.
    return {
        net: [[HealthCheck(**check) for check in seed["checks"]] for seed in seeds]
        for net, seeds in _MEMO[memo_key].items()
    }


def _cached_health(results: CalibrationResults, key: dict) -> dict[str, list[dict]]:
    """The checks as JSON-able records per net, `[{"seed": s, "checks": [...]}, ...]`, from
    the disk cache. JSON text gives back every float bit for bit (shortest round-trip repr;
    NaN too), the checks' order and their types."""
    seeds = {net: list(run.seeds) for net, run in results.runs.items()}

    def compute() -> dict[str, np.ndarray]:
        health = compute_calibration_health(results)
        records = {
            net: [
                {"seed": seed, "checks": [dataclasses.asdict(check) for check in checks]}
                for seed, checks in zip(seeds[net], per_seed, strict=True)
            ]
            for net, per_seed in health.items()
        }
        return {_CHECKS_FIELD: np.array(json.dumps(records))}

    def validate(arrays: dict[str, np.ndarray]) -> None:
        text = arrays.get(_CHECKS_FIELD)
        if set(arrays) != {_CHECKS_FIELD} or text is None or text.shape != ():
            raise ValueError(f"expected one text field {_CHECKS_FIELD!r}; got {sorted(arrays)}")
        try:
            records = json.loads(str(text.item()))
            stored = {net: [r["seed"] for r in per_seed] for net, per_seed in records.items()}
            checks = [c for per_seed in records.values() for r in per_seed for c in r["checks"]]
        except (KeyError, TypeError, AttributeError) as error:
            raise ValueError(f"the stored checks are not laid out as written ({error!r})") from None
        if stored != seeds:
            raise ValueError(f"the stored checks are those of {stored}, not of {seeds}")
        fields = {f.name for f in dataclasses.fields(HealthCheck)}
        if any(not isinstance(c, dict) or set(c) != fields for c in checks):
            raise ValueError(f"a stored check does not have the fields {sorted(fields)}")

    suffix = "" if results.order == FAITHFUL else f"-{results.order}"
    entry = cached(f"calibration-health{suffix}", key, compute, validate=validate)
    return json.loads(str(entry.arrays[_CHECKS_FIELD].item()))
