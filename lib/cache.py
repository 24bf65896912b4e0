"""A disk cache for trained results, safe under pytest-xdist workers and parallel runs.

An entry is one `.npz` file of named numpy arrays. Its file name is the sha256
of a key (a JSON-able dict naming everything that changes the result: recipe
config, data digests, versions, source-code hash). Inside, the entry carries
its own key and a checksum of its arrays, so a truncated, corrupted, foreign or
stale file is detected on read and recomputed, never served. Writes go to a
temporary file in the same folder and are renamed into place (atomic on POSIX);
a file lock makes concurrent processes compute each entry once.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.metadata
import io
import json
import os
import re
import stat
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterable, Mapping
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

PACKAGE = __name__.partition(".")[0]
"""This project's import name (its folder is `lib/`)."""
PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent

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


def source_digest(paths: Iterable[Path]) -> str:
    """sha256 over the given source files (names and bytes), for cache keys."""
    digest = hashlib.sha256()
    for path in sorted(Path(p) for p in paths):
        digest.update(path.relative_to(REPO_ROOT).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _module_file(name: str) -> Path | None:
    top, *parts = name.split(".")
    if top != PACKAGE:
        return None
    base = PACKAGE_DIR.joinpath(*parts)
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)


# This CPython can fail ast.parse run in two threads at once ("SystemError: AST constructor
# recursion depth mismatch"), and `cached` derives its keys in the training threads.
_AST_LOCK = threading.Lock()


@functools.cache
def _imported(path: Path, package: tuple[str, ...]) -> tuple[str, ...]:
    """The modules `path` imports (imports inside functions too), relative ones resolved
    against `package`; read once per process, as its module is imported once."""
    names: list[str] = []
    with _AST_LOCK:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parent = package[: len(package) - node.level + 1] if node.level else []
            base = ".".join([*parent, *filter(None, [node.module])])
            names += [base, *(f"{base}.{alias.name}" for alias in node.names)]
    return tuple(names)


def _closure(module: str) -> tuple[list[Path], set[str]]:
    """The `lib` source files `module` runs (see `lib_sources`), and the top-level names of
    the other modules they import."""
    found: set[Path] = set()
    outside: set[str] = set()
    todo = [module]
    while todo:
        parts = todo.pop().split(".")
        for depth in range(1, len(parts) + 1):  # a module's packages run when it is imported
            name = ".".join(parts[:depth])
            path = _module_file(name)
            if path is None or path in found:
                continue
            found.add(path)
            package = (name if path.name == "__init__.py" else name.rpartition(".")[0]).split(".")
            todo += _imported(path, tuple(package))
        outside |= {name.split(".")[0] for name in todo if name and name.split(".")[0] != PACKAGE}
        todo = [name for name in todo if name.split(".")[0] == PACKAGE]
    return sorted(found), outside


def lib_sources(module: str) -> list[Path]:
    """The source files of `module` and of every `lib` module it imports, directly or not.

    Read statically (imports inside functions count too), so a key digesting these files
    changes with any code its result can depend on; a hand-kept list goes stale. Importing
    more than is used only costs a recomputation.
    """
    return _closure(module)[0]


_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


@functools.cache
def distributions(module: str) -> dict[str, str]:
    """name -> version of every installed distribution the code of `module` runs: those that
    provide the packages its `lib_sources` import (scipy, jax, ...), and everything they
    require, transitively (jax's jaxlib and ml_dtypes). Derived like the source digests, so
    a package a computation starts to import is keyed without anyone listing it; a package
    keyed needlessly only costs a recomputation when its version changes. This project's own
    distribution is left out (its code is digested)."""
    provided = _packages_distributions()
    own = set(provided.get(PACKAGE, ()))
    todo = [dist for name in _closure(module)[1] for dist in provided.get(name, ())]
    versions: dict[str, str] = {}
    while todo:
        found = _distribution(todo.pop())
        if found is None:
            continue  # an optional requirement not installed: it runs nowhere
        name, canonical, version, requires = found
        if canonical in versions or name in own:
            continue
        versions[canonical] = version
        todo += requires
    return dict(sorted(versions.items()))


# Read once per process, as `_library_versions`: the installed distributions do not change
# under a running process, and every computation's key reads them.
@functools.cache
def _packages_distributions() -> dict[str, list[str]]:
    return importlib.metadata.packages_distributions()


