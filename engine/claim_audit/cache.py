"""A disk cache for computed results, safe under pytest-xdist workers and parallel runs.

An entry is one `.npz` file of named numpy arrays. Its file name is the sha256 of a key (a
JSON-able dict naming everything that changes the result: the caller's config, data
digests, versions, a digest of the source that computes it; `package_digest` gives the
last). Inside, the entry carries its own key and a checksum of its arrays, so a truncated,
corrupted, foreign or stale file is detected on read and recomputed, never served. Writes go
to a temporary file in the same folder and are renamed into place (atomic on POSIX); a file
lock makes concurrent processes compute each entry once.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import stat
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from filelock import FileLock, Timeout

Arrays = dict[str, np.ndarray]
_KEY_FIELD = "__key__"
_CHECKSUM_FIELD = "__checksum__"

lock_timeout_s = 3600.0
"""How long `cached` waits for another process's lock on an entry before it computes the
entry itself, uncached. The claims-audit plugin bounds it by a test's budget (--timeout)."""
_LOCK_NOTICE_S = 5.0  # after this long waiting (at most half the wait), the wait is said

# What this process's calls of `cached` did, for the report's metadata.
EVENTS: list[dict] = []


# The audited project's root: set by the claims-audit plugin to pytest's rootdir; None
# outside pytest, where the folder a process was started in stands for it.
_project_root: Path | None = None


def set_project_root(root: Path) -> None:
    """Make `root` the audited project whose `.cache/` `default_cache_dir` names."""
    global _project_root
    _project_root = Path(root)


def default_cache_dir() -> Path:
    """`CLAIMS_CACHE_DIR` if set, else `.cache/` in the audited project's root (pytest's
    rootdir; outside pytest the current folder), never in the engine's own checkout."""
    root = _project_root if _project_root is not None else Path.cwd()
    return Path(os.environ.get("CLAIMS_CACHE_DIR") or root / ".cache")


