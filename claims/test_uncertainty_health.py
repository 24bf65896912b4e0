"""Health of the uncertainty models: the guide's claims are only as good as these nets."""

from __future__ import annotations

import pytest

from lib.report.plugin import health_case
from lib.uncertainty.health import uncertainty_health
from lib.verdict import satisfied

# Each check and the short name its claim id carries (whole words: ids are never cut).
CHECKS = {
    "converged": "converged",
    "beats constant": "beats-constant",
    "log-variance not pinned": "not-pinned",
}
# Findings on the faithful recipe that hold in every float order, with the measured value.
FINDINGS = {
    (
        "mc_dropout",
        "beats constant",
    ): "the MC-Dropout net's training NLL is 2.00, worse than "
    "predicting the data's mean and variance everywhere (-0.23): it never learned",
    ("mc_dropout", "log-variance not pinned"): "every MC-Dropout output sits at the "
    "log-variance clip 4, where jnp.clip passes no gradient",
    ("ensemble", "converged"): "the worst ensemble member is still moving at step 1000 "
    "(last-tenth change 6.9% of its range; 6.9% to 7.6% over the float orders)",
    ("ensemble", "beats constant"): "the worst ensemble member's training NLL is 0.71, "
    "worse than the constant predictor's -0.23",
}
CASES = [
    health_case(
        method,
        check,
        document="uncertainty",
        claim_id=f"H-unc-{'mc' if method == 'mc_dropout' else 'ens'}-{CHECKS[check]}",
        statement=f"The {method.replace('_', '-')} model passes the health check '{check}'"
        + (" (its worst member)" if method == "ensemble" else "")
        + ".",
        finding=FINDINGS.get((method, check)),
    )
    for method in ("mc_dropout", "ensemble")
    for check in CHECKS
]


@pytest.mark.health
@pytest.mark.parametrize(("method", "check"), CASES)
def test_uncertainty_model_health(claim, uncertainty, method, check):
    def judge(result):
        health = next(c for c in uncertainty_health(result)[method] if c.name == check)
        return satisfied(health.passed, published=health.threshold, measured=health.measured)

    claim.check(uncertainty, judge)
