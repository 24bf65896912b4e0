"""Evidence recorded on claims across machines (`sensitive=` on a spec, docs/VERDICTS.md).

Kept out of the experiments' import closure: editing a record's wording must not change the
cache keys of trained results.
"""

from __future__ import annotations

NARROW_VECTORS_FLAG = "--xla_cpu_max_isa=SSE4_2"
"""XLA_FLAGS that make a CPU compute with 128-bit vectors: another valid float order on the
same machine, and a stand-in for another machine (`make order-check`)."""


HOST = "2-core AMD EPYC CPU, 2026-12-02"
"""Where the records of this suite's two documents were last re-derived."""


def seen_sensitive(default: str, narrow: str, *, on: str, elsewhere: str | None = None) -> str:
    """The evidence of a recorded order sensitivity (`sensitive=` on a claim spec): how the
    claim fared, with its figures, in one machine's default orders (`default`) and with
    `NARROW_VECTORS_FLAG` (`narrow`), the machine and date `on`; `elsewhere`, what another
    machine measured."""
    text = (
        f"in the default orders {default}; with 128-bit vectors ({NARROW_VECTORS_FLAG}) "
        f"{narrow} ({on})"
    )
    return f"{text}; {elsewhere}" if elsewhere else text
