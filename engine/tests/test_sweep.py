"""`--seeds` for another document: `seed_section` computes the robustness section from the
claims' `Comparison`s, each given its id by its claim, and a malformed section is one line naming the key."""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import pytest
from claim_audit import Claims, Comparison, Effect, Region, seed_section
from claim_audit.render import markdown, table
from claim_audit.report import audit
from fault_tools import REPO_ROOT, run_starter, starter_project

GUIDE = REPO_ROOT / "docs" / "ADDING_A_DOCUMENT.md"


def guide_blocks() -> list[str]:
    """The guide's "Other seeds" code: the claim added to test_toy.py, then the hook."""
    text = GUIDE.read_text().split("**Other seeds.**", 1)[1]
    return re.findall(r"```python\n(.*?)```", text, re.S)[:2]


def guide_seed_rule() -> str:
    """The guide's "Other seeds" rule on how few seeds a sweep may have (its third block)."""
    text = GUIDE.read_text().split("**Other seeds.**", 1)[1]
    return re.findall(r"```python\n(.*?)```", text, re.S)[2]


MALFORMED = """

def pytest_claims_audit_robustness(documents, sweep):
    return {"published_seeds": [0], "sweep_seeds": list(sweep), "claims": {"toy-5": {}}}
"""

# This project's words, which a section computed by the engine never speaks.
PROJECT_WORDS = ("test-image", "root keys", "binning", "the post", "calibration", " net")


def project(tmp_path: Path, hook: str | None = None) -> Path:
    """The starter with the guide's comparative claim, and `hook` (the guide's by default)."""
    claim, guide_hook = guide_blocks()
    folder = starter_project(tmp_path / "paper")
    with (folder / "test_toy.py").open("a") as claims:
        claims.write("\n" + claim)
    with (folder / "conftest.py").open("a") as conftest:
        conftest.write("\n" + (guide_hook if hook is None else hook))
    return folder


def run_seeds(folder: Path, seeds: str) -> subprocess.CompletedProcess:
    return run_starter(folder, "--seeds", seeds)


@pytest.mark.slow
def test_a_starter_project_with_the_guides_glue_gets_its_section(tmp_path):
    """The starter, a comparative claim and the guide's hook: `--seeds 0-3` exits 0, and the
    terminal and audit.md show the claim on the sweep's seeds in the engine's words."""
    folder = project(tmp_path)
    result = run_seeds(folder, "0-3")
    shown = result.stdout + result.stderr
    assert result.returncode == 0, shown[-4000:]
    assert "Across seeds 0, 1, 2, 3" in result.stdout
    assert "toy-5" in result.stdout.split("ROBUSTNESS", 1)[1]
    audit_md = (folder / "report" / "audit.md").read_text()
    section = audit_md.split("## Robustness", 1)[1]
    assert "### Across seeds 0, 1, 2, 3" in section and "| toy-5 |" in section
    assert not [word for word in PROJECT_WORDS if word in section + shown], section


@pytest.mark.slow
def test_the_guides_seed_rule_refuses_a_small_sweep_before_anything_runs(tmp_path):
    """The guide's glue and its `pytest_configure` rule: `--seeds 0-1` is a usage error (exit
    4) naming the rule, before any claim runs; `--seeds 0-2` runs and gets its section."""
    folder = project(tmp_path, guide_blocks()[1] + "\n\n" + guide_seed_rule())
    refused = run_seeds(folder, "0-1")
    shown = refused.stdout + refused.stderr
    assert refused.returncode == 4, shown[-4000:]
    assert "--seeds: a sweep needs 3 seeds or more; got 2" in shown
    assert "CLAIMS AUDIT" not in shown and "Traceback" not in shown
    accepted = run_seeds(folder, "0-2")
    assert accepted.returncode == 0, (accepted.stdout + accepted.stderr)[-4000:]
    assert "Across seeds 0, 1, 2" in accepted.stdout


@pytest.mark.slow
def test_a_malformed_section_is_one_line_naming_the_key(tmp_path):
    """A hook whose claim lacks `published`: one line naming it, no traceback, exit 1."""
    result = run_seeds(project(tmp_path, MALFORMED), "0-3")
    shown = result.stdout + result.stderr
    assert result.returncode == 1, shown[-4000:]
    assert "Traceback" not in shown and "KeyError" not in shown
    [line] = [line for line in shown.splitlines() if "robustness not computed" in line]
    assert "malformed section: claims['toy-5'] has no key 'published'" in line


def _comparison(claim_id: str = "c-1") -> Comparison:
    return _comparison_of_no_claim().for_claim(claim_id)


