"""Health checks as claims: a model's checks (lib/health.py) judged as threshold claims, each
check's margin beyond its limit a number that must stay below 0."""

from __future__ import annotations

from collections.abc import Sequence

from claim_audit import Judgement, Region, Threshold

from uncertainty_claims.health import HealthCheck


def check_threshold(check: HealthCheck, label: str) -> Threshold:
    """The check as a threshold claim's number: its margin, which must stay below 0 (or at
    it, where the check is inclusive)."""
    region = Region(high=0.0, closed=check.inclusive)
    return Threshold(f"{label}: {check.name}, measured - limit", check.margin, region)


def health_judgement(checks: Sequence[HealthCheck], labels: Sequence[str]) -> Judgement:
    """Every check passes: a threshold claim on each check's margin (labelled by `labels`,
    e.g. the seeds), shown with the measured figures and the threshold."""
    return Judgement(
        all(c.passed for c in checks),
        checks[0].threshold,
        [round(c.measured, 4) for c in checks],
        thresholds=tuple(
            check_threshold(c, label) for c, label in zip(checks, labels, strict=True)
        ),
    )
