"""The per-document sections of report/audit.json, read from the cached experiments."""

from __future__ import annotations

from lib.calibration.evaluation import aggregate, calibration_results
from lib.calibration.health import calibration_health

_AGGREGATED = ("acc", "ece", "nll", "brier", "T", "ece_T", "nll_T")


def calibration_section() -> dict:
    """`calibration`: per-seed full-set figures, 3-seed aggregates and model health."""
    results = calibration_results()
    aggregates = {}
    for net, seeds in results.per_seed.items():
        aggregates[net] = {
            name: dict(zip(("mean", "std"), aggregate([s[name] for s in seeds]), strict=True))
            for name in _AGGREGATED
        }
    health = {
        net: [
            {"seed": seed, **{c.name: c.to_json() for c in checks}}
            for seed, checks in zip(results.runs[net].seeds, per_seed, strict=True)
        ]
        for net, per_seed in calibration_health(results).items()
    }
    return {
        "seeds": list(results.runs["yat"].seeds),
        "units": "ece as a fraction (the post prints percent); AUROC with Fashion test as positives",
        "per_seed": results.per_seed,
        "aggregate": aggregates,
        "health": health,
    }


def uncertainty_section() -> dict:
    """`uncertainty`: printed traces, region means and model health of both methods."""
    from lib.uncertainty import printed_trace, region_summary
    from lib.uncertainty.health import uncertainty_health
    from lib.uncertainty.results import uncertainty_result

    result = uncertainty_result()
    trace, regions, health = (
        printed_trace(result),
        region_summary(result),
        uncertainty_health(result),
    )
    section = {"root_seed": result.root_seed}
    for name, method in (("mc_dropout", "mc"), ("ensemble", "ensemble")):
        section[name] = {
            "nll_trace": list(trace[method].values()),
            "nll_trace_steps": list(trace[method]),
            **{key: regions[method][key] for key in sorted(regions[method])},
            "health": {check.name: check.to_json() for check in health[name]},
        }
    return section
