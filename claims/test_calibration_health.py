"""Health of the six calibration nets: the claims above are only as good as these models."""

from __future__ import annotations

import pytest

from lib.calibration.health import calibration_health
from lib.report.plugin import health_case

CHECKS = (
    "converged",
    "beats chance",
    "max probability not pinned",
    "temperature at the NLL minimum",
)
# Findings on the faithful recipe, kept as strict xfails (see the closing notes of issue 4).
FINDINGS = {
    ("relu", "converged"): "finding: the ReLU net is still improving at epoch 12 - on seed 1 the "
    "last tenth of training moved the loss by 5.3% of its range (threshold 5%), beyond noise",
}
CASES = [
    health_case(
        net,
        check,
        document="calibration",
        claim_id=f"H-cal-{net}-{check.split()[0][:5]}",
        statement=f"Every seed of the {net} net passes the health check '{check}'.",
        finding=FINDINGS.get((net, check)),
    )
    for net in ("yat", "relu")
    for check in CHECKS
]


@pytest.mark.health
@pytest.mark.parametrize(("net", "check"), CASES)
def test_calibration_net_health(claim, calibration, net, check):
    results = [
        next(c for c in seed_checks if c.name == check)
        for seed_checks in calibration_health(calibration)[net]
    ]
    claim.holds(
        all(r.passed for r in results),
        published=results[0].threshold,
        measured=[round(r.measured, 4) for r in results],
    )