@functools.cache
def package_digest(package: str) -> str:
    """sha256 over the source of the importable `package`: every `.py` file under its folder
    (relative names and bytes), or a single module's own file. Read once per process: a
    running process does not see its source change."""
    module = sys.modules.get(package) or __import__(package)
    folders = [Path(p) for p in getattr(module, "__path__", [])]
    if folders:
        files = sorted((f.relative_to(d), f) for d in folders for f in d.rglob("*.py"))
    else:
        files = [(Path(module.__file__).name, Path(module.__file__))]
    digest = hashlib.sha256()
    for name, path in files:
        digest.update(Path(name).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _canonical(key: dict) -> str:
    return json.dumps(key, sort_keys=True, separators=(",", ":"))


def arrays_digest(arrays: Mapping[str, np.ndarray]) -> str:
    """sha256 over every array's name, dtype, shape and bytes, in name order."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


@dataclass(frozen=True)
class CacheResult:
    """Arrays of one entry and how they were obtained ("hit", "computed" or "uncached")."""

    arrays: Arrays
    status: str
    path: Path


def _print_to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# Where progress lines go; the pytest plugin swaps in a writer that bypasses output capture.
progress_writer: Callable[[str], None] = _print_to_stderr


def _say(message: str) -> None:
    progress_writer(f"[claims] {message}")


def _text_field(array: np.ndarray | None) -> str | None:
    """A stored 0-d text field; None when missing or laid out otherwise (e.g. another version)."""
    return str(array.item()) if array is not None and array.shape == () else None


def _read(path: Path, key_text: str) -> Arrays | None:
    """The entry's arrays if the file is complete and belongs to this key, else None."""
    try:
        # Open the file ourselves: np.load leaks its handle when the zip is damaged. Without
        # blocking: a FIFO in an entry's place would wait for a writer forever.
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                _say(f"cache entry {path.name} is not a regular file; recomputing")
                return None
            with np.load(handle, allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        _say(f"cache entry {path.name} unreadable ({type(error).__name__}); recomputing")
        return None
    stored_key = _text_field(arrays.pop(_KEY_FIELD, None))
    stored_sum = _text_field(arrays.pop(_CHECKSUM_FIELD, None))
    if stored_key != key_text:
        _say(f"cache entry {path.name} belongs to another configuration; recomputing")
        return None
    if stored_sum != arrays_digest(arrays):
        _say(f"cache entry {path.name} fails its checksum; recomputing")
        return None
    return arrays


def _write(path: Path, key_text: str, arrays: Arrays) -> None:
    buffer = io.BytesIO()
    np.savez(
        buffer,
        **arrays,
        **{_KEY_FIELD: np.array(key_text), _CHECKSUM_FIELD: np.array(arrays_digest(arrays))},
    )
    # A writer killed before its rename leaves its temporary file behind. We hold this entry's
    # lock, so no other writer of it is running: any such file is stale.
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        stale.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(buffer.getvalue())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _holder_pid(path: Path) -> int | None:
    """The pid of the process holding the lock (flock) on file `path`, as Linux's /proc/locks
    tells; None where it cannot tell."""
    try:
        found = os.stat(path)
        where = f"{os.major(found.st_dev):02x}:{os.minor(found.st_dev):02x}:{found.st_ino}"
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()  # "1: FLOCK  ADVISORY  WRITE 6558 fe:00:2149005 0 EOF"
            if fields[1:2] == ["FLOCK"] and fields[5:6] == [where]:  # a waiter has "->"
                return int(fields[4])
    except (OSError, ValueError):
        pass
    return None


def lock_holder(path: Path) -> str:
    """Who holds the lock on file `path`: "process PID (its command line)", else "another
    process"."""
    pid = _holder_pid(path)
    if pid is None:
        return "another process"
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
    except OSError:
        return "another process"
    return f"process {pid} ({command.decode(errors='replace').strip()[:200]})"


def _acquire(lock: FileLock, name: str) -> None:
    """Take `lock`, waiting at most `lock_timeout_s`; a wait longer than a few seconds is
    said, with the lock's holder.

    Raises:
      filelock.Timeout: the lock was not free in time.
    """
    notice = min(_LOCK_NOTICE_S, lock_timeout_s / 2)
    try:
        lock.acquire(timeout=notice)
        return
    except Timeout:
        _say(
            f"waiting for {name}: {lock.lock_file} is held by {lock_holder(Path(lock.lock_file))} "
            f"(computing it?); waiting at most {lock_timeout_s:g} s"
        )
    lock.acquire(timeout=lock_timeout_s - notice)


def _event(name: str, status: str, seconds: float) -> None:
    EVENTS.append({"entry": name, "status": status, "seconds": round(seconds, 3)})


def cached(
    name: str,
    key: dict,
    compute: Callable[[], Arrays],
    *,
    validate: Callable[[Arrays], None] | None = None,
    cache_dir: Path | None = None,
) -> CacheResult:
    """Return the arrays for `key`, computing and storing them at most once.

    Args:
      name: a readable prefix for the entry's file name (e.g. "fit-results").
      key: everything that changes the result; JSON-serialisable. Nothing is added to it:
        the caller names the code, data, versions and settings its result depends on.
      compute: produces the arrays on a miss.
      validate: raises ValueError if arrays have the wrong names or shapes; an
        entry failing it is recomputed.
      cache_dir: defaults to `default_cache_dir()`.
    """
    key_text = _canonical({"name": name, **key})
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path = directory / f"{name}-{hashlib.sha256(key_text.encode()).hexdigest()[:20]}.npz"

    def load() -> Arrays | None:
        if not path.exists():
            return None
        arrays = _read(path, key_text)
        if arrays is not None and validate is not None:
            try:
                validate(arrays)
            except ValueError as error:
                _say(f"cache entry {path.name} has unexpected contents ({error}); recomputing")
                return None
        return arrays

    def run() -> Arrays:
        _say(f"computing {name} ...")
        start = time.perf_counter()
        arrays = compute()
        if validate is not None:
            validate(arrays)
        _say(f"computed {name} in {time.perf_counter() - start:.1f} s")
        return arrays

    try:
        directory.mkdir(parents=True, exist_ok=True)
        lock = FileLock(str(path) + ".lock")
        _acquire(lock, name)
    except OSError as error:  # filelock's Timeout is an OSError too
        holder = lock_holder(Path(lock.lock_file)) if isinstance(error, Timeout) else ""
        if isinstance(error, Timeout):
            why = f"{lock.lock_file} has been held by {holder} for {lock_timeout_s:g} s"
        else:
            why = f"cache folder {directory} is not writable ({error})"
        _say(f"{why}; running without a cache")
        start = time.perf_counter()
        arrays = run()
        _event(name, "uncached", time.perf_counter() - start)
        return CacheResult(arrays, "uncached", path)
    try:
        arrays = load()
        if arrays is not None:
            _say(f"cache hit: {name}")
            _event(name, "hit", 0.0)
            return CacheResult(arrays, "hit", path)
        start = time.perf_counter()
        arrays = run()
        status = "computed"
        try:
            _write(path, key_text, arrays)
        except OSError as error:
            _say(f"could not write cache entry {path} ({error}); result not cached")
            status = "uncached"
        _event(name, status, time.perf_counter() - start)
        return CacheResult(arrays, status, path)
    finally:
        lock.release()
