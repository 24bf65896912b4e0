"""`python -m claim_audit portability`: two audits may differ on as many verdicts as
the rule's own error predicts, and never between holds and refuted."""

from __future__ import annotations

import json
import math
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


def _claim(claim_id: str, verdict: str = "holds", **details) -> dict:
    return {"id": claim_id, "document": "doc", "verdict": verdict, "details": details}


def _written(path: Path, claims: list[dict]) -> str:
    path.write_text(json.dumps({"schema_version": SCHEMA_VERSION, "claims": claims}))
    return str(path)


SHAKY = {"holds": 0.5, "inconclusive": 0.5}


@pytest.mark.parametrize(
    ("claim", "problem"),
    [
        ({"id": "a", "verdict": "holds"}, "no 'details' object"),
        ({"id": "a", "verdict": "holds", "details": [1, 2]}, "no 'details' object"),
        (_claim("a", verdict_shares=[0.5, 0.5]), "are not shares"),
        (_claim("a", verdict_shares={"holds": "1.0"}), "are not shares"),
        (_claim("a", verdict_shares={"holds": True}), "are not shares"),
        (_claim("a", verdict_shares={"holds": 3.0, "refuted": -2.0}), "are not shares"),
        (_claim("a", verdict_shares={"holds": math.nan}), "are not shares"),
        (_claim("a", verdict_shares={"holds": 0.5}), "are not shares"),
        (_claim("a", verdict_shares=SHAKY, orders=[1, 2]), "no count of orders"),
        (_claim("a", verdict_shares=SHAKY, orders={}, copies="1"), "no count of orders"),
    ],
    ids=[
        "no-details",
        "details-a-list",
        "shares-a-list",
        "share-as-text",
        "share-a-bool",
        "shares-outside-0-1",
        "share-nan",
        "shares-not-summing-to-1",
        "orders-a-list",
        "copies-as-text",
    ],
)
def test_an_old_audit_portability_cannot_read_is_exit_2_in_one_line(
    tmp_path, capsys, claim, problem
):
    """OLD whose claim lacks what portability reads: exit 2 and one line naming the file, the
    claim and the problem. Bug fixed: a traceback and exit 1 (a verdict crossed), or shares
    outside [0, 1] printed as a prediction ("-200.0 on average") with exit 0
    (claim_audit/__main__.py `drawn`)."""
    old = _written(tmp_path / "old.json", [claim, _claim("b", verdict_shares=SHAKY)])
    new = _written(tmp_path / "new.json", [_claim("a"), _claim("b")])
    assert main(["portability", old, new]) == 2
    said = capsys.readouterr()
    assert said.out == ""
    assert said.err.count("\n") == 1 and "claim 'a'" in said.err and problem in said.err


def test_audits_that_do_not_draw_alike_are_exit_2_in_one_line(tmp_path, capsys):
    """Two runs over different numbers of orders (--orders 20 against the default 14) are not
    two draws of one audit: exit 2 and one line saying so. Bug fixed: exit 1, "3 changed
    verdicts, more than 0" (claim_audit/__main__.py `unlike_draws`). The same number of
    orders with some of them copies of others draws alike."""

    def claims(orders: int, copies: int = 0) -> list[dict]:
        names = {f"o{k}": {"measured": 1.0} for k in range(orders - copies)}
        return [_claim(c, verdict_shares={"holds": 1.0}, orders=names, copies=copies) for c in "ab"]

    old = _written(tmp_path / "old.json", claims(14))
    assert main(["portability", old, _written(tmp_path / "same.json", claims(14, 2))]) == 0
    capsys.readouterr()
    assert main(["portability", old, _written(tmp_path / "new.json", claims(20))]) == 2
    said = capsys.readouterr()
    assert said.out == "" and said.err.count("\n") == 1
    assert "do not draw alike (doc: 14 orders in OLD, 20 orders in NEW)" in said.err


def test_a_claim_judged_again_over_more_orders_in_one_run_draws_alike(tmp_path, capsys):
    """A claim the first 8 orders leave undecided is judged again over its budget of 20; on
    another machine the first 8 may decide it. Both were drawn alike (8 given, up to 20):
    compared, not refused. Another budget is another draw."""

    def claim(extended: bool, budget: int = 20) -> dict:
        orders = {f"o{k}": {"measured": 1.0} for k in range(budget if extended else 8)}
        first = {"orders": 8, "verdict": "inconclusive", "budget": budget, "extended": extended}
        verdict = "holds" if extended else "inconclusive"
        shares = {"holds": 0.5, "inconclusive": 0.5}  # either, as resampling says
        return _claim("a", verdict, verdict_shares=shares, orders=orders, first_look=first)

    old = _written(tmp_path / "old.json", [claim(False)])
    assert main(["portability", old, _written(tmp_path / "new.json", [claim(True)])]) == 0
    assert "1 of 1 claims changed verdict" in capsys.readouterr().out
    other = _written(tmp_path / "other.json", [claim(True, budget=32)])
    assert main(["portability", old, other]) == 2
    assert "8 orders (up to 20) in OLD, 8 orders (up to 32) in NEW" in capsys.readouterr().err
