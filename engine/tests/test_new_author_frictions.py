"""Smaller frictions a new author met: a repository with no commit yet, large
whole figures, natural claim order, starter names, the cache counter, the guide's recipes."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from claim_audit.engine.claim import ClaimRecord
from claim_audit.engine.verdict import fmt
from claim_audit.render import markdown, table
from claim_audit.report import provenance
from claim_audit.starter import starter_files
from fault_tools import REPO_ROOT


def test_a_repository_with_no_commit_yet_is_called_so(tmp_path, monkeypatch):
    """`git init` and no commit: "no commit yet", not "Not a git repository"."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    git = provenance.git_state(tmp_path)
    assert git == {"commit": None, "dirty": None, "no_commit_yet": True}
    audit = {"claims": [], "summary": "0 claims", "metadata": {"git": git, "created_unix": 0.0}}
    assert "A git repository with no commit yet" in "\n".join(markdown._header(audit))
    assert "A git repository with no commit yet" in markdown.render_html(audit, {})


def test_whole_figures_print_plainly():
    """99900.0 prints as 99900, not 9.99e+04; other figures keep 4 significant digits."""
    assert [fmt(v) for v in (99900.0, 120.0, 12345.6, 0.0001234, 1e20)] == [
        "99900", "120", "1.235e+04", "1.234e-04", "1e+20"
    ]  # fmt: skip


def test_claims_sort_naturally():
    """calib-2 before calib-10, in the table (and so audit.json, audit.md, audit.html)."""
    records = [
        ClaimRecord(f"calib-{k}", "calib", "S", "s", "1", "1", "-", "holds", {}) for k in (10, 1, 2)
    ]
    assert [r.id for r in table.ordered(records)] == ["calib-1", "calib-2", "calib-10"]


@pytest.mark.parametrize("name", ["fit", "claims", "order", "np", "test_paper", "paper_test"])
def test_the_starter_refuses_names_that_break_it(name):
    """A name the starter's code already uses (`import fit` beside the fixture `fit`), or
    one pytest would collect as a test module: refused with the reason, before writing."""
    with pytest.raises(ValueError, match="choose"):
        starter_files(name)
    assert "test_my_paper.py" in starter_files("my_paper")
    assert "test_toy.py" in starter_files("toy")


def test_the_cache_counter_says_what_it_counts():
    """The header counts the engine cache only, and says so (a project's joblib.Memory is
    not counted): "engine cache (claim_audit.cache.cached): ...", "not used" when idle."""

    def header(cache: dict) -> str:
        audit = {"claims": [], "summary": "0 claims", "metadata": {"cache": cache}}
        return "\n".join(markdown._method_lines(audit, page=False))

    assert "engine cache (claim\\_audit.cache.cached): not used." in header({"hits": 0})
    assert "(claim\\_audit.cache.cached): 2 hits, 1 computed." in header({"hits": 2, "computed": 1})


def test_the_guide_documents_one_sided_regions_seeds_and_caching():
    """The guide shows `Region(high=..., closed=False)`, where a document's own seeds live,
    and how to cache a recipe that costs seconds (and what the header's counter counts)."""
    guide = " ".join((REPO_ROOT / "docs" / "ADDING_A_DOCUMENT.md").read_text().split())
    assert "`Region(high=0.05, closed=False)` is `< 0.05`" in guide
    assert "**A document's own seeds**" in guide
    assert "joblib.Memory" in guide and "claim_audit.cache.cached(name, key, compute)" in guide
