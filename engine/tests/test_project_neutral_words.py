"""What a user of another document sees speaks the engine's words, not this project's:
`--help`, the starter's help, the messages of a run, and audit.json's metadata."""

from __future__ import annotations

import subprocess
import sys

from claim_audit.report import audit
from fault_tools import TIMEOUT_S, child_env

# Phrases of this project (its training, its comparative claims, its repository's paths).
PROJECT_WORDS = (
    "training",
    "comparative",
    "bootstrap",
    "test-image",
    "engine/claim_audit/",
    "docs/ADDING_A_DOCUMENT.md",
)


def run(folder, *args: str) -> subprocess.CompletedProcess:
    env = child_env()
    env.pop("PYTHONPATH", None)
    return subprocess.run(
        [sys.executable, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=TIMEOUT_S
    )  # fmt: skip


def test_help_texts_speak_the_engines_words(tmp_path):
    """`pytest --help` (the plugin's options) and `python -m claim_audit --help` / `new
    --help` in a folder of another project: none of this project's words or paths."""
    plugin_help = run(tmp_path, "-m", "pytest", "-p", "no:cacheprovider", "--help")
    assert plugin_help.returncode == 0, plugin_help.stderr
    section = plugin_help.stdout.split("claims audit:", 1)[1].split("\n\n", 1)[0]
    assert "--orders" in section and "--seeds" in section
    texts = [section]
    for args in ((), ("new",), ("diff",)):
        shown = run(tmp_path, "-m", "claim_audit", *args, "--help")
        assert shown.returncode == 0, shown.stderr
        texts.append(shown.stdout)
    for text in texts:
        flat = " ".join(text.split())
        assert not [w for w in PROJECT_WORDS if w in flat], flat


def test_a_sweep_with_no_hook_names_the_hook_not_a_path(tmp_path):
    """`pytest --seeds 0-2` in a starter project without a robustness hook: the message names
    the hook and where to implement it, not a file of this repository."""
    folder = tmp_path / "paper"
    assert run(tmp_path, "-m", "claim_audit", "new", "paper", str(folder)).returncode == 0
    result = run(folder, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist", "--seeds", "0-2", "--report-dir=report")  # fmt: skip
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert "no pytest_claims_audit_robustness hook computed one" in result.stdout
    assert "the project's conftest.py" in result.stdout
    assert not [w for w in PROJECT_WORDS if w in result.stdout + result.stderr]


def test_metadata_has_only_the_environment_fields_a_project_gives():
    """audit.json's metadata holds no field of a numerical stack of the engine's own (it knows
    no JAX; its `device` is None): only those a project's `pytest_claims_audit_environment`
    gives, a `platform` mapping added to the engine's."""
    meta = audit.metadata([], 0.0)
    assert "jax_backend" not in meta["platform"] and "jax_environment" not in meta
    assert meta["device"] is None
    device = {"backend": "cpu", "count": 1, "kinds": ["cpu"]}
    given = {"platform": {"jax_backend": "cpu"}, "jax_environment": {}, "device": device}
    meta = audit.metadata([], 0.0, environment=given)
    assert meta["platform"]["jax_backend"] == "cpu" and meta["platform"]["machine"]
    assert meta["jax_environment"] == {} and meta["device"] == device


def test_the_starter_speaks_the_engines_words():
    """The files `python -m claim_audit new` writes point a user at no path of this
    repository (they have the installed engine, not its source)."""
    from claim_audit.starter import starter_files

    for name, text in starter_files("paper").items():
        flat = " ".join(text.split())
        assert not [w for w in PROJECT_WORDS if w in flat], (name, flat)


def test_the_robustness_figure_speaks_the_engines_words():
    """Its caption names no kind of interval of this project's, and one published seed is
    "seed 42", not "seeds 42"."""
    from claim_audit import Comparison, Effect, Region, seed_section
    from claim_audit.render.drawing import ROBUSTNESS, robustness_figure

    assert "test-image" not in ROBUSTNESS.caption
    comparison = Comparison((Effect("ratio", lambda s: s["a"], Region(1.0)),)).for_claim("x-1")
    section = seed_section(
        [comparison], lambda seed: {"a": 1.5 + seed}, published=[42], sweep=[0, 1, 2, 3]
    )
    title = robustness_figure(section).get_suptitle()
    assert "the published seed 42" in title and "seeds 42" not in title


def test_the_starter_names_no_cd_into_the_folder_it_stands_in(tmp_path):
    made = run(tmp_path, "-m", "claim_audit", "new", "toy", ".")
    assert made.returncode == 0, made.stderr
    assert "run it: pytest --report-dir=report" in made.stdout
