"""Where a run came from, for audit.json's `metadata` (None: unknown)."""

from __future__ import annotations

import hashlib
import platform
import re
import subprocess
import sys
import time
import tomllib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from .. import __name__ as ENGINE
from .. import __version__
from ..render.documents import Document, Source

LOCK_FILE = "requirements.lock"


def installed_version(distribution: str) -> str | None:
    """The installed version of `distribution`, None when it is not installed."""
    try:
        return version(distribution)
    except PackageNotFoundError:
        return None


def git_state(root: Path) -> dict[str, Any]:
    """The checkout's `commit` and `dirty` (changed, or an untracked file not ignored)."""
    command = ["git", "-C", str(root), "status", "--porcelain=v2", "--branch"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):  # no git, or a hung one
        done = None
    lines = done.stdout.splitlines() if done and done.returncode == 0 else []
    commit = next((line.split()[2] for line in lines if line.startswith("# branch.oid ")), None)
    if commit is None or commit == "(initial)":
        return {"commit": None, "dirty": None} | ({"no_commit_yet": True} if commit else {})
    return {"commit": commit, "dirty": any(not line.startswith("#") for line in lines)}


def lock_digest(root: Path, lock: str = LOCK_FILE) -> str | None:
    """sha256 of the lock file `lock` at `root`; None when there is none."""
    try:
        return hashlib.sha256((root / lock).read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def installed_versions(root: Path | None, lock: str = LOCK_FILE) -> dict[str, Any]:
    """The installed version of each distribution the lock file pins, and those not as pinned."""
    path = Path(root or "", lock)
    if root is None or not path.is_file():
        return {"installed": None, "differs_from_lock": None}
    pinned = dict(re.findall(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)", path.read_text(), re.MULTILINE))
    installed = {name: installed_version(name) for name in sorted(pinned)}
    differs = sorted(name for name, found in installed.items() if found != pinned[name])
    return {"installed": installed, "differs_from_lock": differs}


NO_ENVIRONMENT: dict[str, Any] = {"metadata": {}, "partial": []}  # what no hook says


def environment_of(config: pytest.Config) -> dict[str, Any]:
    """This process's `pytest_claims_audit_environment` answers, checked and merged."""
    merged = NO_ENVIRONMENT
    for answer in config.hook.pytest_claims_audit_environment(config=config):  # None: dropped
        fields = answer if isinstance(answer, Mapping) else {"": answer}
        partial = fields.get("partial", [])
        if (
            set(fields) - {"metadata", "partial"}
            or not isinstance(fields.get("metadata", {}), dict)
            or not (isinstance(partial, list) and all(isinstance(s, str) for s in partial))
        ):
            raise TypeError(
                f"pytest_claims_audit_environment must return a mapping of 'metadata' (a dict of JSON-able fields) and 'partial' (a list of sentences); got {answer!r}"
            )
        merged = merged_environments(merged, fields)
    return merged


def merged_environments(first: Mapping[str, Any], then: Mapping[str, Any]) -> dict[str, Any]:
    """Two processes' environments as one: mappings merged key by key, `then`'s last."""
    metadata = dict(first["metadata"])
    for name, value in then.get("metadata", {}).items():
        before = metadata.get(name)
        both = isinstance(before, dict) and isinstance(value, dict)
        metadata[name] = {**before, **value} if both else value
    partial = list(dict.fromkeys([*first["partial"], *then.get("partial", [])]))
    return {"metadata": metadata, "partial": partial}


@dataclass(frozen=True)
class Project:
    """The audited project: root, lock file, data read (name -> sha256), method, versions named."""

    root: Path | None = None
    lock: str = LOCK_FILE
    data: Mapping[str, str] = field(default_factory=dict)
    method: str | None = None
    versions: tuple[str, ...] = ()


def project_requirements(root: Path) -> tuple[str, ...]:
    """The [project] dependencies of `root`'s pyproject.toml, but this engine."""
    try:
        with open(root / "pyproject.toml", "rb") as file:
            dependencies = tomllib.load(file).get("project", {}).get("dependencies", [])
        names = [Requirement(d).name for d in dependencies]
    except (OSError, tomllib.TOMLDecodeError, InvalidRequirement, TypeError, AttributeError):
        return ()
    return tuple(n for n in dict.fromkeys(names) if canonicalize_name(n) != "claim-audit")


UNKNOWN_PROJECT = Project()  # no commit, lock or data in its report


def metadata(
    cache_events: list[dict],
    wall_s: float,
    documents: Sequence[Document] = (),
    project: Project = UNKNOWN_PROJECT,
    environment: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """audit.json's `metadata`: versions, platform, provenance, `environment`'s fields, sources."""
    root, added = project.root, dict(environment or {})
    statuses = Counter(e["status"] for e in cache_events)
    return {
        "created_unix": round(time.time(), 1),
        "wall_s": round(wall_s, 2),
        "versions": {
            ENGINE: __version__,
            "python": platform.python_version(),
            **{name: installed_version(name) for name in project.versions},
        },
        "platform": {
            "system": platform.platform(),
            "machine": platform.machine(),
            **added.pop("platform", {}),
        },
        "git": {"commit": None, "dirty": None} if root is None else git_state(root),
        "command": list(sys.argv),
        "device": added.pop("device", None),
        "requirements_lock_sha256": None if root is None else lock_digest(root, project.lock),
        **installed_versions(root, project.lock),
        "data_digests": dict(project.data),
        "method": project.method,
        **added,
        "documents": {d.name: _source(d.source) for d in documents if d.source is not None},
        "cache": {
            "hits": statuses["hit"],
            "computed": statuses["computed"],
            "uncached": statuses["uncached"],
            "events": cache_events,
        },
    }


def _source(source: Source) -> dict[str, Any]:
    """A document's source as audit.json records it: its anchors and headings where given."""
    return {k: v for k, v in asdict(source).items() if v or k not in ("anchors", "headings")}
