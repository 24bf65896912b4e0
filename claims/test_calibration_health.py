"""Health of the six calibration nets: the claims are only as good as these models.

Each check is a claim (`H-cal-...`), the suite's own: every seed of a net passes one health
check of lib/calibration/health.py, whose threshold the audit shows as published."""

from __future__ import annotations

import pytest
from claim_audit import Claims
from readings.calibration.measures import seeds_of
from readings.health_verdicts import health_judgement

from uncertainty_claims.calibration.experiment import NETS
from uncertainty_claims.orders.calibration import calibration_health

CLAIMS = Claims("calibration")
S_HEALTH = "Model health"
HEALTH_CHECKS = {  # each check and the short name its claim id carries (ids are never cut)
    "converged": "converged",
    "beats chance": "beats-chance",
    "max probability not pinned": "not-pinned",
    "temperature at the NLL minimum": "temperature",
}


@pytest.mark.health
@CLAIMS.each(
    "net, check",
    [
        CLAIMS.case(
            f"H-cal-{net}-{short}",
            S_HEALTH,
            f"Every seed of the {net} net passes the health check '{check}'.",
            net,
            check,
            origin="suite",
        )
        for net in NETS
        for check, short in HEALTH_CHECKS.items()
    ],
)
def test_calibration_net_health(calibration, net, check):
    results = [
        next(r for r in seed_checks if r.name == check)
        for seed_checks in calibration_health(calibration)[net]
    ]
    return health_judgement(results, [f"seed {s}" for s in seeds_of(calibration.per_seed, net)])
