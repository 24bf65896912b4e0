"""Judges of comparative claims (`Compared`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .effects import Compared
from .verdict import Judgement


def _no_details(_: Any) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class ComparedBeside(Compared):
    """`Compared`, with `beside(what it reads)` recorded next to each order's judgement and
    never judged: e.g. the figures of a reading the claim did not choose."""

    beside: Callable[[Any], dict[str, Any]] = _no_details

    def __call__(self, results: Any, published: Any) -> Judgement:
        judgement = super().__call__(results, published)
        extra = self.beside(self.reads(results))
        return replace(judgement, details={**judgement.details, **extra})
