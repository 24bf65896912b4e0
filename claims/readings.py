"""A second reading of a claim's words, judged beside the one the claim's verdict judges:
the same sentence counted once, with each reading's verdict and result over every order.

A claim body is handed one order's results at a time; a reading recorded beside it needs
all of them, so it reads the `*_every_order` fixtures (claims/conftest.py), which hold every
order's results in one `EveryOrder` (not an `Orders`, so the engine hands it over whole).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from claim_audit import Region
from claim_audit.engine.share import share_bounds


@dataclass(frozen=True, repr=False)
class EveryOrder:
    """Every float order's results of one document, by order name, the faithful first."""

    results: Mapping[str, Any]

    def __repr__(self) -> str:
        # The order names alone: a failing test's traceback shows this argument, and every
        # order's arrays would take pytest most of a second to format.
        return f"EveryOrder({list(self.results)})"


def reading_over_orders(
    every: EveryOrder,
    statistic: Callable[[Any], float],
    region: Region,
    reading: str,
) -> dict[str, Any]:
    """A reading judged beside a claim: its rule, its value in each order, in how many orders
    the value lies in its region (`holds in k of n orders`), and its verdict by the share
    rule over those orders (never counted in the summary: the sentence is one claim)."""
    values = {name: float(statistic(result)) for name, result in every.results.items()}
    holds = [region.contains(v) for v in values.values()]
    k = sum(holds)
    judged = share_bounds(holds, np.array(list(values.values()))[:, None], [region], ["linear"])
    return {
        "reading": reading,
        "verdict": judged.verdict,
        "share_interval": [judged.low, judged.high],
        "region": str(region),
        "faithful": next(iter(values.values())),
        "range_over_orders": [min(values.values()), max(values.values())],
        "holds_in_orders": f"{k} of {len(values)}",
        "values_per_order": values,
    }
