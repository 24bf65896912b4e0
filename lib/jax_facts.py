"""What a process's JAX computes with: its backend and devices, the jax.config options that
can change a computed number, and those of them set from the environment (`JAX_*`
variables). Read from a JAX already imported: nothing here imports JAX, so asking costs a
process that never used it nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any


def device() -> dict[str, Any] | None:
    """The JAX backend and its devices: `{"backend", "count", "kinds"}` (kinds sorted, unique),
    or None when this process never imported JAX (this module does not import it)."""
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    devices = jax.devices()
    return {
        "backend": jax.default_backend(),
        "count": len(devices),
        "kinds": sorted({d.device_kind for d in devices}),
    }


# jax.config options that cannot change a computed number: where compiled programs are kept
# and what is logged or dumped.
_NEUTRAL_JAX_OPTIONS = (
    "compilation_cache",
    "persistent_cache",
    "explain_cache",
    "_log_",
    "_logging_",
    "_dump",
    "traceback",  # how errors are shown (JAX_TRACEBACK_FILTERING=off), never a number
)


def jax_settings() -> dict[str, bool | int | float | str | None]:
    """Every jax.config option (x64, threefry partitioning, default matmul precision, default
    dtype bits, PRNG implementation, ...) but the neutral ones, as JSON values; {} when this
    process never imported JAX (this module does not import it).

    Taken whole rather than from a list of the options known to matter, so an option that a
    JAX release adds is included too.
    """
    jax = sys.modules.get("jax")
    if jax is None:
        return {}
    return {
        name: value if value is None or isinstance(value, bool | int | float | str) else str(value)
        for name, value in sorted(jax.config.values.items())
        if not any(part in name for part in _NEUTRAL_JAX_OPTIONS)
    }


# jax.config options that choose where a run computes, not what: the device is recorded
# (`device`), and the documents' figures are judged on any device (docs/VERDICTS.md).
_WHERE_IT_RUNS = ("jax_platforms", "jax_platform_name", "_visible_devices")


def jax_environment() -> dict[str, Any] | None:
    """The jax.config options set in this process's environment (a `JAX_<OPTION>` variable,
    e.g. JAX_ENABLE_X64=1), with the values JAX took, but those that cannot change a computed
    number (`jax_settings` leaves out where compiled programs are kept and logging; here
    the device is left out too); None when the process
    never imported JAX (this module does not import it).

    Such a setting (x64, a matmul precision, a debug flag, another PRNG) changes the
    documents' computation from outside the project: a run under it is not their audit.
    """
    if "jax" not in sys.modules:
        return None
    settings = jax_settings()  # every option that can change a number, as JSON values
    options = [variable.lower() for variable in os.environ if variable.startswith("JAX_")]
    return {
        option: settings[option]
        for option in sorted(options)
        if option in settings and not any(part in option for part in _WHERE_IT_RUNS)
    }


# A fresh interpreter's jax.config options with no JAX_* variable set, as `jax_settings` gives
# them: JAX's defaults (JAX has no public API for an option's default).
_DEFAULTS_SCRIPT = (
    "import json, jax; from uncertainty_claims.jax_facts import jax_settings; "
    "print(json.dumps(jax_settings()))"
)
_DEFAULTS_TIMEOUT_S = 120


def beyond_jax_defaults(found: dict[str, Any]) -> dict[str, Any]:
    """`found` (a `jax_environment`) less the settings equal to JAX's default: JAX_ENABLE_X64=0
    spelled out cannot change a figure. The defaults are read once, and only when something is
    found, from a child interpreter (this one's Python) whose environment sets no JAX_*
    option; where it cannot tell them (it failed), `found` is kept whole."""
    if not found:
        return found
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    env["JAX_PLATFORMS"] = "cpu"  # where it runs, not an option compared: never opens a chip
    try:
        child = subprocess.run(
            [sys.executable, "-c", _DEFAULTS_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            timeout=_DEFAULTS_TIMEOUT_S,
        )
        defaults = json.loads(child.stdout) if child.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError):
        defaults = {}
    return {k: v for k, v in found.items() if k not in defaults or defaults[k] != v}
