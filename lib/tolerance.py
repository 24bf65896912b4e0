"""Tolerances for comparing a reproduced figure with a published one.

Derivation (written out in fixtures/TOLERANCES.md): we reproduce the published
seeds, so seed-to-seed spread is not a source of disagreement; what remains is
(1) the published figure's rounding, half a unit in its last printed digit, and
(2) the float order of the computation. Training is chaotic: the same recipe in
another valid order (the documents' per-step loop vs our scan) ends at a slightly
different net. scripts/derive_tolerances.py measures, per figure, the standard
deviation sigma_order of a seed's figure across three valid orders
(fixtures/computation_order_spread.json). A figure of one seed is allowed
K_SIGMA * sigma_order; a mean over n seeds, whose order noise is independent per
seed, K_SIGMA * sigma_order / sqrt(n).
"""

from __future__ import annotations

import functools
import json
import math
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
def sigma_order(figure: str) -> float:
    """Per-seed standard deviation of `figure` across valid computation orders."""
    spreads = json.loads(SPREAD_FILE.read_text())["sigma_order"]
    if figure not in spreads:
        raise KeyError(
            f"no computation-order spread for {figure!r} in {SPREAD_FILE}; known: {sorted(spreads)}"
        )
    return float(spreads[figure])


def reproduction_tolerance(
    figure: str, printed: str, *, n_seeds: int = 1, scale: float = 1.0
) -> float:
    """Allowed |measured - published| for a figure printed as `printed`.

    Args:
      figure: the name of the figure in the spread file (e.g. "ece", "auroc.kmax").
      printed: the published figure as printed, for its rounding.
      n_seeds: how many seeds the figure averages (1 for a single seed's figure).
      scale: unit conversion from the spread file to the printed unit (100 for percent).
    """
    return half_unit(printed) + K_SIGMA * scale * sigma_order(figure) / math.sqrt(n_seeds)
