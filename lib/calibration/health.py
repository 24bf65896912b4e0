"""Health of the calibration nets, per net and seed."""

from __future__ import annotations

from lib import metrics
from lib.calibration.evaluation import CalibrationResults
from lib.health import HealthCheck, classifier_health


def calibration_health(results: CalibrationResults) -> dict[str, list[list[HealthCheck]]]:
    """For each net, one list of checks per seed."""
    return {
        net: [
            classifier_health(
                run.train_loss[i],
                results.per_seed[net][i]["nll"],
                metrics.softmax(run.logits_test[i]),
            )
            for i in range(len(run.seeds))
        ]
        for net, run in results.runs.items()
    }
