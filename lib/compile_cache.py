"""Compiled XLA programs kept on disk between runs, each checked against its key on load.

On a CPU, compiling the training programs costs more than running them (the uncertainty
recipe: ~8 s to compile, under 1 s to run), and every fresh process - each pytest-xdist
worker, each child process a fault test starts - compiled them again. JAX can keep the
executables on disk (its persistent compilation cache), keyed by the program, its compile
options, the jax/jaxlib versions and the device.

JAX's own store names a file by its key but keeps nothing inside that ties the bytes to
it: one program's file copied over another's name was loaded and run, and returned the
other program's numbers, which the results cache then stored (still so on the pinned JAX:
tests/test_faults_compile_cache.py `test_jax_own_store_runs_a_swapped_program`). So the suite hands JAX its
own store, `SealedStore`: an entry starts with a marker and sha256(key, program). A file
under another key's name, truncated or damaged fails that check on load; JAX warns "Error
reading persistent compilation cache entry", compiles afresh and the fresh program replaces
the file. A file without the marker (stored by JAX's own store) is compiled afresh and
replaced without a word. Entries are written to a temporary file and renamed into place, so a full disk or a
kill leaves no partial entry; a failed write makes JAX warn "Error writing persistent
compilation cache entry" and the run goes on with the program it compiled, uncached
(tests/test_faults_compile_cache.py).

Only processes that call `enable_compilation_cache()` use the folder. It reaches child
processes as `CLAIMS_COMPILATION_CACHE_DIR`, not as JAX's `JAX_COMPILATION_CACHE_DIR`, so
a process without the check never loads these programs (nor could: the seal is not JAX's
format). Results, not programs, stay in `uncertainty_claims.cache`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import time
from pathlib import Path

from .cache import default_cache_dir

CHECKED_JAX = "0.10.2"
"""The JAX release whose store interface (private: `jax._src.compilation_cache`) the seal
plugs into, and whose own store was seen to serve a swapped file. On any other release no
program is kept on disk: each process compiles its own."""
FOLDER_VARIABLE = "CLAIMS_COMPILATION_CACHE_DIR"
SWITCH_VARIABLE = "CLAIMS_COMPILATION_CACHE"
# Least recently used programs are removed beyond this size; the suite's take ~20 MB.
MAX_SIZE_BYTES = 2 * 1024**3
_SUFFIX = "-cache"
# What a sealed program starts with: a file without it was stored by JAX itself (by this
# suite before the seal, or by another program); it is compiled afresh and replaced.
_MAGIC = b"claims-sealed-program-1\n"
_SEAL_BYTES = hashlib.sha256().digest_size
# A temporary file this old belongs to a killed writer (a write takes milliseconds).
_STALE_TEMP_S = 3600


def _seal(key: str, program: bytes) -> bytes:
    return hashlib.sha256(key.encode() + b"\0" + program).digest()


class SealedStore:
    """A folder of compiled programs for JAX's persistent cache (its `get` / `put`
    interface), each sealed with a digest of its key and bytes."""

    def __init__(self, folder: Path, max_size: int = MAX_SIZE_BYTES):
        self._path = Path(folder)  # the attribute name JAX reads when it logs
        self.max_size = max_size

    def _file(self, key: str) -> Path:
        return self._path / f"{key}{_SUFFIX}"

    def get(self, key: str) -> bytes | None:
        """The program stored under `key`; None if there is none.

        Raises:
          ValueError: the file does not hold the program sealed under `key` (another
            program's file, truncated, damaged); JAX warns and compiles afresh.
        """
        path = self._file(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        if not data.startswith(_MAGIC):
            return None  # not sealed: as if absent (the fresh program replaces it)
        seal = data[len(_MAGIC) : len(_MAGIC) + _SEAL_BYTES]
        program = data[len(_MAGIC) + _SEAL_BYTES :]
        if seal != _seal(key, program):
            raise ValueError(
                f"{path} is not the program sealed under its name (another program's file, "
                "or a truncated or damaged one); compiling afresh"
            )
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: kept longest
        return program

    def put(self, key: str, value: bytes) -> None:
        """Store `value` under `key`: whole or not at all. An OSError (a full disk) is
        raised after the temporary file is removed; JAX warns and goes on."""
        fd, tmp = tempfile.mkstemp(dir=self._path, prefix=f".{key}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(_MAGIC + _seal(key, value))
                handle.write(value)
            os.replace(tmp, self._file(key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._evict()

    def _evict(self) -> None:
        """Remove the least recently used programs beyond `max_size`, and temporary files
        of killed writers. Another process may be evicting too: a file may vanish."""
        entries = []
        for path in self._path.iterdir():
            with contextlib.suppress(FileNotFoundError):
                stat = path.stat()
                if path.name.endswith(".tmp") and stat.st_mtime < time.time() - _STALE_TEMP_S:
                    path.unlink(missing_ok=True)
                elif path.name.endswith(_SUFFIX):
                    entries.append((stat.st_mtime, stat.st_size, path))
        size = sum(entry[1] for entry in entries)
        for _, entry_size, path in sorted(entries):
            if size <= self.max_size:
                break
            path.unlink(missing_ok=True)
            size -= entry_size


def enable_compilation_cache(cache_dir: Path | None = None) -> Path | None:
    """Keep this process's compiled programs in a `SealedStore`, shared with the processes
    it starts that call this too.

    The folder is `$CLAIMS_COMPILATION_CACHE_DIR` when set (a parent's), else
    `<cache_dir or default_cache_dir()>/xla`. Every program is kept, however quick to
    compile: the many small ones add up to seconds per process. Returns the folder, or None
    when `CLAIMS_COMPILATION_CACHE=0`, the folder cannot be written, or this JAX is not
    `CHECKED_JAX` or lacks the interface the store plugs into (then programs are compiled
    in each process).
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
    import jax

    if jax.__version__ != CHECKED_JAX:
        return None
    from jax._src import compilation_cache as jax_cache

    if not (hasattr(jax_cache, "get_file_cache") and hasattr(jax_cache, "reset_cache")):
        return None
    # JAX builds its store through get_file_cache when it first compiles with a cache folder.
    jax_cache.get_file_cache = lambda path: (SealedStore(Path(path)), path)
    jax_cache.reset_cache()  # drop a store built already (a folder set before this call)
    jax.config.update("jax_compilation_cache_dir", str(folder))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    os.environ[FOLDER_VARIABLE] = str(folder)
    return folder
