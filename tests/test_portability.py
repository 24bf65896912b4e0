"""`python -m claim_audit portability`: two audits may differ on as many verdicts as
the rule's own error predicts, and never between holds and refuted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claim_audit.__main__ import main
from claim_audit.engine.verdict import change_probability, expected_changes
from claim_audit.render.documents import SCHEMA_VERSION


def audit(path: Path, verdicts: dict[str, str], shares: dict[str, float]) -> str:
    claims = [
        {"id": i, "verdict": v, "details": {"verdict_shares": shares}} for i, v in verdicts.items()
    ]
    path.write_text(json.dumps({"schema_version": SCHEMA_VERSION, "claims": claims}))
    return str(path)


def test_two_independent_samples_differ_as_their_verdict_shares_say():
    assert change_probability({"holds": 1.0}) == 0
    assert change_probability({"holds": 0.5, "inconclusive": 0.5}) == pytest.approx(0.5)
    mean, limit = expected_changes([{"holds": 0.5, "inconclusive": 0.5}] * 40)
    assert mean == pytest.approx(20) and 26 <= limit <= 29  # Binomial(40, 1/2), 99%


def test_changes_within_the_prediction_pass(tmp_path, capsys):
    shaky = {"holds": 0.5, "inconclusive": 0.5}
    old = audit(tmp_path / "old.json", {f"c{i}": "holds" for i in range(10)}, shaky)
    new = audit(
        tmp_path / "new.json",
        {f"c{i}": "inconclusive" if i < 4 else "holds" for i in range(10)},
        shaky,
    )
    assert main(["portability", old, new]) == 0
    assert "4 of 10 claims changed verdict" in capsys.readouterr().out


def test_more_changes_than_predicted_fail(tmp_path):
    firm = {"holds": 1.0}
    old = audit(tmp_path / "old.json", {"a": "holds", "b": "holds"}, firm)
    new = audit(tmp_path / "new.json", {"a": "inconclusive", "b": "holds"}, firm)
    assert main(["portability", old, new]) == 1


def test_a_crossing_fails_whatever_the_prediction(tmp_path, capsys):
    shaky = {"holds": 0.5, "refuted": 0.5}
    old = audit(tmp_path / "old.json", {f"c{i}": "holds" for i in range(10)}, shaky)
    new = audit(
        tmp_path / "new.json", {"c0": "refuted"} | {f"c{i}": "holds" for i in range(1, 10)}, shaky
    )
    assert main(["portability", old, new]) == 1
    assert "crossed" in capsys.readouterr().err


def test_a_file_that_is_no_audit_is_exit_2(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["portability", str(bad), str(bad)]) == 2
