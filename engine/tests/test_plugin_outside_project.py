"""The plugin in another project: the worked example of docs/ADDING_A_DOCUMENT.md, built
from the page's own code blocks in a folder outside this repository and run through the
plugin with --strict-markers."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fault_tools import REPO_ROOT, TIMEOUT_S, child_env, run_pytest, starter_project, user_env

pytestmark = pytest.mark.slow  # three pytest processes

GUIDE = REPO_ROOT / "docs" / "ADDING_A_DOCUMENT.md"
EXAMPLE_CLAIMS = ("toy-1", "toy-2", "toy-3", "toy-4a", "toy-4b")
# No cache folder left behind; markers checked: the plugin must register its own.
STRICT = ("-p", "no:cacheprovider", "--strict-markers")


def example_files() -> dict[str, str]:
    """File name -> text, as the guide shows them (scripts/guide_files.py)."""
    spec = importlib.util.spec_from_file_location(
        "guide_files", REPO_ROOT / "scripts" / "guide_files.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.guide_files(GUIDE)


def run_outside(folder: Path, *plugin: str, autoload: bool) -> subprocess.CompletedProcess:
    for name, text in example_files().items():
        (folder / name).write_text(text)
    env = child_env(**({} if autoload else {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}))
    env.pop("PYTHONPATH", None)  # the package as installed, not this checkout's folder
    return subprocess.run(
        [sys.executable, "-m", "pytest", *plugin, *STRICT, "--report-dir", "report"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


def run_plugin_alone(folder: Path, *unset: str) -> subprocess.CompletedProcess:
    """pytest in `folder` with the plugin named and no other plugin autoloaded, without the
    environment variables `unset`; no report."""
    env = child_env(PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    for name in unset:
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "claim_audit.report.plugin", *STRICT, "--no-report"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip


def purelib(python: Path | str) -> str:
    """The folder where `python` installs pure-Python packages."""
    return subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=TIMEOUT_S,
    ).stdout.strip()  # fmt: skip


@pytest.fixture(scope="module")
def outside(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("outside")
    assert REPO_ROOT not in folder.parents
    return folder


@pytest.mark.parametrize(
    ("plugin", "autoload"),
    [(("-p", "claim_audit.report.plugin"), False), ((), True)],
    ids=["p-flag", "entry-point"],
)
def test_guide_example_runs_through_the_plugin(outside, plugin, autoload):
    """The five claims pass and appear in audit.json with their verdicts: a figure, a mean
    ± sd over seeds (two figures), a comparison and a parametrized claim's two cases."""
    folder = outside / ("flag" if plugin else "entry-point")
    folder.mkdir()
    result = run_outside(folder, *plugin, autoload=autoload)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "5 passed" in result.stdout
    assert "5 document claims: 5 hold" in result.stdout
    audit = json.loads((folder / "report" / "audit.json").read_text())
    claims = {c["id"]: c for c in audit["claims"]}
    assert {k: (c["document"], c["verdict"]) for k, c in claims.items()} == {
        k: ("toy", "holds") for k in EXAMPLE_CLAIMS
    }
    assert list(claims["toy-1"]["details"]["orders"]) == [
        "faithful",
        *(f"float32-{k}" for k in range(13)),
    ]
    mean, sd = claims["toy-2"]["published"].split(" ± ")
    assert [f["published"] for f in claims["toy-2"]["details"]["figures"]] == [mean, sd]
    # The float32 orders agree to float noise: one draw, its 13 copies counted once.
    toy_3 = claims["toy-3"]["details"]
    assert toy_3["effects"][0]["in_region"] == [1, 1] and toy_3["copies_by_value"] == 13
    assert "partial" not in audit
    # The report describes the project it audited (not a git repository, no lock, no data
    # supplied, no method document), and nothing of this suite's two documents.
    meta = audit["metadata"]
    assert set(meta["versions"]) == {"claim_audit", "python", "numpy", "matplotlib"}
    assert meta["git"] == {"commit": None, "dirty": None}
    assert meta["requirements_lock_sha256"] is None and meta["installed"] is None
    assert meta["data_digests"] == {} and meta["method"] is None
    markdown = (folder / "report" / "audit.md").read_text()
    assert "Not a git repository" in markdown
    text = markdown + (folder / "report" / "audit.html").read_text()
    for ours in ("mnist", "verdicts.md", "tolerances.md", "bounded net", "uncertainty estimation"):
        assert ours not in text.lower(), f"the outside project's report mentions {ours!r}"


