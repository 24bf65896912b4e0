"""claim_audit.report.provenance: the commit, dirty flag and lock digest audit.json records; and
claims/running/jax_report.py, the device, XLA flags and JAX settings this suite adds to them."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from claim_audit.report import provenance

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
        timeout=30,
    )


def test_outside_a_checkout_commit_and_dirty_are_null(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))  # no repo above tmp
    assert provenance.git_state(tmp_path) == {"commit": None, "dirty": None}


def test_without_git_commit_and_dirty_are_null(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no git on PATH
    assert provenance.git_state(Path(__file__).parent) == {"commit": None, "dirty": None}


@needs_git
def test_commit_and_dirty_flag_of_a_checkout(tmp_path):
    git(tmp_path, "init", "-q")
    (tmp_path / "a.py").write_text("x = 1\n")
    git(tmp_path, "add", "a.py")
    git(tmp_path, "commit", "-q", "-m", "first")
    head = subprocess.run(
        ["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    assert provenance.git_state(tmp_path) == {"commit": head, "dirty": False}
    (tmp_path / "a.py").write_text("x = 2\n")
    assert provenance.git_state(tmp_path) == {"commit": head, "dirty": True}
    git(tmp_path, "checkout", "-q", "a.py")
    (tmp_path / "new.py").write_text("")  # untracked and not ignored: could change a run
    assert provenance.git_state(tmp_path)["dirty"] is True


def test_lock_digest_is_the_sha256_of_the_file_or_null(tmp_path):
    assert provenance.lock_digest(tmp_path) is None
    content = b"jax==0.10.2 --hash=sha256:00\n"
    (tmp_path / "requirements.lock").write_bytes(content)
    assert provenance.lock_digest(tmp_path) == hashlib.sha256(content).hexdigest()


def test_provenance_names_the_command_and_no_device(tmp_path):
    """The engine's provenance knows no numerical stack: the device is the project's to say
    (`pytest_claims_audit_environment`)."""
    found = provenance.metadata([], 0.0, project=provenance.Project(root=tmp_path))
    assert list(found)[4:12] == [
        "git",
        "command",
        "device",
        "requirements_lock_sha256",
        "installed",
        "differs_from_lock",
        "data_digests",
        "method",
    ]
    assert isinstance(found["command"], list) and found["command"] and found["device"] is None


def test_the_suite_names_the_device_of_the_jax_it_imported(monkeypatch):
    """This suite's report names the JAX backend and devices a process computed on, and the
    JAX settings from its environment; a process that never imported JAX names no device."""
    import jax
    from running.jax_report import pytest_claims_audit_environment

    said = pytest_claims_audit_environment()["metadata"]
    assert said["device"]["backend"] == jax.default_backend()
    assert said["device"]["count"] >= 1 and said["device"]["kinds"]
    assert said["platform"] == {"jax_backend": jax.default_backend()}
    assert said["jax_environment"] == {}
    monkeypatch.delitem(sys.modules, "jax")
    said = pytest_claims_audit_environment()["metadata"]
    assert said["device"] is None and "platform" not in said and "jax_environment" not in said


def test_provenance_is_the_audited_projects(tmp_path, monkeypatch):
    """Commit, lock, data and method are the project's (its root, its own lock file name),
    never the engine's checkout; a project nothing is known of records none."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    (tmp_path / "pins.txt").write_bytes(b"numpy==0.0.1\n")
    project = provenance.Project(
        root=tmp_path, lock="pins.txt", data={"toy/points": "ab" * 32}, method="docs/HOW.md"
    )
    found = provenance.metadata([], 0.0, project=project)
    assert found["git"] == {"commit": None, "dirty": None}
    assert found["requirements_lock_sha256"] == hashlib.sha256(b"numpy==0.0.1\n").hexdigest()
    assert found["differs_from_lock"] == ["numpy"]
    assert found["data_digests"] == {"toy/points": "ab" * 32}
    assert found["method"] == "docs/HOW.md"
    nothing = provenance.metadata([], 0.0)
    assert nothing["git"] == {"commit": None, "dirty": None}
    assert nothing["requirements_lock_sha256"] is None and nothing["installed"] is None
    assert nothing["data_digests"] == {} and nothing["method"] is None


