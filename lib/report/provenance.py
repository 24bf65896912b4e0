"""Where a run came from: the code's git commit, the command line, the device, the lock file.

Part of audit.json's `metadata`, so that two reports can be compared (`python -m lib.report
diff`). Every field is None where it cannot be known (no git, not a checkout, no lock file):
a report is still written, it just says less.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
LOCK_FILE = "requirements.lock"
_GIT_TIMEOUT_S = 10


def _git(*args: str, root: Path) -> str | None:
    """stdout of `git -C root args`, or None when git is missing, fails or hangs."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args],
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def git_state(root: Path = REPO_ROOT) -> dict[str, Any]:
    """`{"commit": sha or None, "dirty": bool or None}` of the checkout at `root`.

    Dirty means tracked files differ from the commit or untracked files that git does not
    ignore exist (either can change what the run computed). Outside a checkout both are None.
    """
    commit = _git("rev-parse", "--verify", "HEAD", root=root)
    if commit is None:
        return {"commit": None, "dirty": None}
    status = _git("status", "--porcelain", root=root)
    return {"commit": commit.strip(), "dirty": None if status is None else bool(status.strip())}


def lock_digest(root: Path = REPO_ROOT) -> str | None:
    """sha256 of `requirements.lock`'s bytes at `root`, or None when there is no such file."""
    path = root / LOCK_FILE
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def installed_versions(root: Path = REPO_ROOT) -> dict[str, Any]:
    """The installed version of every distribution `requirements.lock` pins, and the names
    whose installed version is not the pinned one (None where there is no lock file)."""
    path = root / LOCK_FILE
    if not path.is_file():
        return {"installed": None, "differs_from_lock": None}
    pinned = dict(re.findall(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)", path.read_text(), re.MULTILINE))
    installed = {}
    for name in sorted(pinned):
        try:
            installed[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            installed[name] = None
    differs = sorted(name for name, version in installed.items() if version != pinned[name])
    return {"installed": installed, "differs_from_lock": differs}


def device() -> dict[str, Any] | None:
    """The JAX backend and its devices: `{"backend", "count", "kinds"}` (kinds sorted, unique),
    or None when the run never imported JAX (the report does not import it for a project
    whose tests do not use it)."""
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    devices = jax.devices()
    return {
        "backend": jax.default_backend(),
        "count": len(devices),
        "kinds": sorted({d.device_kind for d in devices}),
    }


def provenance(root: Path = REPO_ROOT) -> dict[str, Any]:
    """The run's provenance for audit.json's metadata."""
    return {
        "git": git_state(root),
        "command": list(sys.argv),
        "device": device(),
        "requirements_lock_sha256": lock_digest(root),
        **installed_versions(root),
    }