@functools.cache
def _distribution(name: str) -> tuple[str, str, str, tuple[str, ...]] | None:
    """(name, canonical name, version, the names it requires outside extras) of the
    installed distribution `name`, or None when it is not installed."""
    try:
        found = importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return None
    metadata = found.metadata
    requires = tuple(
        _REQUIREMENT.match(requirement).group(1)
        for requirement in found.requires or ()
        if "extra ==" not in requirement.partition(";")[2]
    )
    canonical = re.sub(r"[-_.]+", "-", metadata["Name"]).lower()
    return metadata["Name"], canonical, found.version, requires


def library_versions() -> dict[str, str]:
    """Versions of this library and of the core of the numerical stack, for the keys' and
    the report's readers; what keys each entry is `distributions` of its computation's
    module, which `cached` adds to every key."""
    return dict(_library_versions())  # a copy: a caller cannot change the next one's


@functools.cache
def _library_versions() -> dict[str, str]:
    """Read once per process: the installed distributions do not change under it."""
    from . import __version__

    packages = ("jax", "jaxlib", "flax", "optax", "numpy")
    return {PACKAGE: __version__, **{name: importlib.metadata.version(name) for name in packages}}


# jax.config options that cannot change a computed number: where compiled programs are kept
# and what is logged or dumped. The suite sets the first per process (lib/compile_cache.py).
_NEUTRAL_JAX_OPTIONS = (
    "compilation_cache",
    "persistent_cache",
    "explain_cache",
    "_log_",
    "_logging_",
    "_dump",
)


def jax_settings() -> dict[str, bool | int | float | str | None]:
    """Every jax.config option (x64, threefry partitioning, default matmul precision, default
    dtype bits, PRNG implementation, ...) but the neutral ones, as JSON values.

    Taken whole rather than from a list of the options known to matter, so an option that a
    JAX release adds is keyed too: at worst a needless recomputation, never a wrong hit.
    """
    import jax

    return {
        name: value if value is None or isinstance(value, bool | int | float | str) else str(value)
        for name, value in sorted(jax.config.values.items())
        if not any(part in name for part in _NEUTRAL_JAX_OPTIONS)
    }


def runtime_key() -> dict:
    """What of the running environment can change a trained result, for keys: the library
    versions, JAX's backend and settings, and XLA_FLAGS (flags can change the arithmetic)."""
    import jax

    return {
        "versions": library_versions(),
        "backend": jax.default_backend(),
        "jax_settings": jax_settings(),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }


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


def lock_holder(path: Path) -> str:
    """Who holds the lock (flock) on file `path`: "process PID (its command line)" as Linux's
    /proc/locks tells, else "another process"."""
    try:
        found = os.stat(path)
        where = f"{os.major(found.st_dev):02x}:{os.minor(found.st_dev):02x}:{found.st_ino}"
        for line in Path("/proc/locks").read_text().splitlines():
            fields = line.split()  # "1: FLOCK  ADVISORY  WRITE 6558 fe:00:2149005 0 EOF"
            if fields[1:2] == ["FLOCK"] and fields[5:6] == [where]:  # a waiter has "->"
                command = Path(f"/proc/{fields[4]}/cmdline").read_bytes().replace(b"\0", b" ")
                return f"process {fields[4]} ({command.decode(errors='replace').strip()[:200]})"
    except OSError:
        pass
    return "another process"


def _acquire(lock: FileLock, name: str) -> None:
    """Take `lock`, waiting at most `lock_timeout_s`; a wait longer than a few seconds is said,
    with the lock's holder.

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
      name: a readable prefix for the entry's file name (e.g. "calibration-yat").
      key: everything that changes the result; JSON-serialisable.
      compute: produces the arrays on a miss.
      validate: raises ValueError if arrays have the wrong names or shapes; an
        entry failing it is recomputed.
      cache_dir: defaults to `default_cache_dir()`.
    """
    # The packages the computation runs, derived from its module's imports (`distributions`).
    packages = distributions(getattr(compute, "__module__", None) or "")
    key_text = _canonical({"name": name, **key, "distributions": packages})
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
        why = (
            f"{lock.lock_file} has been held by {lock_holder(Path(lock.lock_file))} for "
            f"{lock_timeout_s:g} s"
            if isinstance(error, Timeout)
            else f"cache folder {directory} is not writable ({error})"
        )
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
