"""`python -m uncertainty_claims.report diff OLD.json NEW.json`: verdicts, figures and metadata that moved."""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from uncertainty_claims.report import diff

REPO = Path(__file__).resolve().parents[1]


def claim(claim_id: str, verdict: str = "holds", **fields) -> dict:
    record = {
        "id": claim_id,
        "document": "calibration",
        "section": "S",
        "statement": f"claim {claim_id}",
        "published": "1.00",
        "measured": "1.004",
        "tolerance": "± 0.01",
        "verdict": verdict,
        "details": {"measured_value": 1.004},
        "expected_to_hold": True,
    }
    return {**record, **fields}


AUDIT = {
    "schema_version": 1,
    "claims": [
        claim("c-1"),
        claim(
            "c-2",
            published="1.0, 2.0",
            tolerance="± 0.1, 0.2",
            details={"measured_values": [1.05, 2.1]},
        ),
        claim("c-3", published="ratio >= 2", tolerance="-", details={"ratio": 3.0}),
        claim("c-4", details={"measured_value": 1.004, "orders": {"fwd": 1.004, "rev": 1.006}}),
    ],
    "summary": "4 claims: 4 hold",
    "metadata": {
        "created_unix": 1.0,
        "wall_s": 2.0,
        "git": {"commit": "a" * 40, "dirty": False},
        "device": {"backend": "cpu", "count": 1, "kinds": ["cpu"]},
        "cache": {"hits": 1, "computed": 0, "uncached": 0, "events": []},
    },
}


def write(folder: Path, name: str, audit: dict) -> Path:
    path = folder / name
    path.write_text(json.dumps(audit))
    return path


def run_diff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "uncertainty_claims.report", "diff", *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )


def test_same_file_exits_zero(tmp_path):
    path = write(tmp_path, "a.json", AUDIT)
    result = run_diff(str(path), str(path))
    assert result.returncode == 0, result.stderr
    assert "Verdicts: none changed" in result.stdout
    assert "Figures: none moved" in result.stdout
    assert "Metadata: unchanged" in result.stdout


def test_changed_verdict_exits_one_and_is_shown(tmp_path):
    new = copy.deepcopy(AUDIT)
    new["claims"][0].update(verdict="refuted", measured="1.2", details={"measured_value": 1.2})
    result = run_diff(str(write(tmp_path, "a.json", AUDIT)), str(write(tmp_path, "b.json", new)))
    assert result.returncode == 1
    assert "Verdicts changed (1):" in result.stdout
    assert "c-1              holds -> refuted" in result.stdout
    assert "measured 1.004 -> 1.2" in result.stdout


def test_any_verdict_string_is_compared(tmp_path):
    """Verdicts are compared as strings: a new verdict name (e.g. 'sensitive') counts."""
    new = copy.deepcopy(AUDIT)
    new["claims"][2]["verdict"] = "sensitive"
    changes = diff.compare(AUDIT, new)
    assert [(a["verdict"], b["verdict"]) for a, b in changes.verdicts] == [("holds", "sensitive")]
    assert changes.verdicts_moved


def test_claims_in_one_file_only_exit_one(tmp_path):
    new = copy.deepcopy(AUDIT)
    removed = new["claims"].pop(0)
    new["claims"].append(claim("c-9"))
    changes = diff.compare(AUDIT, new)
    assert [c["id"] for c in changes.only_old] == [removed["id"]]
    assert [c["id"] for c in changes.only_new] == ["c-9"]
    result = run_diff(str(write(tmp_path, "a.json", AUDIT)), str(write(tmp_path, "b.json", new)))
    assert result.returncode == 1
    assert "Claims only in" in result.stdout and "c-9" in result.stdout


