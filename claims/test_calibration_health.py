"""Health of the six calibration nets: the claims above are only as good as these models.

Each check is a claim (`H-cal-...`), defined once in lib/calibration/claims/specs.py."""

from __future__ import annotations

import pytest

from uncertainty_claims.calibration.claims.specs import HEALTH_TESTS, SPECS


@pytest.mark.health
@pytest.mark.parametrize(
    "claim_id", [SPECS.param(claim_id, id=case) for claim_id, case in HEALTH_TESTS.items()]
)
def test_calibration_net_health(claim, calibration, claim_id):
    claim.check(calibration)
