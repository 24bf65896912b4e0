"""A computation in the CPU's other arithmetic, for draws that sample more than one.

The float-rounding twins of one machine cluster around that machine's own run: another
machine, whose XLA emits other vector instructions, starts them from another point, and a
figure can sit in one cluster and not the other (docs/VERDICTS.md, "One machine's orders are
not all the orders"). So part of a batch of twins is computed in a child process whose XLA
uses other vectors: 128-bit ones (`NARROW_VECTORS_FLAG`) where this process uses the
machine's widest, the widest where this process is held to 128 bits. XLA reads its flags
once per process, hence the child. It compiles afresh: JAX's persistent program cache is
not enabled there, so no program compiled for this process's vectors is served to it.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from ..numerics import NARROW_VECTORS_FLAG
from ._child import in_cpu_child, stoppable
from ._devices import carry_placement, computing_platform, on_host, on_the_host

ISA_FLAG, NARROW_ISA = NARROW_VECTORS_FLAG.split("=", 1)
# XLA_FLAGS' words as XLA splits them: at spaces outside double quotes (--xla_dump_to="a b")
_XLA_WORD = re.compile(r'(?:[^\s"]|"[^"]*")+')
T = TypeVar("T")
U = TypeVar("U")


def other_flags(flags: str) -> str:
    """XLA_FLAGS for the other arithmetic: `flags` (each other word as written, quotes kept)
    with the machine's widest vectors where `flags` hold XLA to 128-bit ones (its last
    `--xla_cpu_max_isa`, which XLA takes, is `NARROW_VECTORS_FLAG`'s), else with
    `NARROW_VECTORS_FLAG`: a cap at AVX2 (or an ISA XLA ignores) leaves wider vectors than
    128 bits, and on some machines the same bits as none."""
    words = _XLA_WORD.findall(flags)
    kept = [w for w in words if w.split("=", 1)[0] != ISA_FLAG]
    isas = [w.split("=", 1)[-1].strip('"').upper() for w in words if w not in kept]
    narrow_here = bool(isas) and isas[-1] == NARROW_ISA
    return " ".join(kept if narrow_here else [*kept, NARROW_VECTORS_FLAG])


def in_other_arithmetic(function: Callable[..., Any], *args: Any) -> Any:
    """`function(*args)` computed on the CPU in a child process with `other_flags`
    (`in_cpu_child`: the function must be importable by name).

    Raises:
      RuntimeError: the child failed (its last lines of stderr say why).
    """
    flags = other_flags(os.environ.get("XLA_FLAGS", ""))
    return in_cpu_child(
        function, *args, xla_flags=flags, what=f" in the other arithmetic ({flags!r})"
    )


def pooled(
    batched: Callable[[Sequence[T]], Sequence[U]],
    one_by_one: Callable[[Sequence[T]], Sequence[U]],
    items: Sequence[T],
) -> list[U]:
    """One result per item, the items' draws pooled over the arithmetics this machine has:
    the first `split_at(n)` computed by `batched` here (beside one accelerator: on the host's
    CPU, in a child process of its own, `on_the_host`), the others beside them in
    the other arithmetic: by `batched` in a child process with `other_flags` on a CPU, by
    `one_by_one` on the accelerator otherwise. `batched` must be importable by name."""

    def other(part: Sequence[T]) -> Sequence[U]:
        if computing_platform() == "cpu":
            return in_other_arithmetic(batched, part)
        return one_by_one(part)

    return halves(functools.partial(on_the_host, batched), other, items)


def halves(
    here: Callable[[Sequence[T]], Sequence[U]],
    other: Callable[[Sequence[T]], Sequence[U]],
    items: Sequence[T],
) -> list[U]:
    """`here` on the first `split_at(n)` items, on the host's CPU, and `other` on the rest
    beside it in a thread of its own; in the items' order."""
    first = split_at(len(items))

    def host_part() -> list[U]:
        if not first:
            return []
        with on_host():
            return list(here(items[:first]))

    task, stop = stoppable(carry_placement(lambda: list(other(items[first:]))))
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="other-arithmetic") as pool:
        pending = pool.submit(task)
        try:
            return [*host_part(), *pending.result()]
        finally:  # here past pytest-timeout's budget, say: leaving waits for no child
            stop.set()


def split_at(n_items: int) -> int:
    """How many of a batch of `n_items` runs are computed in this process's arithmetic (on
    one accelerator: on the host's CPU), the first ones: half, so that a claim which holds
    in one arithmetic and not in the other is seen to depend on it."""
    return n_items // 2
