"""Whether JAX can start under this environment, asked before a run starts its workers.

XLA aborts a process on an unknown flag in XLA_FLAGS, so every xdist worker died (exit 5,
no table) without the flag named; JAX_PLATFORMS=cuda without a visible GPU fails with a
bare AssertionError in every claim. A child process tries first, and its last words name
the cause.
"""

from __future__ import annotations

import subprocess
import sys

# No speed piece: an error check, only where XLA_FLAGS or JAX_PLATFORMS hold more than the
# suite's own, so TARGETS["audit.cold_s"] never pays for it.
_PROBE = """
import jax
try:
    jax.default_backend()
except AssertionError:
    raise SystemExit("no device of the platform JAX_PLATFORMS names is visible") from None
"""


def jax_start_error(timeout_s: float = 120.0) -> str | None:
    """Why JAX cannot start its backend in a process with this environment; None if it can."""
    try:
        child = subprocess.run(
            [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=timeout_s
        )
    except subprocess.TimeoutExpired:
        return f"starting JAX took more than {timeout_s:g} s"
    if child.returncode == 0:
        return None
    lines = [line for line in child.stderr.splitlines() if line.strip()]
    return lines[-1] if lines else f"the process exited with status {child.returncode}"