def test_seed_section_judges_runs_and_subsets():
    """A claim about one run is judged on each seed's run; one about means over two seeds
    on every 2-seed subset of the sweep; both pass the contract and render."""
    runs = seed_section([_comparison()], lambda s: {"a": s % 3, "b": 1}, published=[0], sweep=range(4))  # fmt: skip
    sweep = runs["claims"]["c-1"]["sweep"]
    assert (sweep["holding"], sweep["total"], sweep["unit"]) == (2, 4, "seeds")
    assert runs["claims"]["c-1"]["published"]["holds"] is False

    def mean_gap(per_seed) -> float:
        return sum(f["x"] for f in per_seed["a"]) - sum(f["x"] for f in per_seed["b"])

    means = Comparison((Effect("gap", mean_gap, Region(0.0)),)).for_claim("c-2")
    subsets = seed_section(
        [means], lambda s: {"a": {"x": s}, "b": {"x": 1}}, published=[0, 1], sweep=[0, 1, 2], size=2
    )
    sweep = subsets["claims"]["c-2"]["sweep"]
    assert (sweep["holding"], sweep["total"], sweep["unit"]) == (2, 3, "2-seed subsets")
    for section in (runs, subsets):
        checked = audit.checked(section)
        text = "\n".join(table.render_robustness(checked) + markdown.render_robustness(checked))
        assert "Across seeds" in text and not [w for w in PROJECT_WORDS if w in text]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda s: s.pop("claims"), "the section has no key 'claims'"),
        (lambda s: s["claims"]["c-1"]["published"].pop("values"), "claims['c-1']['published'] has no key 'values'"),
        (lambda s: s["claims"]["c-1"]["sweep"].pop("holding"), "claims['c-1']['sweep'] has no key 'holding'"),
        (lambda s: s.update(sweep_seeds="0-3"), "'sweep_seeds' is str, expected list"),
        (lambda s: s["claims"]["c-1"]["published"].update(values=[1.0, 2.0]), "has 2 items for 1 effects"),
    ],
)  # fmt: skip
def test_a_malformed_section_names_what_is_wrong(change, message):
    section = seed_section([_comparison()], lambda s: {"a": s, "b": 1}, published=[0], sweep=[0, 1])
    change(section)
    with pytest.raises(audit.ReportError, match=message.replace("[", r"\[")):
        audit.checked(section)


def test_a_full_section_passes_unchanged():
    """A section that gives every key (as this project's does) comes back equal."""
    section = seed_section([_comparison()], lambda s: {"a": s, "b": 1}, published=[0], sweep=[0, 1])
    section |= {"sensitivity": [], "figure_intervals": None, "figure_group": "net"}
    section |= {"figure_columns": [["acc", "accuracy"]]}
    section["methods"]["published"] = "the project's intervals"
    assert audit.checked(section) == section
    assert textwrap.shorten(markdown.methods_text(section["methods"]), 40).startswith(
        "Intervals are 95%: the project's"
    )


def test_a_comparison_takes_its_id_from_its_claim():
    """A claim given a Comparison (`rule=`) gives it its id, once: `Claims.rules()` lists the
    rules with their claims' ids in definition order; a rule given to a second claim, or a rule
    that is no Comparison, is refused where the claim is defined."""
    claims = Claims("toy")
    first, second = _comparison_of_no_claim(), _comparison_of_no_claim()
    claims("t-1", "S", "claim t-1", published="a", rule=first)(lambda: None)
    claims("t-2", "S", "claim t-2", published="b", rule=second)(lambda: None)
    claims("t-3", "S", "claim t-3", published="c")(lambda: None)
    rules = claims.rules()
    assert list(rules) == ["t-1", "t-2"]
    assert [rule.claim() for rule in rules.values()] == ["t-1", "t-2"]
    assert rules["t-1"].effects == first.effects and first.claim_id is None
    with pytest.raises(ValueError, match="claim t-4: its rule is claim t-1's already"):
        claims("t-4", "S", "claim t-4", published="d", rule=first)(lambda: None)
    with pytest.raises(ValueError, match="claim t-5: rule must be the Comparison its body judges"):
        claims("t-5", "S", "claim t-5", published="e", rule="t-1")(lambda: None)


def test_a_comparison_of_no_claim_is_refused_before_anything_is_computed():
    """seed_section given a Comparison that no claim was given: a ValueError naming its
    effects and how to give it its claim, before any seed's subject is computed."""
    computed = []

    def subject(seed: int) -> dict:
        computed.append(seed)
        return {"a": seed, "b": 1}

    with pytest.raises(ValueError, match=r"the comparison of 'a - b' is no claim's rule: give it to its claim \(rule=\.\.\.\)"):  # fmt: skip
        seed_section([_comparison_of_no_claim()], subject, published=[0], sweep=[0, 1])
    assert computed == []


def _comparison_of_no_claim() -> Comparison:
    gap = Effect("a - b", lambda figures: figures["a"] - figures["b"], Region(0.0), unit="gap")
    return Comparison((gap,))
