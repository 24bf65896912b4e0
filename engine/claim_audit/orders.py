"""One experiment's results in several valid float orders, the documents' own first.

A chaotic training computed in another valid float order (another fusion, another
reduction order, a batch axis, a one-ulp twin of the initial weights) ends elsewhere. Each
order is a draw of what another valid computation gives; a claim is judged on the share of
draws in which it holds, or on the spread of its figures over them
(claim_audit.engine.claim). The faithful order's figures are the headline ones.

An order whose results repeat an earlier one's bit for bit is a copy, not a draw (a
perturbation that did not take): where the experiment gives each order a digest of its
results, copies are counted once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

FAITHFUL = "faithful"

R = TypeVar("R")
S = TypeVar("S")


class Orders(Mapping[str, R], Generic[R]):
    """Read-only mapping order name -> results, starting with `FAITHFUL`."""

    def __init__(self, results: Mapping[str, R], digests: Mapping[str, str] | None = None):
        names = list(results)
        if not names or names[0] != FAITHFUL:
            raise ValueError(f"the first order must be {FAITHFUL!r}; got {names}")
        if digests is not None and set(digests) != set(names):
            raise ValueError(f"digests name the orders {sorted(digests)}, the results {names}")
        self._results = dict(results)
        self.digests: dict[str, str] | None = None if digests is None else dict(digests)

    def copies(self) -> dict[str, str]:
        """Each order whose results repeat an earlier order's bit for bit, by its digest:
        order -> the first order with the same results (empty without digests)."""
        if self.digests is None:
            return {}
        first: dict[str, str] = {}
        repeats = {}
        for name in self._results:
            original = first.setdefault(self.digests[name], name)
            if original != name:
                repeats[name] = original
        return repeats

    @property
    def faithful(self) -> R:
        """The results in the documents' own computation order."""
        return self._results[FAITHFUL]

    def map(self, compute: Callable[[R], S]) -> Orders[S]:
        """`compute` applied to each order's value, under the same order names."""
        return Orders({name: compute(value) for name, value in self._results.items()}, self.digests)

    def __getitem__(self, name: str) -> R:
        return self._results[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._results)

    def __len__(self) -> int:
        return len(self._results)

    def __repr__(self) -> str:
        return f"Orders({list(self._results)})"
