"""One experiment's results in several valid float orders, the documents' own first.

A chaotic training computed in another valid float order (another fusion, another
reduction order, a batch axis, a one-ulp twin of the initial weights) ends elsewhere. A claim is judged on every order (engine/claim_audit/engine/claim.py): it *holds* or is *refuted*
only when every order agrees; otherwise its verdict depends on the order (*sensitive*).
The faithful order's figures are the headline ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

FAITHFUL = "faithful"

R = TypeVar("R")
S = TypeVar("S")


def twin_batches(n_orders: int | None, batch: int, *, document: str, others: int = 2) -> int:
    """How many whole batches of `batch` float-rounding twins, beside the document's `others`
    orders, give at least `n_orders` orders (None: one batch)."""
    n = others + batch if n_orders is None else n_orders
    if isinstance(n, bool) or not isinstance(n, int) or n < others + 1:
        raise ValueError(
            f"the {document} audit needs at least {others + 1} orders; got {n_orders!r}"
        )
    return -(-(n - others) // batch)


class Orders(Mapping[str, R], Generic[R]):
    """Read-only mapping order name -> results, starting with `FAITHFUL`."""

    def __init__(self, results: Mapping[str, R]):
        names = list(results)
        if not names or names[0] != FAITHFUL:
            raise ValueError(f"the first order must be {FAITHFUL!r}; got {names}")
        self._results = dict(results)

    @property
    def faithful(self) -> R:
        """The results in the documents' own computation order."""
        return self._results[FAITHFUL]

    def map(self, compute: Callable[[R], S]) -> Orders[S]:
        """`compute` applied to each order's value, under the same order names."""
        return Orders({name: compute(value) for name, value in self._results.items()})

    def __getitem__(self, name: str) -> R:
        return self._results[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._results)

    def __len__(self) -> int:
        return len(self._results)

    def __repr__(self) -> str:
        return f"Orders({list(self._results)})"
