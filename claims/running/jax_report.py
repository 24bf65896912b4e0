"""JAX in the audit's report: the claims-audit hook `pytest_claims_audit_environment`
(engine/claim_audit/report/hooks.py), loaded by the root conftest.py.

Each process that ran tests says where its JAX computed (backend and devices), the XLA flags
it ran under (flags can change a compiled program's arithmetic, so `diff` shows a report made
under others), and the jax.config options set from the environment that can change a figure
(lib/jax_facts.py): a run under any of them is not the documents' audit, so it is partial.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from uncertainty_claims.jax_facts import beyond_jax_defaults, device, jax_environment

# The widest vectors XLA's CPU backend may use, by the instruction set named (--xla_cpu_max_isa)
# or found in the CPU's flags: the faithful figures depend on it (docs/VERDICTS.md).
VECTOR_BITS = {"AVX512F": 512, "AVX2": 256, "AVX": 256, "SSE4_2": 128}


def cpu_vector_width(cpuinfo: str, xla_flags: str) -> str | None:
    """The CPU vector width XLA computes with here, e.g. "512 bits (AVX512F)", or None where
    the CPU's flags cannot be read."""
    flags = (
        set(re.search(r"^flags\s*:(.*)$", cpuinfo, re.M)[1].split())
        if "flags" in cpuinfo
        else set()
    )
    found = next((isa for isa in VECTOR_BITS if isa.lower() in flags), None)
    if found is None:
        return None
    capped = re.findall(r"--xla_cpu_max_isa=(\w+)", xla_flags)
    if capped and capped[-1].upper() in VECTOR_BITS:
        cap = capped[-1].upper()
        found = min(found, cap, key=lambda isa: VECTOR_BITS[isa])
    return f"{VECTOR_BITS[found]} bits ({found})"


def _cpuinfo() -> str:
    try:
        return Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return ""


def pytest_claims_audit_environment() -> dict[str, Any]:
    found = device()
    metadata: dict[str, Any] = {
        "device": found,
        "xla_flags": os.environ.get("XLA_FLAGS"),
        "cpu_vector_width": cpu_vector_width(_cpuinfo(), os.environ.get("XLA_FLAGS", "")),
    }
    if found is not None:
        metadata["platform"] = {"jax_backend": found["backend"]}
    settings = jax_environment()
    if settings is None:  # this process never imported JAX
        return {"metadata": metadata}
    settings = beyond_jax_defaults(
        settings
    )  # JAX_ENABLE_X64=0, a default spelled out, changes nothing
    metadata["jax_environment"] = settings
    return {"metadata": metadata, "partial": [_partial_reason(settings)] if settings else []}


def _partial_reason(settings: dict[str, Any]) -> str:
    named = ", ".join(f"{k.upper()} ({k}={v!r})" for k, v in settings.items())
    them = "it" if len(settings) == 1 else "them"
    return (
        f"JAX set from the environment: {named}, which can change the documents' figures; "
        f"unset {them} for their audit"
    )
