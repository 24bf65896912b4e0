"""Where this thread computes now, as one record: what the order builders choose by and what
a cache key records."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from . import _arithmetic, _devices

if TYPE_CHECKING:
    from jax.sharding import Mesh

T = TypeVar("T")
U = TypeVar("U")
R = TypeVar("R")


@dataclass(frozen=True)
class Where:
    """The platform this thread's computations run on (`jax.default_device`'s, else JAX's
    default backend) and the mesh a batch of runs is split over (None on one device)."""

    platform: str
    mesh: Mesh | None

    @property
    def arithmetics(self) -> list[str]:
        """Where `spread` with `one_by_one` computes, for the cache keys of what it computes:
        the XLA_FLAGS of the two halves on a CPU, the host CPU and the accelerator on one,
        "mesh" over several devices (where the callers batch everything)."""
        if self.mesh is not None:
            return ["mesh"]
        if self.platform == "cpu":
            flags = os.environ.get("XLA_FLAGS", "")
            return [flags, _arithmetic.other_flags(flags)]
        return ["cpu", self.platform]

    @property
    def backends(self) -> list[str]:
        """Where `spread` without `one_by_one` computes, for the cache keys of what it
        computes."""
        return [self.platform] if self._one_backend else self.arithmetics

    @property
    def _one_backend(self) -> bool:
        return self.platform == "cpu" or self.mesh is not None

    @staticmethod
    def split_at(n_items: int) -> int:
        """How many of a batch of `n_items` runs `spread` computes in this process's arithmetic
        (on one accelerator: on the host's CPU), the first ones: half, so that a claim which
        holds in one arithmetic and not in the other is seen to depend on it."""
        return _arithmetic.split_at(n_items)

    def spread(
        self,
        batched: Callable[[Sequence[T]], Sequence[U]],
        items: Sequence[T],
        one_by_one: Callable[[Sequence[T]], Sequence[U]] | None = None,
    ) -> list[U]:
        """One result per item, the items' draws spread over where this machine computes.

        With `one_by_one`: the first `split_at(n)` by `batched` here (beside one accelerator:
        on the host's CPU, in a child process of its own), the others beside them in the other
        arithmetic: by `batched` in a child process with the other vector width on a CPU, by
        `one_by_one` on the accelerator otherwise. `batched` must be importable by name.

        Without: all by `batched` here on a CPU-only machine or over a mesh; on one
        accelerator split as above between the host's CPU and the chip, batched on both, in
        this process (for work whose child process would cost more than its draws add).
        """
        if one_by_one is not None:
            return _arithmetic.pooled(batched, one_by_one, items)
        if self._one_backend:
            return list(batched(items))
        return _arithmetic.halves(batched, batched, items)

    @staticmethod
    def side_by_side(faithful: Callable[[], T], others: Callable[[], R]) -> tuple[T, R]:
        """`faithful()` and `others()`: one after the other where JAX computes on the CPU,
        else the faithful order on the host's CPU in a thread while this thread keeps the
        accelerator busy with the other orders."""
        return _devices.side_by_side(faithful, others)


def where() -> Where:
    """Where this thread computes now (`Where`)."""
    from ..sharding import default_mesh  # which imports this package's thread hand-over

    return Where(_devices.computing_platform(), default_mesh())
