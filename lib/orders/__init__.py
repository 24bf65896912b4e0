"""The valid float orders an experiment is computed in: the documents' own (`FAITHFUL`),
whose figures are the headline ones, and others beside it (another fusion, a batch axis,
float-rounding twins: lib/nudge.py), each a draw of what another valid computation gives."""

from __future__ import annotations

FAITHFUL = "faithful"
"""The name of the documents' own computation order, always the first."""


def twin_batches(n_orders: int | None, batch: int, *, document: str, others: int = 2) -> int:
    """How many whole batches of `batch` float-rounding twins, beside the document's `others`
    orders, give at least `n_orders` orders (None: one batch)."""
    n = others + batch if n_orders is None else n_orders
    if isinstance(n, bool) or not isinstance(n, int) or n < others + 1:
        raise ValueError(
            f"the {document} audit needs at least {others + 1} orders; got {n_orders!r}"
        )
    return -(-(n - others) // batch)
