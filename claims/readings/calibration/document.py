"""The calibration post in the report: its source, audit.json section and figure data.

Read from the cached faithful-order results, the same the claim tests use; the report
(engine/claim_audit/render) only renders what this module gathers. Registered by claims/conftest.py.
"""

from __future__ import annotations

from typing import Any

from claim_audit import Document, FigureSpec, Source

from uncertainty_claims import metrics
from uncertainty_claims.calibration.evaluation import (
    SUBSAMPLE_OOD,
    SUBSAMPLE_TEST,
    aggregate,
)
from uncertainty_claims.calibration.experiment import PUBLISHED_SEEDS
from uncertainty_claims.orders.calibration import calibration_health, calibration_results

from . import figures
from .sections import HEADINGS

SEED_INDEX = 0  # the post's figures are of its first seed
NETS = ("yat", "relu")
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


def figure_data(robustness: dict | None) -> dict[str, Any]:
    """The data of each figure (claims/readings/calibration/figures.py says what each reads): the post's
    figures on its first seed, and the per-seed AUROCs with the robustness section's
    test-image intervals where it has them."""
    results = calibration_results()
    runs, per_seed = results.runs, results.per_seed
    seed = per_seed["yat"][SEED_INDEX]["seed"]
    return {
        "reliability_seed0.png": {
            "seed": seed,
            "n_bins": metrics.N_BINS,
            "labels": results.split.test_y,
            "nets": {
                net: {
                    "logits": runs[net].logits_test[SEED_INDEX],
                    **{name: per_seed[net][SEED_INDEX][name] for name in ("T", "ece", "ece_T")},
                }
                for net in NETS
            },
        },
        "heldout_nll_vs_T.png": {
            "seed": seed,
            "labels": results.split.heldout_y,
            "nets": {
                net: {
                    "logits": runs[net].logits_heldout[SEED_INDEX],
                    "T": per_seed[net][SEED_INDEX]["T"],
                }
                for net in NETS
            },
        },
        "confidence_hist.png": {
            "seed": seed,
            "nets": {
                net: {
                    "logits_test": runs[net].logits_test[SEED_INDEX],
                    "logits_ood": runs[net].logits_ood[SEED_INDEX],
                    "auroc_msp": per_seed[net][SEED_INDEX]["auroc"]["msp"],
                }
                for net in NETS
            },
        },
        "kmax_hist.png": {
            "seed": seed,
            "test": runs["yat"].kmax_test[SEED_INDEX],
            "ood": runs["yat"].kmax_ood[SEED_INDEX],
            "auroc_kmax": per_seed["yat"][SEED_INDEX]["auroc"]["kmax"],
        },
        "auroc_per_seed.png": {
            "per_seed": {net: per_seed[net] for net in NETS},
            "subsample": [SUBSAMPLE_TEST, SUBSAMPLE_OOD],
            "intervals": (robustness or {}).get("figure_intervals"),
        },
    }


_SEED = PUBLISHED_SEEDS[SEED_INDEX]

FIGURES = (
    FigureSpec(
        "reliability_seed0.png",
        f"Reliability diagrams of both nets on seed {_SEED}, before and after temperature "
        f"scaling: accuracy against confidence in {metrics.N_BINS} equal-width bins, the gap "
        "to the diagonal hatched.",
        ("cal-02a", "cal-02b", "cal-02c", "cal-04a", "cal-04b", "cal-10a", "cal-10b", "cal-10c"),
        figures.reliability_figure,
    ),
    FigureSpec(
        "heldout_nll_vs_T.png",
        f"Held-out NLL against the temperature T on seed {_SEED}, the fitted T marked for "
        "each net.",
        ("cal-08a", "cal-08b"),
        figures.heldout_nll_figure,
    ),
    FigureSpec(
        "confidence_hist.png",
        f"Max-softmax confidence on Fashion-MNIST test and on MNIST, seed {_SEED}, both nets.",
        ("cal-13b",),
        figures.confidence_figure,
    ),
    FigureSpec(
        "kmax_hist.png",
        f"The Yat net's field magnitude kmax on Fashion-MNIST test and on MNIST, seed {_SEED}, "
        "with both medians.",
        ("cal-05a", "cal-11a", "cal-12a", "cal-12b"),
        figures.kmax_figure,
    ),
    FigureSpec(
        "auroc_per_seed.png",
        "OOD AUROC per seed of the field (kmax) and softmax (MSP) channels, on the post's "
        "subsample and the full sets, and of the ReLU max logit; bars: 95% test-image "
        "bootstrap intervals where the robustness section has them.",
        ("cal-11a", "cal-11b", "cal-11c", "cal-13a", "cal-13b", "cal-13c", "cal-14"),
        figures.auroc_figure,
    ),
)

DOCUMENT = Document(
    "calibration",
    Source(
        "Calibrating a Bounded Net, in JAX/Flax NNX",
        "blog post by Taha Bouhsine (2026)",
        "https://tahabouhsine.com/blog/calibration-of-a-bounded-net-jax-flax-nnx/",
        headings=HEADINGS,
    ),
    calibration_section,
    FIGURES,
    figure_data,
)
