"""This project's cache keys: everything of the running environment and of this package that
can change a computed result, added to every entry's key. The cache itself (an entry per
key, checked on read, written atomically, computed once under a lock) is the engine's,
`claim_audit.cache`.

Every entry's key carries, beside what its caller names (a recipe's config, data digests,
seeds, order):
- `package_source`: a digest of this package's whole source (lib/), taken once, at import: a
  process keys results by the code it runs, never by what the files hold later;
- `engine_source`: the same of the engine (`claim_audit`), whose cache writes and reads every
  entry (a change there is never served an entry written before it);
- `versions`: this package's and the numerical stack's (`library_versions`);
- `backend`, `jax_settings`, `xla_flags`: where and how JAX computes (`runtime_key`); the
  backend is the platform the entry is computed on (`accelerator.computing_platform`), so
  a faithful order computed on the host's CPU beside an accelerator is never served as the
  accelerator's, nor the other way round.
An ingredient keyed needlessly costs a recomputation when it changes, never a wrong hit.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
from collections.abc import Callable
from pathlib import Path

from claim_audit.cache import (
    Arrays,
    CacheResult,
    arrays_digest,
    default_cache_dir,
    package_digest,
)
from claim_audit.cache import cached as _cached

from .accelerator import computing_platform
from .jax_facts import jax_settings

__all__ = ["CacheResult", "arrays_digest", "cached", "default_cache_dir", "project_key"]

PACKAGE = __name__.partition(".")[0]
"""This project's import name (its folder is `lib/`)."""
REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE_SOURCE = package_digest(PACKAGE)
"""sha256 of this package's source, taken when this module is first imported."""
ENGINE = "claim_audit"
ENGINE_SOURCE = package_digest(ENGINE)
"""sha256 of the engine's source, taken with PACKAGE_SOURCE."""
# The numerical stack whose versions can change a result (jaxlib: XLA's arithmetic).
STACK = ("jax", "jaxlib", "flax", "optax", "numpy", "scipy", "ml_dtypes")


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
        "backend": computing_platform(),
        "jax_settings": settings,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
    }


def project_key() -> dict:
    """What this project adds to every key: `package_source`, `engine_source` and
    `runtime_key`."""
    return {"package_source": PACKAGE_SOURCE, "engine_source": ENGINE_SOURCE, **runtime_key()}


def cached(name: str, key: dict, compute: Callable[[], Arrays], **options) -> CacheResult:
    """`claim_audit.cache.cached` with `project_key` added to `key`; `options` as there
    (validate, cache_dir)."""
    return _cached(name, {**key, **project_key()}, compute, **options)
