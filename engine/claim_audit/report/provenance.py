"""Where a run came from: the audited project's git commit, its lock file and data, the
command line (the device and the numerical stack's settings are the project's to tell:
`pytest_claims_audit_environment`, claim_audit.report.hooks).

Part of audit.json's `metadata`, so that two reports can be compared (`python -m claim_audit.report
diff`). Every field is None where it cannot be known (no git, not a checkout, no lock file):
a report is still written, it just says less. The project is the one pytest audits (its
rootdir), never the engine's own checkout.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
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


NO_ENVIRONMENT: dict[str, Any] = {"metadata": {}, "partial": []}
"""What a process without a `pytest_claims_audit_environment` implementation says."""


def environment_of(config: pytest.Config) -> dict[str, Any]:
    """This process's `pytest_claims_audit_environment` answers (claim_audit.report.hooks),
    checked and merged: `{"metadata": {...}, "partial": [...]}`."""
    merged = NO_ENVIRONMENT
    for answer in config.hook.pytest_claims_audit_environment(config=config):
        if answer is None:
            continue
        metadata, partial = answer.get("metadata", {}), answer.get("partial", [])
        if (
            set(answer) - {"metadata", "partial"}
            or not isinstance(metadata, dict)
            or not isinstance(partial, list)
            or not all(isinstance(sentence, str) for sentence in partial)
        ):
            raise TypeError(
                "pytest_claims_audit_environment must return a mapping of 'metadata' (a dict "
                f"of JSON-able fields) and 'partial' (a list of sentences); got {answer!r}"
            )
        merged = merged_environments(merged, {"metadata": metadata, "partial": partial})
    return merged


def merged_environments(first: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """Two processes' environments as one: a metadata field that is a mapping in both merged
    key by key (`then`'s last), any other field `then`'s; each partial sentence once."""
    metadata = dict(first["metadata"])
    for name, value in then.get("metadata", {}).items():
        before = metadata.get(name)
        both = isinstance(before, dict) and isinstance(value, dict)
        metadata[name] = {**before, **value} if both else value
    partial = list(dict.fromkeys([*first["partial"], *then.get("partial", [])]))
    return {"metadata": metadata, "partial": partial}


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
        "requirements_lock_sha256": lock,
        **versions,
        "data_digests": dict(project.data),
        "method": project.method,
    }
