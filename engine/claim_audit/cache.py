"""A disk cache of arrays, one checksummed `.npz` per key, computed once across processes."""

from __future__ import annotations

import functools
import hashlib
import importlib
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

lock_timeout_s = 3600.0  # then `cached` computes the entry itself, uncached; see the plugin
_LOCK_NOTICE_S = 5.0  # after this long waiting (at most half the wait), the wait is said

EVENTS: list[dict] = []  # what this process's calls of `cached` did, for the report
project_root: Path | None = None  # the audited project's (pytest's rootdir, set by the plugin)


def default_cache_dir() -> Path:
    """`CLAIMS_CACHE_DIR` if set, else `.cache/` in the audited project (or current folder)."""
    return Path(os.environ.get("CLAIMS_CACHE_DIR") or (project_root or Path.cwd()) / ".cache")


@functools.cache
def package_digest(package: str) -> str:
    """sha256 over the `.py` files of the importable `package` (names and bytes), once."""
    module = importlib.import_module(package)
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


def progress_writer(line: str) -> None:
    """Where the cache's progress lines go (the plugin sets one that bypasses capture)."""
    print(line, file=sys.stderr, flush=True)


def _say(message: str) -> None:
    progress_writer(f"[claims] {message}")


def _read(path: Path, key_text: str, validate: Callable[[Arrays], None] | None) -> Arrays | None:
    """The entry's arrays if the file is complete, of this key and valid, else None (said)."""
    try:
        # Not np.load(path): it leaks its handle on a damaged zip. O_NONBLOCK: a FIFO would hang.
        with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                _say(f"cache entry {path.name} is not a regular file; recomputing")
                return None
            with np.load(handle, allow_pickle=False) as npz:
                arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        _say(f"cache entry {path.name} unreadable ({type(error).__name__}); recomputing")
        return None
    stored_key, stored_sum = (arrays.pop(f, np.array(None)) for f in (_KEY_FIELD, _CHECKSUM_FIELD))
    if stored_key.shape != () or str(stored_key.item()) != key_text:  # 0-d text, as written
        _say(f"cache entry {path.name} belongs to another configuration; recomputing")
        return None
    if stored_sum.shape != () or str(stored_sum.item()) != arrays_digest(arrays):
        _say(f"cache entry {path.name} fails its checksum; recomputing")
        return None
    try:
        if validate is not None:
            validate(arrays)
    except ValueError as error:
        _say(f"cache entry {path.name} has unexpected contents ({error}); recomputing")
        return None
    return arrays


def _write(path: Path, key_text: str, arrays: Arrays) -> None:
    # A killed writer leaves its temporary file; we hold the entry's lock, so any such is stale.
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        stale.unlink(missing_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            key, checksum = np.array(key_text), np.array(arrays_digest(arrays))
            np.savez(handle, **arrays, **{_KEY_FIELD: key, _CHECKSUM_FIELD: checksum})
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def lock_holder(path: str | Path) -> str:
    """Who holds the flock on `path`, from Linux's /proc/locks: "process PID (command)"."""
    try:
        found = os.stat(path)
        where = f"{os.major(found.st_dev):02x}:{os.minor(found.st_dev):02x}:{found.st_ino}"
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()  # "1: FLOCK  ADVISORY  WRITE 6558 fe:00:2149005 0 EOF"
            if fields[1:2] == ["FLOCK"] and fields[5:6] == [where]:  # a waiter has "->"
                command = Path(f"/proc/{fields[4]}/cmdline").read_bytes().replace(b"\0", b" ")
                return f"process {fields[4]} ({command.decode(errors='replace').strip()[:200]})"
    except (OSError, ValueError):
        pass
    return "another process"


def cached(
    name: str,
    key: dict,
    compute: Callable[[], Arrays],
    *,
    validate: Callable[[Arrays], None] | None = None,
    cache_dir: Path | None = None,
    quiet: bool = False,
) -> CacheResult:
    """`compute()`'s arrays for `key` (JSON: all that changes them), computed at most once;
    `validate` raises ValueError for arrays of the wrong form (a stored entry is recomputed).
    `quiet`: no progress line for a hit or a computation (problems are still said)."""
    key_text = json.dumps({"name": name, **key}, sort_keys=True, separators=(",", ":"))
    directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    path = directory / f"{name}-{hashlib.sha256(key_text.encode()).hexdigest()[:20]}.npz"

    def run(status: str) -> CacheResult:
        start = time.perf_counter()
        if not quiet:
            _say(f"computing {name} ...")
        arrays = compute()
        if validate is not None:
            validate(arrays)
        if not quiet:
            _say(f"computed {name} in {time.perf_counter() - start:.1f} s")
        if status == "computed":
            try:
                _write(path, key_text, arrays)
            except OSError as error:
                _say(f"could not write cache entry {path} ({error}); result not cached")
                status = "uncached"
        EVENTS.append(
            {"entry": name, "status": status, "seconds": round(time.perf_counter() - start, 3)}
        )
        return CacheResult(arrays, status, path)

    lock = FileLock(str(path) + ".lock")
    notice = min(_LOCK_NOTICE_S, lock_timeout_s / 2)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        try:
            lock.acquire(timeout=notice)
        except Timeout:
            _say(
                f"waiting for {name}: {lock.lock_file} is held by {lock_holder(lock.lock_file)} (computing it?); waiting at most {lock_timeout_s:g} s"
            )
            lock.acquire(timeout=lock_timeout_s - notice)
    except OSError as error:  # Timeout is one too
        why = f"cache folder {directory} is not writable ({error})"
        if isinstance(error, Timeout):
            why = f"{lock.lock_file} has been held by {lock_holder(lock.lock_file)} for {lock_timeout_s:g} s"
        _say(f"{why}; running without a cache")
        return run("uncached")
    try:
        arrays = _read(path, key_text, validate) if path.exists() else None
        if arrays is None:
            return run("computed")
        if not quiet:
            _say(f"cache hit: {name}")
        EVENTS.append({"entry": name, "status": "hit", "seconds": 0.0})
        return CacheResult(arrays, "hit", path)
    finally:
        lock.release()
