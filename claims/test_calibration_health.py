"""Health of the six calibration nets: the claims above are only as good as these models."""

from __future__ import annotations

import pytest

from lib.calibration.health import calibration_health
from lib.report.plugin import health_case
from lib.verdict import Judgement, satisfied

# Each check and the short name its claim id carries (whole words: ids are never cut).
CHECKS = {
    "converged": "converged",
    "beats chance": "beats-chance",
    "max probability not pinned": "not-pinned",
    "temperature at the NLL minimum": "temperature",
}
# Findings: checks refuted in every float order, with the measured value.
FINDINGS = {
    ("relu", "converged"): "the ReLU net is still improving at epoch 12: on seed 1 the last "
    "tenth of training moved the loss by 5.2% of its range (threshold 5%) in the documents' "
    "order, 5.25% in the vmap order",
}
CASES = [
    health_case(
        net,
        check,
        document="calibration",
        claim_id=f"H-cal-{net}-{CHECKS[check]}",
        statement=f"Every seed of the {net} net passes the health check '{check}'.",
        finding=FINDINGS.get((net, check)),
    )
    for net in ("yat", "relu")
    for check in CHECKS
]


@pytest.mark.health
@pytest.mark.parametrize(("net", "check"), CASES)
def test_calibration_net_health(claim, calibration, net, check):
    def judge(c) -> Judgement:
        results = [
            next(r for r in seed_checks if r.name == check)
            for seed_checks in calibration_health(c)[net]
        ]
        return satisfied(
            all(r.passed for r in results),
            published=results[0].threshold,
            measured=[round(r.measured, 4) for r in results],
        )

    claim.check(calibration, judge)
