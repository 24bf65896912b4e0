"""Compiled XLA programs kept on disk between runs (JAX's persistent compilation cache).

On a CPU, compiling the training programs costs more than running them (the uncertainty
recipe: ~8 s to compile, under 1 s to run), and every fresh process - each pytest-xdist
worker, each child process a fault test starts - compiled them again. JAX can keep the
executables on disk, keyed by the program, its compile options, the jax/jaxlib versions
and the device, so a changed program or library never meets an old entry. A loaded
executable is the machine code a fresh compile would produce; results do not change.

An entry is zlib-compressed (checksummed): a truncated or corrupted file fails to
decompress, JAX warns and compiles afresh - it never runs a broken program
(claims/test_compile_cache.py). Results, not programs, stay in `lib.cache`.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from lib.cache import default_cache_dir

FOLDER_VARIABLE = "JAX_COMPILATION_CACHE_DIR"
SWITCH_VARIABLE = "CLAIMS_COMPILATION_CACHE"
# Least recently used entries go beyond this size; the suite's programs take ~20 MB.
MAX_SIZE_BYTES = 2 * 1024**3


def enable_compilation_cache(cache_dir: Path | None = None) -> Path | None:
    """Turn on JAX's compilation cache for this process and the processes it starts.

    The folder is `$JAX_COMPILATION_CACHE_DIR` when set (so child processes share their
    parent's), else `<cache_dir or default_cache_dir()>/xla`. Every program is kept, however
    quick to compile: the many small ones add up to seconds per process. Returns the folder,
    or None when `CLAIMS_COMPILATION_CACHE=0` or the folder cannot be written (then programs
    are compiled in each process, as without this cache).
    """
    if os.environ.get(SWITCH_VARIABLE, "1") == "0":
        return None
    folder = Path(os.environ.get(FOLDER_VARIABLE) or (cache_dir or default_cache_dir()) / "xla")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError:
        return None
    settings = {
        "jax_compilation_cache_dir": str(folder),
        "jax_persistent_cache_min_compile_time_secs": 0.0,
        "jax_persistent_cache_min_entry_size_bytes": 0,
        # A size limit also makes JAX lock the folder around reads and writes.
        "jax_compilation_cache_max_size": MAX_SIZE_BYTES,
    }
    # jax reads the environment when imported; a process that imported it already (and any
    # child it starts) needs both. Importing jax here would cost a plain CLI run ~1 s.
    jax = sys.modules.get("jax")
    for name, value in settings.items():
        os.environ[name.upper()] = str(value)
        if jax is not None:
            jax.config.update(name, value)
    return folder
