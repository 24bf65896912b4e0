"""A ranking as a claim with margins: `ranking` makes a `Comparison` with
one margin per rival, and the guide's example runs on the starter."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from claim_audit import Region, ranking
from fault_tools import REPO_ROOT, run_starter, starter_project

SCORES = {"lr": 0.0271, "svc": 0.0493, "nb": 0.1187}


def score(subject: dict[str, float], name: str) -> float:
    return subject[name]


def test_a_ranking_is_judged_on_its_margins():
    rank = ranking("lr", ["svc", "nb"], score)
    judged = rank.judge(SCORES)
    assert judged.holds
    margins = {t.name: t.value for t in judged.thresholds}
    lr, svc, nb = SCORES.values()
    assert margins == pytest.approx({"lr - svc": lr - svc, "lr - nb": lr - nb})
    assert {t.region for t in judged.thresholds} == {Region(high=0, closed=False)}
    assert not rank.judge({**SCORES, "svc": lr / 2}).holds  # one rival ahead: the ranking fails
    assert not rank.judge({**SCORES, "svc": lr}).holds  # a tie is not a lead


def test_higher_is_better_flips_the_margins_region():
    rank = ranking("nb", ["lr", "svc"], score, lower_is_better=False)
    assert rank.judge(SCORES).holds
    assert {t.region for t in rank.judge(SCORES).thresholds} == {Region(low=0, closed=False)}


@pytest.mark.parametrize("rivals", [[], ["svc", "svc"], ["lr", "svc"]])
def test_a_ranking_without_distinct_rivals_is_refused(rivals):
    with pytest.raises(ValueError, match="a ranking needs one or more distinct rivals"):
        ranking("lr", rivals, score)


def guide_ranking() -> str:
    text = (REPO_ROOT / "docs" / "ADDING_A_DOCUMENT.md").read_text()
    return re.findall(r"```python\n(.*?)```", text.split("**A ranking**, added", 1)[1], re.S)[0]


@pytest.mark.slow
def test_the_guides_ranking_runs_on_the_starter(tmp_path: Path):
    """The starter with the guide's ranking claim: the run passes, and the record judges the
    claim over the orders by its two margins."""
    folder = starter_project(tmp_path / "paper")
    with (folder / "test_toy.py").open("a") as claims:
        claims.write("\n" + guide_ranking())
    result = run_starter(folder)
    assert result.returncode == 0, (result.stdout + result.stderr)[-4000:]
    audit = json.loads((folder / "report" / "audit.json").read_text())
    record = next(c for c in audit["claims"] if c["id"] == "toy-6")
    assert record["verdict"] == "holds"
    effects = json.dumps(record["details"])
    assert "1000 - 100" in effects and "1000 - 30" in effects
