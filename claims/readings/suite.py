"""This suite's two documents together: what claims/conftest.py registers with the report.

Their documents (source, section, figures), their claims' registries, and the `robustness`
section of report/audit.json, from the cached experiments. Beside the faithful audit and
never changing its verdicts: intervals on the published seeds (test-image bootstrap), the
comparative claims re-evaluated on the sweep's seeds (`--seeds`), and the calibration
claims under other binnings and OOD scores. The one module that knows both documents; the
engine and the report import neither.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from claim_audit import (
    SEED_METHOD,
    Comparison,
    PerSeed,
    Robustness,
    across_runs,
    across_seeds,
    labels_text,
    stats,
    subsets_counted,
)

from readings.calibration import bootstrap, sensitivity
from uncertainty_claims.calibration.experiment import POST_SEEDS, PUBLISHED_SEEDS

if TYPE_CHECKING:
    from claim_audit import Document

PUBLISHED_KEY = 0  # the uncertainty guide's root key
KEYS = "root keys"  # what the uncertainty guide's seeds are


def documents() -> list[Document]:
    """Both documents as the report shows them: source, section, figures."""
    from readings.calibration.document import DOCUMENT as calibration
    from readings.uncertainty.document import DOCUMENT as uncertainty

    return [calibration, uncertainty]


def _resampled(comparison: Comparison) -> bool:
    return all(e.inputs and set(e.inputs) <= set(bootstrap.RESAMPLED) for e in comparison.effects)


_PUBLISHED_FIELDS = {"seeds", "effects", "units", "regions", "region_bounds", "values"}
_PUBLISHED_FIELDS |= {"per_seed_values", "per_seed_holds"}


def _published(
    comparison: Comparison, robustness: Robustness, intervals: list[dict] | None = None
) -> dict[str, Any]:
    """The claim on the document's own seeds (key): its effects, whether it holds, and the
    effects' test-image intervals (`claim_intervals`) where they can be resampled."""
    out = {name: value for name, value in robustness.to_json().items() if name in _PUBLISHED_FIELDS}
    return {**out, "holds": comparison.holds_for(list(robustness.values)), "intervals": intervals}


def _calibration(
    sweep: tuple[int, ...] | None, comparisons: Sequence[Comparison]
) -> tuple[dict, list[dict], dict]:
    results = bootstrap.calibration_on(PUBLISHED_SEEDS)
    claims: dict[str, dict] = {}
    for comparison in comparisons:
        published = _published(
            comparison,
            across_seeds(comparison, results.per_seed, PUBLISHED_SEEDS, size=POST_SEEDS),
            bootstrap.claim_intervals(comparison) if _resampled(comparison) else None,
        )
        claims[comparison.claim()] = {"document": "calibration", "published": published}
    on_sweep: PerSeed | None = None
    if sweep:
        on_sweep = sensitivity.with_binnings(bootstrap.calibration_on(sweep))
        for comparison in comparisons:
            claims[comparison.claim()]["sweep"] = across_seeds(
                comparison, on_sweep, sweep, size=POST_SEEDS
            ).to_json()
    published_binnings = sensitivity.with_binnings(results)
    rows = []
    for variant in sensitivity.variants():
        row = {
            "claim_id": variant.comparison.claim(),
            "variant": variant.label,
            "effect": variant.comparison.effects[0].name,
            "region": str(variant.comparison.effects[0].region),
            "post_choice": variant.published,
            "published": _published(
                variant.comparison,
                across_seeds(
                    variant.comparison, published_binnings, PUBLISHED_SEEDS, size=POST_SEEDS
                ),
            ),
        }
        if on_sweep is not None:
            row["sweep"] = across_seeds(
                variant.comparison, on_sweep, sweep, size=POST_SEEDS
            ).to_json()
        rows.append(row)
    figures = bootstrap.figure_samples().figure_intervals(results.per_seed)
    return claims, rows, figures


def _uncertainty(sweep: tuple[int, ...] | None, comparisons: Sequence[Comparison]) -> dict:
    from uncertainty_claims.orders.uncertainty import uncertainty_result

    faithful = uncertainty_result(PUBLISHED_KEY)
    # Sweep keys in the fast scan order (any valid order is as good a sample over keys).
    runs = [uncertainty_result(key, implementation="scan") for key in sweep] if sweep else []
    claims = {}
    for comparison in comparisons:
        claims[comparison.claim()] = {
            "document": "uncertainty",
            "published": _published(
                comparison, across_runs(comparison, [faithful], (PUBLISHED_KEY,), unit=KEYS)
            ),
        }
        if sweep:
            claims[comparison.claim()]["sweep"] = across_runs(
                comparison, runs, sweep, unit=KEYS
            ).to_json()
    return claims


DOCUMENTS = ("calibration", "uncertainty")  # the documents with comparative claims
# The calibration post's per-seed figures, as the robustness section's tables show them.
FIGURE_COLUMNS = (
    ("acc", "accuracy"),
    ("ece", "ECE"),
    ("nll", "NLL"),
    ("brier", "Brier"),
    ("ece_T", "ECE after T"),
    ("nll_T", "NLL after T"),
    ("auroc.msp", "AUROC MSP"),
    ("auroc.maxlogit", "AUROC max logit"),
    ("auroc.energy", "AUROC energy"),
    ("auroc.kmax", "AUROC kmax"),
    ("auroc_subsample.msp", "AUROC MSP (subsample)"),
    ("auroc_subsample.kmax", "AUROC kmax (subsample)"),
)


def robustness_section(
    documents: Collection[str],
    sweep: tuple[int, ...] | None,
    comparisons: Mapping[str, Sequence[Comparison]],
) -> dict | None:
    """The section for the documents audited (None when none of them has comparative
    claims); `sweep`: the seeds (root keys) of --seeds; `comparisons`: each document's
    comparative claims (claims/, each test module's `COMPARISONS`), re-evaluated here."""
    if not set(documents) & set(DOCUMENTS):
        return None
    section: dict[str, Any] = {
        "methods": {
            "published": f"{stats.METHOD} over test images, B = {stats.B}, generator seed "
            f"{stats.SEED}; paired: the same resamples for every net and seed",
            "seeds": SEED_METHOD,
            "level": stats.LEVEL,
            "labels": labels_text(
                "3-seed subsets (calibration) or root keys (uncertainty)",
                subsets_counted(POST_SEEDS),
            ),
            "note": "The test-image intervals hold the nets fixed (training and the "
            "temperature fit are not resampled).",
            "holds_on": "of the 3-seed subsets (calibration) or of the root keys (uncertainty), "
            "those on which every effect of the claim lies in its region",
            "value": "the claim's statistic on all the seeds (calibration) or the mean over "
            "the root keys (uncertainty)",
        },
        "published_seeds": list(PUBLISHED_SEEDS),
        "sweep_seeds": list(sweep) if sweep else None,
        "claims": {},
        "sensitivity": [],
        "figure_intervals": None,
        "figure_group": "net",
        "figure_columns": [list(column) for column in FIGURE_COLUMNS],
    }
    if "calibration" in documents:
        claims, rows, figures = _calibration(sweep, comparisons["calibration"])
        section["claims"].update(claims)
        section["sensitivity"] = rows
        section["figure_intervals"] = figures
    if "uncertainty" in documents:
        section["claims"].update(_uncertainty(sweep, comparisons["uncertainty"]))
    return section
