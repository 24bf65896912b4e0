"""Another valid float order on the same machine, for `make order-check` (docs/VERDICTS.md)."""

from __future__ import annotations

NARROW_VECTORS_FLAG = "--xla_cpu_max_isa=SSE4_2"
"""XLA_FLAGS that make a CPU compute with 128-bit vectors: another valid float order on the
same machine, and a stand-in for another machine (`make order-check`)."""
