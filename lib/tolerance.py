"""Tolerances for comparing a reproduced figure with a published one.

Derivation (written out in fixtures/TOLERANCES.md): we reproduce the published
seeds, so seed-to-seed spread is not a source of disagreement; what remains is
(1) the published figure's rounding, half a unit in its last printed digit, and
(2) the float order of the computation. Training is chaotic for some nets and seeds:
the same recipe in another valid order ends at a different net. scripts/derive_tolerances.py
measures, per net, figure and seed, the standard deviation sigma_order of that seed's
figure across the valid orders the verdicts use (fixtures/computation_order_spread.json).
A figure of one seed is allowed K_SIGMA * sigma_order; a mean over seeds, whose order
noise is independent per seed, K_SIGMA times the sd of the mean.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

K_SIGMA = 3.0
SPREAD_FILE = Path(__file__).resolve().parent.parent / "fixtures" / "computation_order_spread.json"


def half_unit(printed: str) -> float:
    """Half a unit in the last digit of a figure as printed: "0.25" -> 0.005, "125" -> 0.5."""
    exponent = Decimal(printed.strip().lstrip("+-")).as_tuple().exponent
    if not isinstance(exponent, int):
        raise ValueError(f"not a finite printed number: {printed!r}")
    return 0.5 * 10.0**exponent


@functools.cache
def _spreads() -> dict[str, dict[str, dict[str, float]]]:
    return json.loads(SPREAD_FILE.read_text())["sigma_order"]


def sigma_order(net: str, figure: str, seed: int) -> float:
    """Standard deviation of seed `seed`'s `figure` of `net` across the valid float orders."""
    try:
        return float(_spreads()[net][figure][str(seed)])
    except KeyError:
        raise KeyError(
            f"no computation-order spread for {net!r} {figure!r} seed {seed} in {SPREAD_FILE}; "
            "re-derive it (fixtures/TOLERANCES.md)"
        ) from None


def mean_sigma(net: str, figure: str, seeds: Sequence[int]) -> float:
    """Float-order sd of the mean of `figure` of `net` over `seeds` (independent per seed)."""
    if not seeds:
        raise ValueError("a mean over no seeds has no order noise")
    return math.sqrt(sum(sigma_order(net, figure, s) ** 2 for s in seeds)) / len(seeds)


def reproduction_tolerance(
    figure: str, printed: str, *, net: str, seeds: Sequence[int], scale: float = 1.0
) -> float:
    """Allowed |measured - published| for the mean over `seeds` of `net`'s `figure`, printed
    as `printed`.

    Args:
      figure: the name of the figure in the spread file (e.g. "ece", "auroc.kmax").
      printed: the published figure as printed, for its rounding.
      net: the net whose figure it is ("yat" or "relu").
      seeds: the seeds the figure averages (one for a single seed's figure).
      scale: unit conversion from the spread file to the printed unit (100 for percent).
    """
    return half_unit(printed) + K_SIGMA * scale * mean_sigma(net, figure, seeds)
