"""Where a run came from: the audited project's git commit, its lock file and data, the
command line, the device.

Part of audit.json's `metadata`, so that two reports can be compared (`python -m claim_audit.report
diff`). Every field is None where it cannot be known (no git, not a checkout, no lock file):
a report is still written, it just says less. The project is the one pytest audits (its
rootdir), never the engine's own checkout.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

LOCK_FILE = "requirements.lock"
_GIT_TIMEOUT_S = 10
ENGINE_DISTRIBUTION = "claim-audit"


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


def git_state(root: Path) -> dict[str, Any]:
    """`{"commit": sha or None, "dirty": bool or None}` of the checkout at `root`.

    Dirty means tracked files differ from the commit or untracked files that git does not
    ignore exist (either can change what the run computed). Outside a checkout both are None;
    in a repository with no commit yet, `commit` is None and `no_commit_yet` True.
    """
    commit = _git("rev-parse", "--verify", "HEAD", root=root)
    if commit is None:
        inside = _git("rev-parse", "--is-inside-work-tree", root=root)
        return {"commit": None, "dirty": None} | (
            {"no_commit_yet": True} if (inside or "").strip() == "true" else {}
        )
    status = _git("status", "--porcelain", root=root)
    return {"commit": commit.strip(), "dirty": None if status is None else bool(status.strip())}


def lock_digest(root: Path, lock: str = LOCK_FILE) -> str | None:
    """sha256 of the lock file `lock`'s bytes at `root`, or None when there is no such file."""
    path = root / lock
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def installed_versions(root: Path, lock: str = LOCK_FILE) -> dict[str, Any]:
    """The installed version of every distribution the lock file pins (`name==version`
    lines, as pip writes them), and the names whose installed version is not the pinned one
    (None where there is no lock file)."""
    path = root / lock
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


# jax.config options that cannot change a computed number: where compiled programs are kept
# and what is logged or dumped.
_NEUTRAL_JAX_OPTIONS = (
    "compilation_cache",
    "persistent_cache",
    "explain_cache",
    "_log_",
    "_logging_",
    "_dump",
    "traceback",  # how errors are shown (JAX_TRACEBACK_FILTERING=off), never a number
)


def jax_settings() -> dict[str, bool | int | float | str | None]:
    """Every jax.config option (x64, threefry partitioning, default matmul precision, default
    dtype bits, PRNG implementation, ...) but the neutral ones, as JSON values; {} when this
    process never imported JAX (this module does not import it).

    Taken whole rather than from a list of the options known to matter, so an option that a
    JAX release adds is included too.
    """
    jax = sys.modules.get("jax")
    if jax is None:
        return {}
    return {
        name: value if value is None or isinstance(value, bool | int | float | str) else str(value)
        for name, value in sorted(jax.config.values.items())
        if not any(part in name for part in _NEUTRAL_JAX_OPTIONS)
    }


# jax.config options that choose where a run computes, not what: the device is recorded
# (`device`), and the documents' figures are judged on any device (docs/VERDICTS.md).
_WHERE_IT_RUNS = ("jax_platforms", "jax_platform_name", "_visible_devices")


def jax_environment() -> dict[str, Any] | None:
    """The jax.config options set in this process's environment (a `JAX_<OPTION>` variable,
    e.g. JAX_ENABLE_X64=1), with the values JAX took, but those that cannot change a computed
    number (`jax_settings` leaves out where compiled programs are kept and logging; here
    the device is left out too); None when the process
    never imported JAX (this module does not import it).

    Such a setting (x64, a matmul precision, a debug flag, another PRNG) changes the
    documents' computation from outside the project: a run under it is not their audit.
    """
    if "jax" not in sys.modules:
        return None
    settings = jax_settings()  # every option that can change a number, as JSON values
    options = [variable.lower() for variable in os.environ if variable.startswith("JAX_")]
    return {
        option: settings[option]
        for option in sorted(options)
        if option in settings and not any(part in option for part in _WHERE_IT_RUNS)
    }


# A fresh interpreter's jax.config options with no JAX_* variable set, as `jax_settings` gives
# them: JAX's defaults (JAX has no public API for an option's default).
_DEFAULTS_SCRIPT = (
    "import json, jax; from claim_audit.report.provenance import jax_settings; "
    "print(json.dumps(jax_settings()))"
)
_DEFAULTS_TIMEOUT_S = 120


def beyond_jax_defaults(found: dict[str, Any]) -> dict[str, Any]:
    """`found` (a `jax_environment`) less the settings equal to JAX's default: JAX_ENABLE_X64=0
    spelled out cannot change a figure. The defaults are read once, and only when something is
    found, from a child interpreter (this one's Python) whose environment sets no JAX_*
    option; where it cannot tell them (it failed), `found` is kept whole."""
    if not found:
        return found
    env = {k: v for k, v in os.environ.items() if not k.startswith("JAX_")}
    env["JAX_PLATFORMS"] = "cpu"  # where it runs, not an option compared: never opens a chip
    try:
        child = subprocess.run(
            [sys.executable, "-c", _DEFAULTS_SCRIPT],
            env=env,
            capture_output=True,
            text=True,
            timeout=_DEFAULTS_TIMEOUT_S,
        )
        defaults = json.loads(child.stdout) if child.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError):
        defaults = {}
    return {k: v for k, v in found.items() if k not in defaults or defaults[k] != v}


@dataclass(frozen=True)
class Project:
    """The audited project as its report describes it.

    root: its folder (pytest's rootdir); None when nothing is known of it. lock: its lock
    file, relative to `root`. data: the data its documents read, name -> sha256 (the
    `pytest_claims_audit_data` hook). method: where it documents how its claims are judged
    (a path relative to `root`, or a URL; the `claims_audit_method` ini option), or None.
    """

    root: Path | None = None
    lock: str = LOCK_FILE
    data: Mapping[str, str] = field(default_factory=dict)
    method: str | None = None
    versions: tuple[str, ...] = ()


def project_requirements(root: Path) -> tuple[str, ...]:
    """The distributions the project at `root` names as its [project] dependencies in
    pyproject.toml, but this engine (none when there is no such file or table)."""
    try:
        with open(root / "pyproject.toml", "rb") as file:
            dependencies = tomllib.load(file).get("project", {}).get("dependencies", [])
        names = [Requirement(d).name for d in dependencies]
    except (OSError, tomllib.TOMLDecodeError, InvalidRequirement, TypeError, AttributeError):
        return ()
    return tuple(n for n in dict.fromkeys(names) if canonicalize_name(n) != ENGINE_DISTRIBUTION)


UNKNOWN_PROJECT = Project()
"""A project nothing is known of: no commit, lock or data in its report."""


def provenance(project: Project) -> dict[str, Any]:
    """The run's provenance for audit.json's metadata."""
    if project.root is None:
        git, lock = {"commit": None, "dirty": None}, None
        versions: dict[str, Any] = {"installed": None, "differs_from_lock": None}
    else:
        git = git_state(project.root)
        lock = lock_digest(project.root, project.lock)
        versions = installed_versions(project.root, project.lock)
    return {
        "git": git,
        "command": list(sys.argv),
        "device": device(),
        "requirements_lock_sha256": lock,
        **versions,
        "data_digests": dict(project.data),
        "method": project.method,
        # XLA's own flags can change a compiled program's arithmetic (fast math, vector
        # widths): recorded, so that `diff` shows a report made under other flags.
        "xla_flags": os.environ.get("XLA_FLAGS"),
    }