def test_a_claim_is_selected_by_its_id(outside):
    """`pytest -k <claim id>` runs that claim's test alone: the id is a keyword of its test."""
    folder = outside / "by-id"
    folder.mkdir()
    result = run_outside(folder, "-p", "claim_audit.report.plugin", "-k", "toy-2", autoload=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "1 passed, 4 deselected" in result.stdout, result.stdout[-3000:]
    audit = json.loads((folder / "report" / "partial" / "audit.json").read_text())
    assert [c["id"] for c in audit["claims"]] == ["toy-2"]
    assert audit["partial"], "a subset of the claims is a partial audit"


def test_loading_the_plugin_leaves_jax_alone(outside):
    """A project that loads the plugin and never uses JAX does not get it imported (nor its
    compilation cache or XLA flags set) before or while its tests run."""
    folder = outside / "no-jax"
    folder.mkdir()
    (folder / "test_no_jax.py").write_text(
        "import os, sys\n\n\n"
        "def test_jax_untouched():\n"
        "    assert 'jax' not in sys.modules\n"
        "    assert 'CLAIMS_COMPILATION_CACHE_DIR' not in os.environ\n"
        "    assert 'xla_gpu_deterministic_ops' not in os.environ.get('XLA_FLAGS', '')\n"
    )
    # this suite's settings, inherited from this process
    result = run_plugin_alone(folder, "CLAIMS_COMPILATION_CACHE_DIR", "XLA_FLAGS", "PYTHONPATH")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "1 passed" in result.stdout


def test_seeds_without_a_robustness_hook_fail_the_run(outside):
    """`--seeds` in a project that computes no sweep (no `pytest_claims_audit_robustness`)
    is not silently ignored: the claims are judged, and the run fails saying why."""
    folder = outside / "no-sweep"
    folder.mkdir()
    result = run_outside(
        folder, "-p", "claim_audit.report.plugin", "--seeds", "0-2", autoload=False
    )
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert "5 passed" in result.stdout
    assert "no pytest_claims_audit_robustness hook" in result.stdout + result.stderr


def test_the_cache_is_the_audited_projects(outside):
    """Results an outside project caches land in its own `.cache/` (pytest's rootdir), not
    in the engine's checkout."""
    folder = outside / "cache"
    folder.mkdir()
    (folder / "test_where.py").write_text(
        "from pathlib import Path\n\nfrom claim_audit import cache\n\n\n"
        "def test_cache_in_this_project():\n"
        "    assert cache.default_cache_dir() == Path(__file__).parent / '.cache'\n"
    )
    result = run_plugin_alone(folder, "CLAIMS_CACHE_DIR", "PYTHONPATH")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "1 passed" in result.stdout


def test_installed_beside_a_project_with_its_own_lib(tmp_path):
    """The engine and the package installed (wheels built from this checkout) into a fresh venv, next to a
    project whose own package is named `lib`: the plugin loads through its entry point, the
    project's `lib.helpers` imports, and the guide's example runs through the plugin, in one
    pytest run. (Installed as a top-level `lib`, the engine shadowed the project's.)"""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=TIMEOUT_S)
    python = venv / "bin" / "python"
    site = purelib(python)
    # The dependencies (jax, pytest, ...) from this suite's environment; the package itself
    # only from the wheel: a .pth line adds a folder, not the .pth files (editable finders) in it.
    Path(site, "dependencies.pth").write_text(purelib(sys.executable) + "\n")
    install = subprocess.run(
        [python, "-m", "pip", "install", "--quiet", "--no-deps", str(REPO_ROOT / "engine"), str(REPO_ROOT)],
        capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    project = tmp_path / "project"
    project.mkdir()
    for name, text in example_files().items():
        (project / name).write_text(text)
    (project / "lib").mkdir()
    (project / "lib" / "__init__.py").write_text("")
    (project / "lib" / "helpers.py").write_text("def double(x):\n    return 2 * x\n")
    (project / "test_own_lib.py").write_text(
        "from lib.helpers import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
    )
    env = child_env()
    for name in ("PYTHONPATH", "CLAIMS_CACHE_DIR", "PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        env.pop(name, None)
    result = subprocess.run(
        [python, "-m", "pytest", *STRICT, "--report-dir", "report"],
        cwd=project, env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "6 passed" in result.stdout, result.stdout[-3000:]
    where = subprocess.run(
        [python, "-c", "import claim_audit, uncertainty_claims; print(claim_audit.__file__, uncertainty_claims.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
    ).stdout  # fmt: skip
    assert all(path.startswith(site) for path in where.split()), where
    audit = json.loads((project / "report" / "audit.json").read_text())
    assert sorted(c["id"] for c in audit["claims"]) == sorted(EXAMPLE_CLAIMS)


def test_the_starter_is_the_guide_s_example():
    """`python -m claim_audit new toy` writes exactly the files the guide shows."""
    from claim_audit.starter import starter_files

    assert starter_files("toy") == example_files()


def test_the_starter_command_writes_a_green_audit_and_overwrites_nothing(tmp_path):
    """`python -m claim_audit new NAME FOLDER` writes a starter named NAME that runs green;
    run again it refuses, and a name that is no module name is refused, both in one line."""
    folder = tmp_path / "my-audit"
    new = [sys.executable, "-m", "claim_audit", "new"]
    env = child_env()
    env.pop("PYTHONPATH", None)
    made = subprocess.run([*new, "my_paper", str(folder)], capture_output=True, text=True, env=env, timeout=TIMEOUT_S)  # fmt: skip
    assert made.returncode == 0, made.stderr
    assert sorted(p.name for p in folder.iterdir()) == [
        "conftest.py", "my_paper.py", "pytest.ini", "test_my_paper.py"
    ]  # fmt: skip
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *STRICT, "--report-dir", "report"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    audit = json.loads((folder / "report" / "audit.json").read_text())
    assert {c["id"] for c in audit["claims"]} == {
        i.replace("toy", "my_paper") for i in EXAMPLE_CLAIMS
    }
    assert "toy" not in "".join(p.read_text() for p in folder.iterdir() if p.is_file())
    before = {p.name: p.read_text() for p in folder.glob("*.py")}
    again = subprocess.run([*new, "my_paper", str(folder)], capture_output=True, text=True, env=env, timeout=TIMEOUT_S)  # fmt: skip
    assert again.returncode == 2 and "would overwrite" in again.stderr, again.stderr
    assert {p.name: p.read_text() for p in folder.glob("*.py")} == before
    bad = subprocess.run([*new, "My-Paper", str(tmp_path / "x")], capture_output=True, text=True, env=env, timeout=TIMEOUT_S)  # fmt: skip
    assert bad.returncode == 2 and "module name" in bad.stderr, bad.stderr
    assert not (tmp_path / "x").exists()


def test_a_report_dir_outside_the_project_never_moves_the_rootdir(tmp_path):
    """`pytest --report-dir /existing/folder/outside`: pytest takes the folder for a test path
    when it looks for the rootdir (pytest-dev/pytest#1435), before the plugin can declare the
    option, so the plugin refuses it, naming the fix; `--report-dir=/outside` (one word)
    keeps the project's rootdir and pytest.ini."""
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    (project / "pytest.ini").write_text("[pytest]\nclaims_audit_versions = numpy\n")
    (project / "test_one.py").write_text("def test_one():\n    pass\n")
    env = child_env()
    env.pop("PYTHONPATH", None)

    def run(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "pytest", *STRICT, "-p", "no:xdist", *args]
        return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)  # fmt: skip

    refused = run("--report-dir", str(outside))
    assert refused.returncode == 4, refused.stdout + refused.stderr
    assert f"write it as one word: --report-dir={outside}" in refused.stderr
    assert not (outside / "audit.json").exists()
    kept = run(f"--report-dir={outside}")
    assert kept.returncode == 0, kept.stdout[-3000:] + kept.stderr[-3000:]
    assert f"rootdir: {project}\nconfigfile: pytest.ini" in kept.stdout
    assert run("--report-dir", "report").returncode == 0  # inside the project: harmless


SUB_CLAIM = """from claim_audit import Claims, satisfied

claims = Claims("toy")


@claims("toy-5", "Fit", "One more claim of the document, in a subfolder.", published="ok")
def test_one_more():
    return satisfied(True, measured="ok")
"""


@pytest.fixture
def starter_with_a_subfolder(tmp_path) -> tuple[Path, bytes]:
    """A starter project with a sub/ folder of one more claim, and its complete audit."""
    project = starter_project(tmp_path / "project")
    (project / "sub").mkdir()
    (project / "sub" / "test_sub.py").write_text(SUB_CLAIM)
    whole = run_pytest(project, "-p", "no:xdist", env=user_env())
    assert whole.returncode == 0, whole.stdout[-3000:] + whole.stderr[-3000:]
    complete = (project / "report" / "audit.json").read_bytes()
    assert len(json.loads(complete)["claims"]) == len(EXAMPLE_CLAIMS) + 1
    return project, complete


@pytest.mark.parametrize(
    ("started_in", "args", "named"),
    [("sub", (), "sub (where pytest started, naming no path)"), (".", ("sub",), "sub")],
    ids=["started-in-the-subfolder", "subfolder-named"],
)
def test_a_starter_run_of_a_subfolder_keeps_the_complete_report(
    starter_with_a_subfolder, started_in, args, named
):
    """`cd sub && pytest` or `pytest sub` in a starter project: a partial run (its one claim
    in report/partial/), the complete report left byte for byte. Bug fixed: with no
    testpaths any folder "held all of them", and a run started in a subfolder named no path,
    so it replaced report/audit.json with one claim, labelled complete
    (engine/claim_audit/report/plugin.py `_named_subset`: the suite is the rootdir)."""
    project, complete = starter_with_a_subfolder
    part = run_pytest(project / started_in, "-p", "no:xdist", *args, env=user_env())
    assert part.returncode == 0, part.stdout[-3000:] + part.stderr[-3000:]
    assert f"partial run (only part of the suite named: {named})" in part.stdout, part.stdout
    assert (project / "report" / "audit.json").read_bytes() == complete
    written = json.loads((project / "report" / "partial" / "audit.json").read_text())
    assert [c["id"] for c in written["claims"]] == ["toy-5"]


def test_a_starter_run_without_its_conftest_keeps_the_complete_report(starter_with_a_subfolder):
    """`--confcutdir=sub`: the project's conftest.py (its document's registration) is not
    loaded; the run is partial and fails saying so, the complete report left byte for byte.
    Bug fixed: every claim ran and the complete report was replaced without the document's
    section and figures, exit 0 (engine/claim_audit/report/plugin.py `_conftests_cut_off`)."""
    project, complete = starter_with_a_subfolder
    cut = run_pytest(project, "-p", "no:xdist", "--confcutdir=sub", env=user_env())
    assert cut.returncode == 1, cut.stdout[-3000:] + cut.stderr[-3000:]
    says = "partial run (--confcutdir keeps the project's conftest.py from loading"
    assert says in cut.stdout, cut.stdout
    assert (project / "report" / "audit.json").read_bytes() == complete
