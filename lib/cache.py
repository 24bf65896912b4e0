"""This project's cache keys, and the store its results are kept in.

Where a result is kept is its user's choice, not the library's: `keep_results_in(store)`
names the store, a function `store(name, key, compute, **options)` that returns the entry
(its `arrays` and `status`), computing it at most once. The audit's store is the engine's
disk cache (its `cached`), which the root conftest.py and the scripts name.
With no store named, `cached` computes each result each time.

Every entry's key carries, beside what its caller names (a recipe's config, data digests,
seeds, order):
- `package_source`: a digest of this package's whole source (lib/), taken once, at import: a
  process keys results by the code it runs, never by what the files hold later;
- `versions`: this package's and the numerical stack's (`library_versions`);
- `backend`, `jax_settings`, `xla_flags`: where and how JAX computes (`runtime_key`); the
  backend is the platform the entry is computed on (`accelerator.computing_platform`), so
  a faithful order computed on the host's CPU beside an accelerator is never served as the
  accelerator's, nor the other way round.
What computes a result outside lib/ keys its own source (claims/calibration/bootstrap.py).
An ingredient keyed needlessly costs a recomputation when it changes, never a wrong hit.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from .jax_facts import jax_settings
from .placement import where

__all__ = ["Entry", "cached", "keep_results_in", "project_key"]

Arrays = dict[str, np.ndarray]
PACKAGE = __name__.partition(".")[0]
"""This project's import name (its folder is `lib/`)."""
# The numerical stack whose versions can change a result (jaxlib: XLA's arithmetic).
STACK = ("jax", "jaxlib", "flax", "optax", "numpy", "scipy", "ml_dtypes")


def source_digest(folder: Path) -> str:
    """sha256 over the source of the package in `folder`: every `.py` file under it, its
    relative name and bytes."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.py")):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


PACKAGE_SOURCE = source_digest(Path(__file__).parent)
"""sha256 of this package's source, taken when this module is first imported."""


class Entry(Protocol):
    """A result as a store gives it: its arrays, and how they were obtained ("hit",
    "computed" or "uncached")."""

    arrays: Arrays
    status: str


@dataclass(frozen=True)
class Computed:
    """A result computed with no store to keep it in."""

    arrays: Arrays
    status: str = "uncached"


Store = Callable[..., Entry]
_store: Store | None = None


def keep_results_in(store: Store | None) -> None:
    """Keep every result `cached` computes from now on in `store` (None: in none)."""
    global _store
    _store = store


def library_versions() -> dict[str, str]:
    """Versions of this package and of the numerical stack (`STACK`)."""
    return dict(_library_versions())  # a copy: a caller cannot change the next one's


@functools.cache
def _library_versions() -> dict[str, str]:
    """Read once per process: the installed distributions do not change under it."""
    from . import __version__

    return {PACKAGE: __version__, **{name: importlib.metadata.version(name) for name in STACK}}


def runtime_key() -> dict:
    """What of the running environment can change a result: the library versions, the
    platform this thread computes on, JAX's settings, and XLA_FLAGS (flags can change the
    arithmetic)."""
    import jax  # noqa: F401  (jax_settings reads the settings of an imported JAX only)

    # jax_platforms only says which platforms a process may use; `backend` is the one used.
    settings = {k: v for k, v in jax_settings().items() if k != "jax_platforms"}
    return {
        "versions": library_versions(),
        "backend": where().platform,
        "jax_settings": settings,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }


def project_key() -> dict:
    """What this project adds to every key: `package_source` and `runtime_key`."""
    return {"package_source": PACKAGE_SOURCE, **runtime_key()}


def cached(
    name: str,
    key: dict,
    compute: Callable[[], Arrays],
    *,
    validate: Callable[[Arrays], None] | None = None,
    **options: Any,
) -> Entry:
    """The arrays of `compute`, from the store `keep_results_in` named, under `key` with
    `project_key` added; `validate` raises ValueError for arrays of the wrong names or
    shapes (a stored entry failing it is recomputed), `options` go to the store (e.g. the
    engine cache's `cache_dir`). With no store, computed (and validated) here."""
    if _store is None:
        arrays = compute()
        if validate is not None:
            validate(arrays)
        return Computed(arrays)
    return _store(name, {**key, **project_key()}, compute, validate=validate, **options)
