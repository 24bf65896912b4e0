"""Evidence recorded on claims across machines (`sensitive=` on a spec, docs/VERDICTS.md).

Kept out of the experiments' import closure: editing a record's wording must not change the
cache keys of trained results.
"""

from __future__ import annotations

NARROW_VECTORS_FLAG = "--xla_cpu_max_isa=SSE4_2"
"""XLA_FLAGS that make a CPU compute with 128-bit vectors: another valid float order on the
same machine, and a stand-in for another machine (`make order-check`)."""


def seen_sensitive(wide: str, narrow: str, *, elsewhere: str | None = None) -> str:
    """The evidence of a recorded order sensitivity (`sensitive=` on a claim spec) from the
    two CPU runs of 2026-12-02: how the claim fared, with its figures, in the orders computed
    with AVX-512 vectors (`wide`) and with `NARROW_VECTORS_FLAG` (`narrow`); `elsewhere`,
    what another machine measured."""
    text = (
        f"with AVX-512 vectors {wide}; with SSE4.2 vectors ({NARROW_VECTORS_FLAG}) {narrow} "
        "(2-core CPU, 2026-12-02)"
    )
    return f"{text}; {elsewhere}" if elsewhere else text
