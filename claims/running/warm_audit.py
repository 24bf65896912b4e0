"""Whether the cache already holds everything an audit needs, so `-n auto` can skip the workers.

A warm audit only reads the cache and renders the report, and the two xdist workers that
`-n auto` starts on this machine cost more (each imports JAX and every test module) than
they save. After a complete, successful audit (a run selected by the claim and health marks
alone; other tests do their work every run), the controller stamps the cache folder with a
fingerprint of what could make the next identical run compute anything: the selection
(arguments, -m, -k, --seeds), the suite's code and fixtures, the pinned stack (installed
distributions, Python), the environment variables that reach JAX, XLA or the suite, and the
accelerator device nodes. The next `-n auto` run with the same fingerprint runs in one
process (claims/conftest.py). Only the speed depends on this guess, never a result: every
entry is still looked up by its own key, and one missing (deleted by hand, say) is computed
in that one process.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import platform
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from claim_audit import cache

REPO_ROOT = Path(__file__).resolve().parents[2]
STAMP_NAME = "warm-audit.json"
_ENV_PREFIXES = ("JAX_", "XLA_", "CLAIMS_", "TF_", "CUDA_", "NVIDIA_", "TPU_")
# What decides an audit's computation: the code and fixtures it runs, and the stack pins.
_SOURCE_GLOBS = ("lib/**/*.py", "claims/**/*.py", "conftest.py", "fixtures/**/*")
_STACK_FILES = ("pyproject.toml", "requirements.lock")


def fingerprint(selection: Mapping[str, object], root: Path = REPO_ROOT) -> str:
    """A digest of everything that could make a run with `selection` compute anew."""
    digest = hashlib.sha256()
    for path in _source_files(root):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    environment = {
        "selection": dict(selection),
        "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith(_ENV_PREFIXES)},
        "distributions": _distributions(),
        "python": sys.version,
        "machine": platform.machine(),
        "devices": sorted(
            p.name for p in Path("/dev").glob("*") if p.name.startswith(("nvidia", "accel"))
        ),
    }
    digest.update(json.dumps(environment, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def is_warm(taken: str, cache_dir: Path | None = None) -> bool:
    """True when a complete run whose fingerprint was `taken` stamped the cache folder. An
    absent, unreadable or foreign stamp is simply not warm."""
    return taken in _read(cache_dir)


def record_warm(selection: Mapping[str, object], taken: str, cache_dir: Path | None = None) -> None:
    """Stamp the cache folder after a complete, successful run with the fingerprint `taken`
    when it started (the suite's own settings change the environment during the run). The
    stamp keeps the latest fingerprint of each selection (the whole audit, a subset of it)."""
    ours = _selection_id(selection)
    kept = {f: s for f, s in _read(cache_dir).items() if s != ours}
    _write(kept | {taken: ours}, cache_dir)


def forget_warm(selection: Mapping[str, object], cache_dir: Path | None = None) -> None:
    """Withdraw the selection's stamp (a run that failed or stopped early vouches for
    nothing)."""
    ours = _selection_id(selection)
    _write({f: s for f, s in _read(cache_dir).items() if s != ours}, cache_dir)


def _selection_id(selection: Mapping[str, object]) -> str:
    return json.dumps(dict(selection), sort_keys=True, default=str)


def _read(cache_dir: Path | None) -> dict[str, str]:
    """Fingerprint -> selection, from the stamp; {} when there is none or it is damaged."""
    try:
        stamps = json.loads(
            (cache_dir or cache.default_cache_dir()).joinpath(STAMP_NAME).read_text()
        )
    except (OSError, ValueError):
        return {}
    if not isinstance(stamps, dict) or not all(isinstance(v, str) for v in stamps.values()):
        return {}
    return stamps


def _write(stamps: dict[str, str], cache_dir: Path | None) -> None:
    """Written whole, then renamed: a reader sees the old stamp or the new, never half. A
    stamp that cannot be written (a full disk, a folder not writable) is said and skipped: it
    only decides the next run's speed, and the run it ends has already been reported."""
    folder = cache_dir or cache.default_cache_dir()
    partial = folder / f".{STAMP_NAME}.{os.getpid()}.tmp"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial.write_text(json.dumps(stamps, indent=1))
        partial.replace(folder / STAMP_NAME)
    except OSError as error:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        cache.progress_writer(
            f"[claims] cannot stamp the cache as warm ({error}); the next audit starts its workers"
        )


def _source_files(root: Path) -> Iterable[Path]:
    found = {p for pattern in _SOURCE_GLOBS for p in root.glob(pattern) if p.is_file()}
    found |= {root / name for name in _STACK_FILES if (root / name).is_file()}
    return sorted(p for p in found if "__pycache__" not in p.parts)


def _distributions() -> list[str]:
    # a set: one distribution found twice on sys.path (its egg-info in the working folder
    # under `python -m pytest`) is the same stack
    return sorted(
        {f"{d.metadata['Name']}=={d.version}" for d in importlib.metadata.distributions()}
    )
