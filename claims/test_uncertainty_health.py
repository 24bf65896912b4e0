"""Health of the uncertainty models: the guide's claims are only as good as these nets.

Each check is a claim (`H-unc-...`), the suite's own: the model `method` passes the health
check `check` (lib/uncertainty/health.py), whose threshold is what the audit shows as
published. A recorded finding carries its typicality beside it: the same check on root keys
1..20."""

from __future__ import annotations

import dataclasses

import pytest
from claim_audit import Claims
from readings.health_verdicts import health_judgement
from readings.uncertainty_rules import health_over_root_keys

from uncertainty_claims.uncertainty.health import uncertainty_health

CLAIMS = Claims("uncertainty")
S_HEALTH = "Model health"


@pytest.mark.health
@CLAIMS.each(
    "method, check",
    [
        CLAIMS.case(
            "H-unc-mc-converged",
            S_HEALTH,
            "The mc-dropout model passes the health check 'converged'.",
            "mc_dropout",
            "converged",
            origin="suite",
        ),
        CLAIMS.case(
            "H-unc-mc-beats-constant",
            S_HEALTH,
            "The mc-dropout model passes the health check 'beats constant'.",
            "mc_dropout",
            "beats constant",
            origin="suite",
            finding="the MC-Dropout net's training NLL is 2.00, worse than predicting the "
            "data's mean and variance everywhere (-0.23): it never learned. The published net's: "
            "on 16 of root keys 1-20 the MC net beats the constant",
            beside=health_over_root_keys("mc_dropout", "beats constant"),
        ),
        CLAIMS.case(
            "H-unc-mc-not-pinned",
            S_HEALTH,
            "The mc-dropout model passes the health check 'log-variance not pinned'.",
            "mc_dropout",
            "log-variance not pinned",
            origin="suite",
            finding="every MC-Dropout output sits at the log-variance clip 4, where jnp.clip "
            "passes no gradient. The published net's: on 18 of root keys 1-20 at most half its "
            "outputs are at the clip",
            beside=health_over_root_keys("mc_dropout", "log-variance not pinned"),
        ),
        CLAIMS.case(
            "H-unc-ens-converged",
            S_HEALTH,
            "The ensemble model passes the health check 'converged' (its worst member).",
            "ensemble",
            "converged",
            origin="suite",
            finding="the worst ensemble member is still moving at step 1000 (last-tenth change "
            "6.9% of its range; 6.8% to 7.6% over the float orders). Typical: the worst member "
            "has converged on only 5 of root keys 1-20",
            beside=health_over_root_keys("ensemble", "converged"),
        ),
        CLAIMS.case(
            "H-unc-ens-beats-constant",
            S_HEALTH,
            "The ensemble model passes the health check 'beats constant' (its worst member).",
            "ensemble",
            "beats constant",
            origin="suite",
            finding="the worst ensemble member's training NLL is 0.71, worse than the constant "
            "predictor's -0.23. Typical: on only 4 of root keys 1-20 does every member beat the "
            "constant",
            beside=health_over_root_keys("ensemble", "beats constant"),
        ),
        CLAIMS.case(
            "H-unc-ens-not-pinned",
            S_HEALTH,
            "The ensemble model passes the health check 'log-variance not pinned' (its worst member).",
            "ensemble",
            "log-variance not pinned",
            origin="suite",
        ),
    ],
)
def test_uncertainty_model_health(uncertainty, method, check):
    health = next(c for c in uncertainty_health(uncertainty)[method] if c.name == check)
    return dataclasses.replace(health_judgement([health], [method]), measured=health.measured)
