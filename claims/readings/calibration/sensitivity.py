"""The calibration claims under choices the post fixed: ECE binning and the OOD score.

The post measures ECE with 15 equal-width bins and compares the ReLU net's max logit
with the Yat field. Here "the Yat ECE is three to four times the ReLU ECE" (cal-02c,
cal-10c) is re-measured with 10, 15, 20 and 30 equal-width and equal-mass bins, and
"the ReLU max logit is a touch better than the field" (cal-11c) with the ReLU net's
energy score and softmax confidence in place of its max logit.
"""

from __future__ import annotations

from dataclasses import dataclass

from claim_audit import Comparison, PerSeed

from uncertainty_claims import metrics
from uncertainty_claims.calibration.evaluation import CalibrationResults

from .measures import ece_ratio, ood_gap

BINNINGS: tuple[tuple[str, int], ...] = tuple(
    (kind, n) for kind in ("width", "mass") for n in (10, metrics.N_BINS, 20, 30)
)
OOD_SCORES = (("maxlogit", "maxlogit"), ("energy", "energy"), ("msp", "MSP"))
OOD_GAP_CLAIM = "cal-11c"  # the claim whose variants are the other ReLU scores (measures.ood_gap)
_KIND = {"width": "equal-width", "mass": "equal-mass"}
_ECE = {"width": metrics.ece, "mass": metrics.ece_equal_mass}


@dataclass(frozen=True)
class Variant:
    """A claim measured another way: `published` marks the post's own choice."""

    label: str
    comparison: Comparison
    published: bool


def figure_name(base: str, kind: str, n_bins: int) -> str:
    """The per-seed figure of ECE (`base` "ece" or "ece_T") with another binning."""
    return f"{base}@{kind}{n_bins}"


def with_binnings(results: CalibrationResults) -> PerSeed:
    """The per-seed figures plus ECE and ECE after T under every binning in BINNINGS."""
    out: dict[str, list[dict]] = {}
    for net, seeds in results.per_seed.items():
        out[net] = []
        for i, figures in enumerate(seeds):
            logits = results.runs[net].logits_test[i]
            probs = {
                "ece": metrics.softmax(logits),
                "ece_T": metrics.softmax(metrics.scale_logits(logits, figures["T"])),
            }
            extra = {
                figure_name(base, kind, n): _ECE[kind](p, results.split.test_y, n_bins=n)
                for base, p in probs.items()
                for kind, n in BINNINGS
            }
            out[net].append({**figures, **extra})
    return out


def variants() -> list[Variant]:
    """Every variant of cal-02c, cal-10c (binnings) and cal-11c (OOD scores)."""
    out = [
        Variant(
            f"{n} {_KIND[kind]} bins",
            ece_ratio(figure_name(base, kind, n), label).for_claim(claim_id),
            published=(kind, n) == ("width", metrics.N_BINS),
        )
        for claim_id, base, label in (
            ("cal-02c", "ece", "ECE"),
            ("cal-10c", "ece_T", "ECE_T"),
        )
        for kind, n in BINNINGS
    ]
    out += [
        Variant(
            f"ReLU {label} vs Yat kmax",
            ood_gap(score, label).for_claim(OOD_GAP_CLAIM),
            published=score == "maxlogit",
        )
        for score, label in OOD_SCORES
    ]
    return out
