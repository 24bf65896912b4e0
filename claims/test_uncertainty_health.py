"""Health of the uncertainty models: the guide's claims are only as good as these nets.

Each check is a claim (`H-unc-...`), defined once in lib/uncertainty/claims/specs.py."""

from __future__ import annotations

import pytest

from uncertainty_claims.uncertainty.claims.specs import HEALTH_TESTS, SPECS


@pytest.mark.health
@pytest.mark.parametrize(
    "claim_id", [SPECS.param(claim_id, id=case) for claim_id, case in HEALTH_TESTS.items()]
)
def test_uncertainty_model_health(claim, uncertainty, claim_id):
    claim.check(uncertainty)
