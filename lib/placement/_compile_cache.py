"""Compiled XLA programs kept on disk between runs: JAX's own persistent compilation cache.

On a CPU, compiling the training programs costs more than running them (the uncertainty
recipe's scan order many times more), and every fresh process - each pytest-xdist
worker, each child process a fault test starts - compiled them again. JAX keeps the
executables on disk, keyed by the program, its compile options, the jax/jaxlib versions and
the device; this module only turns that on, through JAX's public options, in the project's
cache folder. A truncated or damaged entry makes JAX warn "Error reading persistent
compilation cache entry" and compile afresh; a failed write (a full disk) makes it warn
"Error writing persistent compilation cache entry" and go on uncached
(tests/test_compile_cache.py, tests/test_faults_compile_cache.py).

Only processes that call `enable_compilation_cache()` use the folder; it reaches the child
processes they start as `CLAIMS_COMPILATION_CACHE_DIR`. Results, not programs, stay in
`uncertainty_claims.cache`.

The folder has no size bound, as the results beside it have none (`make clean-cache` empties
both): JAX keeps a bound by taking a file lock and reading every entry's size and access
time on each program it stores, and a lock on each it reads, which every process of a run
waits on in turn.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# Pays for itself in scripts/bench.py TARGETS["suite.cold_s"] (every child process compiles).
FOLDER_VARIABLE = "CLAIMS_COMPILATION_CACHE_DIR"
SWITCH_VARIABLE = "CLAIMS_COMPILATION_CACHE"
FOLDER_NAME = "jax-programs"
# How the switch may be spelled (case aside); anything else is refused, not taken as on.
OFF, ON = ("0", "false", "off", "no"), ("1", "true", "on", "yes", "")


def enable_compilation_cache(cache_dir: Path | None = None) -> Path | None:
    """Keep this process's compiled programs on disk, shared with the processes it starts
    that call this too.

    The folder is `$CLAIMS_COMPILATION_CACHE_DIR` when set (a parent's), else
    `<cache_dir>/jax-programs`. Every program is kept, however quick to compile: the many
    small ones add up to seconds per process. Returns the folder, or None when
    `CLAIMS_COMPILATION_CACHE` is 0, false, off or no, when neither names a folder, or when
    the folder cannot be written (then programs are compiled in each process).

    Raises:
      ValueError: `CLAIMS_COMPILATION_CACHE` is none of `OFF` or `ON`.
    """
    switch = os.environ.get(SWITCH_VARIABLE, "1").strip().lower()
    if switch not in OFF + ON:
        raise ValueError(
            f"{SWITCH_VARIABLE}={os.environ[SWITCH_VARIABLE]!r}: expected 1 or 0 (also "
            "true/false, on/off, yes/no)"
        )
    if switch in OFF:
        return None
    named = os.environ.get(FOLDER_VARIABLE)
    if not named and cache_dir is None:
        return None
    folder = Path(named or Path(cache_dir) / FOLDER_NAME)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError:
        return None
    import jax

    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    os.environ[FOLDER_VARIABLE] = str(folder)
    return folder