def test_figures_beyond_their_tolerance_are_listed_with_both_values(tmp_path):
    new = copy.deepcopy(AUDIT)
    new["claims"][0]["details"]["measured_value"] = 1.009  # moved 0.005 < 0.01: not listed
    new["claims"][1]["details"]["measured_values"] = [1.05, 2.45]  # [1] moved 0.35 > 0.2
    new["claims"][3]["details"]["orders"]["rev"] = 1.03  # moved 0.024 > 0.01
    new["claims"][2]["details"]["ratio"] = 9.0  # not a measured figure: ignored
    changes = diff.compare(AUDIT, new)
    moved = {(m.claim_id, m.figure): (m.old, m.new, m.tolerance) for m in changes.moved}
    assert moved == {
        ("c-2", "measured_values[1]"): (2.1, 2.45, 0.2),
        ("c-4", "orders.rev"): (1.006, 1.03, 0.01),
    }
    assert not changes.verdicts_moved
    result = run_diff(str(write(tmp_path, "a.json", AUDIT)), str(write(tmp_path, "b.json", new)))
    assert result.returncode == 0  # figures moved, but no verdict changed
    assert "Figures that moved beyond their tolerance (2):" in result.stdout
    assert "measured_values[1]     2.1 -> 2.45 (moved 0.35, tolerance 0.2)" in result.stdout


def test_figures_without_a_tolerance_and_new_orders_are_reported_apart():
    old = {"claims": [claim("c-1", tolerance="-", details={"measured_value": 1.0})]}
    new = {
        "claims": [
            claim("c-1", tolerance="-", details={"measured_value": 1.5, "orders": {"fwd": 1.5}})
        ]
    }
    changes = diff.compare(old, new)
    assert changes.moved == []
    assert [(m.figure, m.old, m.new) for m in changes.changed_untoleranced] == [
        ("measured_value", 1.0, 1.5)
    ]
    assert changes.figures_only_in_one == [("c-1", "orders.fwd", "new")]
    lines = "\n".join(diff.render(changes, "old", "new", verbose=True))
    assert "measured_value" in lines and "1 -> 1.5" in lines


def test_changed_metadata_is_shown_and_run_noise_is_not(tmp_path):
    new = copy.deepcopy(AUDIT)
    new["metadata"].update(created_unix=5.0, wall_s=9.0)
    new["metadata"]["cache"]["hits"] = 7
    new["metadata"]["git"] = {"commit": "b" * 40, "dirty": True}
    new["metadata"]["device"]["kinds"] = ["NVIDIA H200"]
    changes = diff.compare(AUDIT, new)
    assert {key for key, _, _ in changes.metadata} == {"git.commit", "git.dirty", "device.kinds"}
    result = run_diff(str(write(tmp_path, "a.json", AUDIT)), str(write(tmp_path, "b.json", new)))
    assert result.returncode == 0
    assert "device.kinds: cpu -> NVIDIA H200" in result.stdout
    assert f"git.commit: {'a' * 40} -> {'b' * 40}" in result.stdout


def test_a_changed_tolerance_or_published_figure_is_shown():
    new = copy.deepcopy(AUDIT)
    new["claims"][0]["tolerance"] = "± 0.02"
    changes = diff.compare(AUDIT, new)
    assert changes.definitions == [("c-1", "tolerance", "± 0.01", "± 0.02")]


@pytest.mark.fault
@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read"),
        ("{not json", "is not JSON"),
        ("[1, 2]", "has no 'claims' list"),
        ('{"claims": [{"id": "x"}]}', "claims[0] has no string 'verdict'"),
        ('{"claims": [1]}', "claims[0] is not an object"),
        (
            '{"claims": [{"id": "x", "verdict": "holds"}, {"id": "x", "verdict": "holds"}]}',
            "claim id 'x' appears twice",
        ),
        ('{"claims": [], "metadata": []}', "'metadata' is not an object"),
    ],
    ids=[
        "missing",
        "not-json",
        "no-claims",
        "no-verdict",
        "claim-not-object",
        "duplicate-id",
        "bad-metadata",
    ],
)
def test_unreadable_input_exits_two_with_a_clear_message(tmp_path, content, message):
    """`python -m uncertainty_claims.report diff` given a missing file, not JSON, no `claims` list, a claim
    without a verdict or not an object, a repeated id, or `metadata` not an object: exit 2,
    one line on stderr naming the file and the problem, nothing on stdout."""
    good = write(tmp_path, "good.json", AUDIT)
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    for args in ((bad, good), (good, bad)):
        result = run_diff(*map(str, args))
        assert result.returncode == 2
        assert result.stdout == ""
        assert result.stderr.startswith("error: ") and message in result.stderr
        assert str(bad) in result.stderr
        assert "Traceback" not in result.stderr


