"""Health of the calibration nets, per net and seed."""

from __future__ import annotations

import dataclasses
import json

import numpy as np

from .. import metrics
from ..cache import cached
from ..health import HealthCheck, classifier_health
from ..metrics.classification import TEMPERATURE_BOUNDS
from ..orders import FAITHFUL
from ..placement import host_process
from .evaluation import CalibrationResults
from .experiment import NetRun

# The fitted temperature is checked against these: the search range, log-spaced.
TEMPERATURE_GRID = np.geomspace(*TEMPERATURE_BOUNDS, 401)
# Far above what Brent's stopping tolerance leaves (about 1e-10 nats here), far below any
# printed figure.
NLL_SLACK = 1e-6


def temperature_at_nll_minimum(
    logits: np.ndarray, labels: np.ndarray, temperature: float
) -> HealthCheck:
    """The fitted temperature's held-out NLL is within `NLL_SLACK` of the lowest NLL on
    `TEMPERATURE_GRID`, computed on the same logits and labels.

    The recipe's bounded Brent search is kept as published, but the 1e-12 probability
    floor makes the NLL flat in stretches, where the search can stop: for logits
    [[0, 80], [40, 0]] and labels [0, 0] it returns T = 0.206 (NLL 13.8), while T = 20
    gives 2.07. Measured: how far (nats) the fitted T's NLL lies above the grid minimum
    (0 when no grid temperature does better).
    """
    fitted, *grid = metrics.heldout_nll_curve(logits, labels, [temperature, *TEMPERATURE_GRID])
    excess = max(0.0, float(fitted - min(grid)))
    return HealthCheck.check(
        "temperature at the NLL minimum",
        excess,
        NLL_SLACK,
        f"<= {NLL_SLACK:g} nats above the minimum over {len(grid)} temperatures",
        inclusive=True,
    )


def compute_calibration_health(results: CalibrationResults) -> dict[str, list[list[HealthCheck]]]:
    """For each net, one list of checks per seed (computed, not cached; beside an
    accelerator in a child process on the host's CPU, `placement.host_process`)."""
    return host_process(_health_of, results.runs, results.per_seed, results.split.heldout_y)


def _health_of(
    runs: dict[str, NetRun], per_seed: dict[str, list[dict]], heldout_y: np.ndarray
) -> dict[str, list[list[HealthCheck]]]:
    """The checks of each net's run, from its per-seed figures (test NLL, fitted T)."""
    return {
        net: [
            [
                *classifier_health(
                    run.train_loss[i], per_seed[net][i]["nll"], metrics.softmax(run.logits_test[i])
                ),
                temperature_at_nll_minimum(run.logits_heldout[i], heldout_y, per_seed[net][i]["T"]),
            ]
            for i in range(len(run.seeds))
        ]
        for net, run in runs.items()
    }


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