def test_installed_versions_against_the_lock(tmp_path):
    """Every pinned distribution's installed version is recorded; the ones that differ from
    the pin (another version, not installed) are named."""
    numpy_version = metadata.version("numpy")
    (tmp_path / "requirements.lock").write_text(
        f"numpy=={numpy_version} \\\n    --hash=sha256:00\n"
        "pytest==0.0.1 \\\n    --hash=sha256:00\n"
        "not-a-real-distribution==1.0\n"
    )
    found = provenance.installed_versions(tmp_path)
    assert found["installed"]["numpy"] == numpy_version
    assert found["installed"]["not-a-real-distribution"] is None
    assert found["differs_from_lock"] == ["not-a-real-distribution", "pytest"]
    assert provenance.installed_versions(tmp_path / "nowhere") == {
        "installed": None,
        "differs_from_lock": None,
    }


class _Hooks:
    def __init__(self, answers: list):
        self._answers = answers

    def pytest_claims_audit_data(self, config) -> list:
        return self._answers


class _Config:
    """What `audited_project` reads of a pytest config: the data hook's answers, the rootdir
    and two ini values."""

    def __init__(self, root: Path, answers: list):
        self.hook = _Hooks(answers)
        self.rootpath = root
        self._ini = {
            "claims_audit_lock": "requirements.lock",
            "claims_audit_method": "",
            "claims_audit_versions": [],
        }

    def getini(self, name: str) -> str | list[str]:
        return self._ini[name]


def test_the_audited_project_joins_the_data_hooks_answers(tmp_path):
    from claim_audit.report.plugin import audited_project

    project = audited_project(_Config(tmp_path, [{"a": "1" * 64}, {"b": "2" * 64, "a": "1" * 64}]))
    assert project.data == {"a": "1" * 64, "b": "2" * 64}
    assert project.root == tmp_path and project.method is None
    assert project.versions == ()  # no pyproject.toml, no claims_audit_versions


def test_the_versions_named_are_the_project_s_own(tmp_path):
    """The report names the distributions the project depends on ([project] dependencies of
    its pyproject.toml, not this engine), or those of the ini option claims_audit_versions."""
    from claim_audit.report.plugin import audited_project

    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "p"\ndependencies = ["scikit-learn>=1.5", "numpy", '
        '"claim-audit[draw]", "Claim_Audit"]\n'
    )
    config = _Config(tmp_path, [])
    assert audited_project(config).versions == ("scikit-learn", "numpy")
    config._ini["claims_audit_versions"] = ["torch"]
    assert audited_project(config).versions == ("torch",)
    (tmp_path / "pyproject.toml").write_text("[project\n")
    config._ini["claims_audit_versions"] = []
    assert audited_project(config).versions == ()


@pytest.mark.parametrize(
    ("answers", "says"),
    [
        ([["a", "1"]], "must return a dict of name -> sha256 strings"),
        ([{"a": 1}], "must return a dict of name -> sha256 strings"),
        ([{"a": "1" * 64}, {"a": "2" * 64}], "gave 'a' two digests"),
    ],
    ids=["not-a-dict", "digest-not-a-string", "two-digests-for-one-name"],
)
def test_unusable_data_digests_are_an_error_naming_the_problem(tmp_path, answers, says):
    from claim_audit.report.plugin import ProjectError, audited_project

    with pytest.raises(ProjectError, match=says):
        audited_project(_Config(tmp_path, answers))


def test_xla_flags_are_recorded_so_that_a_diff_shows_them(tmp_path, monkeypatch):
    """A report made under XLA flags that can change the arithmetic says so in its metadata,
    and `diff` against a report made without them names the change."""
    from claim_audit.report.diff import compare
    from running.jax_report import pytest_claims_audit_environment

    monkeypatch.delenv("XLA_FLAGS", raising=False)
    plain = pytest_claims_audit_environment()["metadata"]
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=true")
    fast = pytest_claims_audit_environment()["metadata"]
    assert (plain["xla_flags"], fast["xla_flags"]) == (None, "--xla_cpu_enable_fast_math=true")
    changes = compare({"claims": [], "metadata": plain}, {"claims": [], "metadata": fast})
    assert ("xla_flags", None, "--xla_cpu_enable_fast_math=true") in changes.metadata