def test_tolerances_are_read_as_recorded():
    assert diff.tolerances("± 0.3645") == [0.3645]
    assert diff.tolerances("± 5.179e-05, 0.002") == [5.179e-05, 0.002]
    assert diff.tolerances("-") is None
    assert diff.tolerances("range of 20 keys") is None
    assert diff.tolerances("± nan") is None


def test_figure_that_became_non_finite_or_disappeared_is_a_move(tmp_path):
    """`python -m uncertainty_claims.report diff` with a figure that became NaN or infinite, or that a claim no
    longer records: listed as a move, exit 1. Bug fixed: it printed "none moved" and exited 0
    (lib/report/diff.py `_compare_figures`)."""
    new = copy.deepcopy(AUDIT)
    new["claims"][0]["details"]["measured_value"] = math.nan
    new["claims"][1]["details"]["measured_values"] = [math.inf, 2.1]
    del new["claims"][3]["details"]["orders"]["rev"]
    changes = diff.compare(AUDIT, new)
    assert not changes.verdicts_moved and changes.gate_fails
    assert changes.lost == [
        ("c-1", "measured_value", "1.004 -> nan"),
        ("c-2", "measured_values[0]", "1.05 -> inf"),
        ("c-4", "orders.rev", "disappeared"),
    ]
    old_path = write(tmp_path, "a.json", AUDIT)
    result = run_diff(str(old_path), str(write(tmp_path, "b.json", new)))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Figures lost: non-finite or disappeared (3):" in result.stdout
    assert "Verdicts: none changed" not in result.stdout
    assert run_diff(str(write(tmp_path, "c.json", new)), str(old_path)).returncode == 0


@pytest.mark.fault
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"claims": [], "n": 1' + "0" * 399 + "}", "an integer of 400 digits"),
        ('{"claims": [], "n": ' + "9" * 5000 + "}", "an integer of 5000 digits"),
        ('{"claims": [], "deep": ' + "[" * 100_000 + "]" * 100_000 + "}", "nests deeper"),
        ('{"claims": [], "deep": ' + "[" * 70 + "]" * 70 + "}", "nests deeper than 64"),
        ('{"schema_version": 2, "claims": []}', "schema_version 2 is not one this diff reads"),
        ('{"schema_version": "1", "claims": []}', 'schema_version "1" is not one'),
    ],
    ids=[
        "int-400-digits",
        "int-5000-digits",
        "nesting-100000",
        "nesting-70",
        "future-schema",
        "schema-string",
    ],
)
def test_hostile_but_valid_json_exits_two_in_one_line(tmp_path, content, message):
    """`python -m uncertainty_claims.report diff` given hostile but valid JSON (an integer of 400 or 5,000
    digits, nesting 100,000 deep, a schema_version from the future): exit 2 with one line
    naming the file and the problem. Bug fixed: a traceback with exit 1, the code of "a
    verdict moved", or a future schema read as if current (lib/report/diff.py `load`)."""
    good = write(tmp_path, "good.json", AUDIT)
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = run_diff(str(good), str(bad))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"error: {bad}")
    assert message in result.stderr


def test_a_huge_metadata_value_is_printed_cut(tmp_path):
    """`python -m uncertainty_claims.report diff` with a 200 MB metadata value: the value is cut to 200
    characters, with its length said. Bug fixed: it was printed whole (lib/report/diff.py)."""
    new = copy.deepcopy(AUDIT)
    new["metadata"]["device"]["kinds"] = "x" * 1_000_000
    result = run_diff(str(write(tmp_path, "a.json", AUDIT)), str(write(tmp_path, "b.json", new)))
    assert result.returncode == 0
    assert "... (1,000,000 characters)" in result.stdout
    assert len(result.stdout) < 2_000
