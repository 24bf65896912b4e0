"""`python -m claim_audit diff OLD.json NEW.json`: verdicts, figures and metadata that moved."""

from __future__ import annotations

import copy
import json
import math
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from claim_audit.report import diff
from fault_tools import TIMEOUT_S

REPO = Path(__file__).resolve().parents[2]


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
    "schema_version": 2,
    "claims": [
        claim("c-1"),
        claim(
            "c-2",
            published="1.0, 2.0",
            tolerance="± 0.1, 0.2",
            details={"measured_values": [1.05, 2.1]},
        ),
        claim("c-3", published="ratio >= 2", tolerance="-", details={"ratio": 3.0}),
        claim(
            "c-4",
            details={
                "measured_value": 1.004,
                "orders": {"fwd": {"measured": 1.004}, "rev": {"measured": 1.006}},
            },
        ),
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


def run_engine(command: str, *args: str) -> subprocess.CompletedProcess:
    """`python -m claim_audit COMMAND ARGS...`, run as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "claim_audit", command, *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=REPO,
    )


def run_diff(*args: str) -> subprocess.CompletedProcess:
    return run_engine("diff", *args)


def test_same_file_exits_zero(tmp_path):
    path = write(tmp_path, "a.json", AUDIT)
    result = run_diff(str(path), str(path))
    assert result.returncode == 0, result.stderr
    assert "Claims: none changed" in result.stdout
    assert "Metadata: unchanged" in result.stdout


def test_changed_verdict_exits_one_and_is_shown(tmp_path):
    new = copy.deepcopy(AUDIT)
    new["claims"][0].update(verdict="refuted", measured="1.2", details={"measured_value": 1.2})
    result = run_diff(str(write(tmp_path, "a.json", AUDIT)), str(write(tmp_path, "b.json", new)))
    assert result.returncode == 1
    assert "Claims changed (1):" in result.stdout
    assert "c-1              holds -> refuted (measured 1.004 -> 1.2" in result.stdout
    assert "measured_value 1.004 -> 1.2 (new/old 1.195, tolerance 0.01)" in result.stdout


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
    assert f"c-9              holds, only in {tmp_path / 'b.json'}" in result.stdout
    assert f"c-1              holds, only in {tmp_path / 'a.json'}" in result.stdout


def test_figures_beyond_their_tolerance_are_listed_with_both_values(tmp_path):
    new = copy.deepcopy(AUDIT)
    new["claims"][0]["details"]["measured_value"] = 1.009  # moved 0.005 < 0.01: not listed
    new["claims"][1]["details"]["measured_values"] = [1.05, 2.45]  # [1] moved 0.35 > 0.2
    new["claims"][3]["details"]["orders"]["rev"]["measured"] = 1.03  # moved 0.024 > 0.01
    new["claims"][2]["details"]["ratio"] = 9.0  # not a measured figure: ignored
    changes = diff.compare(AUDIT, new)
    moved = {(m.claim_id, m.figure): (m.old, m.new, m.tolerance) for m in changes.moved}
    assert moved == {
        ("c-2", "measured_values[1]"): (2.1, 2.45, 0.2),
        ("c-4", "orders.rev.measured"): (1.006, 1.03, 0.01),
    }
    assert not changes.verdicts_moved
    old_path, new_path = write(tmp_path, "a.json", AUDIT), write(tmp_path, "b.json", new)
    result = run_diff(str(old_path), str(new_path))
    assert result.returncode == 3  # figures moved, no verdict changed
    assert "Claims changed (2):" in result.stdout
    assert (
        "c-2              measured_values[1] 2.1 -> 2.45 (new/old 1.167, tolerance 0.2)"
        in result.stdout
    )
    verbose = run_diff("-v", str(old_path), str(new_path))
    assert "Figures that moved beyond their tolerance (2):" in verbose.stdout
    assert "measured_values[1]     2.1 -> 2.45 (moved 0.35, tolerance 0.2)" in verbose.stdout
    assert run_diff("--verdicts-only", str(old_path), str(new_path)).returncode == 0


def test_figures_without_a_tolerance_and_new_orders_are_reported_apart():
    old = {"claims": [claim("c-1", tolerance="-", details={"measured_value": 1.0})]}
    new = {
        "claims": [
            claim(
                "c-1",
                tolerance="-",
                details={"measured_value": 1.5, "orders": {"fwd": {"measured": 1.5}}},
            )
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
        ("{not json", "cannot be read as JSON"),
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
    """`python -m claim_audit diff` given a missing file, not JSON, no `claims` list, a claim
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
    """`python -m claim_audit diff` with a figure that became NaN or infinite, or that a claim no
    longer records: listed as a move, exit 1. Bug fixed: it printed "none moved" and exited 0
    (engine/claim_audit/report/diff.py `_compare_figures`). A figure of an order the new run
    did not compute is no loss: the number of orders moved, shown as metadata."""
    new = copy.deepcopy(AUDIT)
    new["claims"][0]["details"]["measured_value"] = math.nan
    new["claims"][1]["details"]["measured_values"] = [math.inf, 2.1]
    del new["claims"][3]["details"]["orders"]["rev"]
    changes = diff.compare(AUDIT, new)
    assert not changes.verdicts_moved and changes.gate_fails
    assert changes.lost == [
        ("c-1", "measured_value", "1.004 -> nan"),
        ("c-2", "measured_values[0]", "1.05 -> inf"),
    ]
    assert changes.orders == {(2, 1): ["c-4"]}
    old_path = write(tmp_path, "a.json", AUDIT)
    result = run_diff(str(old_path), str(write(tmp_path, "b.json", new)))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "c-1              lost measured_value (1.004 -> nan)" in result.stdout
    assert "c-2              lost measured_values[0] (1.05 -> inf)" in result.stdout
    assert "orders per claim: 2 -> 1 (1 claim: c-4)" in result.stdout
    assert "Claims: none changed" not in result.stdout
    assert run_diff(str(write(tmp_path, "c.json", new)), str(old_path)).returncode == 0


@pytest.mark.fault
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"claims": [], "n": 1' + "0" * 399 + "}", "an integer of 400 digits"),
        ('{"claims": [], "n": ' + "9" * 5000 + "}", "an integer of 5000 digits"),
        ('{"claims": [], "deep": ' + "[" * 100_000 + "]" * 100_000 + "}", "recursion depth"),
        ('{"schema_version": 3, "claims": []}', "schema_version 3 is not one this diff reads"),
        ('{"schema_version": 1, "claims": []}', "schema_version 1 is not one this diff reads (2)"),
        ('{"schema_version": "1", "claims": []}', 'schema_version "1" is not one'),
    ],
    ids=[
        "int-400-digits",
        "int-5000-digits",
        "nesting-100000",
        "future-schema",
        "schema-1",
        "schema-string",
    ],
)
def test_hostile_but_valid_json_exits_two_in_one_line(tmp_path, content, message):
    """`python -m claim_audit diff` given hostile but valid JSON (an integer of 400 or 5,000
    digits, nesting 100,000 deep, a schema_version from the future or the past, whose
    figures were text): exit 2 with one line
    naming the file and the problem. Bug fixed: a traceback with exit 1, the code of "a
    verdict moved", or a future schema read as if current (engine/claim_audit/__main__.py `load`)."""
    good = write(tmp_path, "good.json", AUDIT)
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    result = run_diff(str(good), str(bad))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"error: {bad}")
    assert message in result.stderr


def test_a_huge_metadata_value_is_printed_cut(tmp_path):
    """`python -m claim_audit diff` with a 200 MB metadata value: the value is cut to 200
    characters, with its length said. Bug fixed: it was printed whole (engine/claim_audit/report/diff.py)."""
    new = copy.deepcopy(AUDIT)
    new["metadata"]["device"]["kinds"] = "x" * 1_000_000
    result = run_diff(str(write(tmp_path, "a.json", AUDIT)), str(write(tmp_path, "b.json", new)))
    assert result.returncode == 0
    assert "... (1,000,000 characters)" in result.stdout
    assert len(result.stdout) < 2_000


def ratio_claim(faithful: float = 3.39, verdict: str = "holds") -> dict:
    """A qualitative claim as the engine records it: its figure in each order, a number."""
    per_order = dict(zip(ORDERS, [faithful, *RATIOS[1:]], strict=True))
    return claim(
        "r-1",
        verdict,
        published="3 to 4",
        measured=f"{faithful:.4g}",
        tolerance="in [3, 4]",
        details={
            "holds_in_orders": [6, 6],
            "orders": {
                name: {"measured": value, "holds": True} for name, value in per_order.items()
            },
            "range_over_orders": [3.39, 3.827],
        },
    )


ORDERS = ["faithful", "scan", "twin-1", "twin-2", "twin-3", "twin-4"]
RATIOS = [3.39, 3.797, 3.536, 3.827, 3.542, 3.557]


def with_claims(*claims: dict) -> dict:
    return {**copy.deepcopy(AUDIT), "claims": list(claims)}


def test_a_qualitative_claims_figure_that_moved_is_seen(tmp_path):
    """`python -m claim_audit diff` where a qualitative claim's figure (printed
    as text in each order) moved from 3.39 to 12345 with its verdict kept: listed, exit 3;
    exit 0 with --verdicts-only. Bug fixed: only `measured_value(s)` were compared, so it
    printed "Figures: none moved beyond its tolerance." and exited 0 (engine/claim_audit/report/diff.py
    `figures`)."""
    old_path = write(tmp_path, "a.json", with_claims(ratio_claim()))
    new_path = write(tmp_path, "b.json", with_claims(ratio_claim(12345.0)))
    result = run_diff(str(old_path), str(new_path))
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Claims changed (1):" in result.stdout
    assert (
        "r-1              orders.faithful.measured 3.39 -> 12345 (new/old 3642, 3.64e+03-fold"
        in result.stdout
    )
    assert run_diff("--verdicts-only", str(old_path), str(new_path)).returncode == 0


def test_a_figure_in_each_order_has_the_gap_of_two_draws_as_tolerance():
    """A figure's tolerance in one order: t_{n-1}(1 - FIGURE_ALPHA/2) s sqrt(2) over the old
    orders' figures (s their sd). Just inside: not moved; just beyond: moved."""
    from claim_audit.engine.prediction import FIGURE_ALPHA
    from scipy import stats

    gap = stats.t.ppf(1 - FIGURE_ALPHA / 2, 5) * np.std(RATIOS, ddof=1) * math.sqrt(2)
    old = with_claims(ratio_claim())
    for shift, moved in ((0.98, False), (1.02, True)):
        new = copy.deepcopy(old)
        new["claims"][0]["details"]["orders"]["twin-1"]["measured"] = 3.536 + shift * gap
        changes = diff.compare(old, new)
        assert [m.figure for m in changes.moved] == (["orders.twin-1.measured"] if moved else [])
        assert not changes.gate_fails
    assert diff.figures(old["claims"][0])["orders.twin-1.measured"].tolerance == pytest.approx(gap)
    assert diff.draw_gap(0.5, 1) == 0.0  # one order: no spread to judge by


def test_valid_redraws_of_every_order_move_nothing():
    """Each order given another order's figure (a run in other valid float orders could draw
    them): nothing moves, so the gate does not cry wolf."""
    old = with_claims(ratio_claim())
    new = copy.deepcopy(old)
    orders = new["claims"][0]["details"]["orders"]
    values = [orders[name]["measured"] for name in ORDERS]
    for name, value in zip(ORDERS, values[1:] + values[:1], strict=True):
        orders[name]["measured"] = value
    changes = diff.compare(old, new)
    assert changes.moved == [] and not changes.gate_fails


def test_a_figure_whose_words_changed_is_listed_whole():
    """A figure in one order whose words changed ("prototypes=images: True" -> "False", a
    named number more or fewer): listed as a change of its printed form, and its numbers are
    not reported lost."""
    measured = {"W": [50, 784], "readouts": [[50, 10], [50, 10]], "prototypes=images": True}
    text = "W: 50, 784, readouts: 50, 10, 50, 10, prototypes=images: True"
    entry = {"measured": measured, "printed": text, "holds": True}
    one = claim("q-1", published="784->50->10", tolerance="-", details={"orders": {"faithful": entry}})  # fmt: skip
    shorter = {k: v for k, v in measured.items() if k != "W"}
    for changed, printed in (
        (measured | {"prototypes=images": False}, text.replace("True", "False")),
        (shorter, text.replace("W: 50, 784, ", "")),
    ):
        other = copy.deepcopy(one)
        other["details"]["orders"]["faithful"] |= {"measured": changed, "printed": printed}
        changes = diff.compare(with_claims(one), with_claims(other))
        assert [(m.figure, m.old, m.new, m.tolerance) for m in changes.moved] == [
            ("orders.faithful", text, printed, None)
        ]
        assert changes.lost == [] and not changes.gate_fails
        assert f'-> "{printed}" (changed)' in "\n".join(diff.render(changes, "a", "b"))


def figure_claim(low: float = 2.4427, high: float = 2.4527, orders: int = 8) -> dict:
    """A figure claim as the engine records it: measured value, prediction interval, orders."""
    return claim(
        "f-1",
        published="2.45",
        measured="2.448",
        tolerance=f"[{low}, {high}]",
        details={
            "figures": [
                {
                    "published": "2.45",
                    "interval": [low, high],
                    "mean_over_orders": 2.4477,
                    "sd_over_orders": 1.5e-6,
                    "orders": orders,
                }
            ],
            "measured_value": 2.44772,
            "orders": {"faithful": {"measured": 2.44772}, "scan": {"measured": 2.44771}},
        },
    )


def test_a_figure_claims_interval_and_orders_are_compared():
    """A figure claim's prediction interval (the verdict is the published figure against it)
    whose end moved by more than the figure's tolerance (the gap of two draws plus the
    published figure's half unit, 0.005 here), or whose number of orders changed: listed."""
    tolerance = diff.draw_gap(1.5e-6, 8) + 0.005
    assert diff.figures(figure_claim())["measured_value"].tolerance == pytest.approx(tolerance)
    changes = diff.compare(with_claims(figure_claim()), with_claims(figure_claim(high=2.47, orders=12)))  # fmt: skip
    assert [(m.figure, m.old, m.new) for m in changes.moved] == [
        ("figures[0].interval[1]", 2.4527, 2.47),
        ("figures[0].orders", 8, 12),
    ]
    near = diff.compare(with_claims(figure_claim()), with_claims(figure_claim(high=2.4547)))
    assert near.moved == []


def test_a_threshold_claims_effects_are_compared():
    """A threshold claim's effect (`details.effects`, its figure in each order in
    `details.orders`): a figure beyond the gap of two draws over its orders is listed once, as
    its order's, a changed region as a changed definition; the verdict 'inconclusive' is a
    verdict like any other."""

    def effect_claim(faithful: float, region: str, verdict: str = "holds") -> dict:
        values = [faithful, 3.797, 3.536, 3.827]
        effect = {
            "effect": "ECE, Yat / ReLU",
            "region": region,
            "faithful": faithful,
            "values": values,
            "range": [min(values), max(values)],
            "in_region": [4, 4],
            "scale": "linear",
        }
        orders = {o: {"measured": v} for o, v in zip(ORDERS, values, strict=False)}
        details = {"effects": [effect], "orders": orders}
        return claim("t-1", verdict, tolerance=region, details=details)

    old = with_claims(effect_claim(3.39, "in [3, 4]"))
    changes = diff.compare(old, with_claims(effect_claim(12345.0, "in [3, 5]")))
    assert [m.figure for m in changes.moved] == ["orders.faithful.measured"]
    assert [(key, a, b) for _, key, a, b in changes.definitions] == [
        ("tolerance", "in [3, 4]", "in [3, 5]"),
        ("effects[0].region", "in [3, 4]", "in [3, 5]"),
    ]
    sd = float(np.std([3.39, 3.797, 3.536, 3.827], ddof=1))
    tolerance = diff.figures(old["claims"][0])["orders.faithful.measured"].tolerance
    assert tolerance == pytest.approx(diff.draw_gap(sd, 4))
    moved = diff.compare(old, with_claims(effect_claim(3.39, "in [3, 4]", "inconclusive")))
    assert moved.verdicts_moved


@pytest.mark.fault
def test_hostile_figure_records_are_compared_without_a_traceback(tmp_path):
    """`python -m claim_audit diff` given figure records no engine writes (a
    published figure of 1e999, an sd that is text, a count that is a bool, an interval with a
    string, effects that are not objects, figures in each order spanning float64):
    compared as far as they are figures, listed, no traceback."""
    hostile = claim(
        "h-1",
        details={
            "figures": [
                {
                    "published": "1e999",
                    "interval": [1.0, "a"],
                    "sd_over_orders": "x",
                    "orders": True,
                }
            ],
            "effects": [1, {"values": "x", "sd_over_orders": -1.0, "faithful": 2.0}],
            "orders": {
                "faithful": {"measured": [1e308, 1e308]},
                "scan": {"measured": [-1e308, -1e308]},
            },
        },
    )
    moved = copy.deepcopy(hostile)
    moved["details"]["orders"]["faithful"]["measured"] = [5, 1e308]
    moved["details"]["effects"][1]["faithful"] = 3.0
    old_path = write(tmp_path, "a.json", with_claims(hostile))
    result = run_diff(str(old_path), str(write(tmp_path, "b.json", with_claims(moved))))
    assert result.returncode == 3, result.stdout + result.stderr
    assert (
        "orders.faithful.measured[0] 1e+308 -> 5 (new/old 5e-308, 2e+307-fold, tolerance 0.01)"
        in result.stdout
    )
    assert "Traceback" not in result.stderr
    assert run_diff(str(old_path), str(old_path)).returncode == 0


def orders_claim(faithful: str) -> dict:
    """A qualitative claim's figure in two orders, recorded as text."""
    orders = {"faithful": {"measured": faithful}, "scan": {"measured": "1, 2"}}
    return claim("q-1", tolerance="-", details={"orders": orders})


@pytest.mark.fault
def test_a_nul_in_a_printed_figure_is_compared_without_a_traceback(tmp_path):
    """A NUL character in a per-order figure text (legal JSON "\\u0000"): compared as text,
    listed as changed (exit 3), and equal to itself (exit 0). Bug fixed: a ValueError
    traceback, exit 1, the code of a moved verdict (engine/claim_audit/report/diff.py)."""
    old = write(tmp_path, "a.json", with_claims(orders_claim("1, \u0000")))
    new = write(tmp_path, "b.json", with_claims(orders_claim("1, 3")))
    result = run_diff(str(old), str(new))
    assert (result.returncode, result.stderr) == (3, ""), result.stdout + result.stderr
    assert 'q-1              orders.faithful "1, \\u0000" -> "1, 3" (changed)' in result.stdout
    assert run_diff(str(old), str(old)).returncode == 0


ESCAPES = "\x1b[2K\r\x1b[1A\x9b2J\x08\u202e"  # erase the line, go up, clear, bidi override


@pytest.mark.fault
def test_terminal_escapes_in_an_audit_are_printed_escaped(tmp_path):
    """Escape sequences, "\\r", a backspace or a bidi override in an audit.json's claim ids,
    documents, sections, verdicts, published figures and metadata (keys and values) reach the
    terminal written out as Python escapes, so a moved verdict cannot be erased or
    overwritten. Bug fixed: they were printed raw (engine/claim_audit/__main__.py
    `printable`)."""
    hostile = claim(
        f"c{ESCAPES}",
        "holds" + ESCAPES,
        document=ESCAPES,
        section=ESCAPES,
        published=ESCAPES,
        details={},
    )
    old = with_claims(claim("c-1"), hostile, copy.deepcopy(hostile) | {"id": "only-old"})
    new = with_claims(claim("c-1", "refuted"), hostile | {"verdict": "refuted", "published": "2"})
    old["metadata"], new["metadata"] = {"k": "v"}, {"k": ESCAPES, ESCAPES: 1}
    result = run_diff(str(write(tmp_path, "a.json", old)), str(write(tmp_path, "b.json", new)))
    assert result.returncode == 1, result.stdout + result.stderr
    assert not [ch for ch in result.stdout if not ch.isprintable() and ch != "\n"]
    assert "c\\x1b[2K\\r\\x1b[1A\\x9b2J\\x08\\u202e" in result.stdout
    assert "c-1              holds -> refuted" in result.stdout
    bad = tmp_path / "c\x1b[2K\r.json"  # an artifact's name, as downloaded
    bad.write_text("not json")
    refused = run_diff(str(bad), str(bad))
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert not [ch for ch in refused.stderr if not ch.isprintable() and ch != "\n"]


@pytest.mark.fault
def test_a_moved_dot_a_changed_definition_and_a_flipped_expectation_are_seen(tmp_path):
    """Metadata that only moves a dot between keys ({"a.b": 1} -> {"a": {"b": 1}}) is a
    change; a changed statement, document or section is listed; an `expected_to_hold` that
    flips (a finding recorded or dropped) exits 1. Bugs fixed: the dotted keys read alike and
    the change was hidden, the statement, document and section were not compared, and a
    flipped expectation exited 0 (engine/claim_audit/report/diff.py `_flatten`, `compare`,
    `AuditDiff.gate_fails`)."""
    old = with_claims(claim("c-1"))
    old["metadata"] = {"versions": {"numpy.linalg": "a"}}
    moved = copy.deepcopy(old)
    moved["metadata"] = {"versions": {"numpy": {"linalg": "a"}}}
    changes = diff.compare(old, moved)
    assert sorted(key for key, _, _ in changes.metadata) == [
        'versions."numpy.linalg"',
        "versions.numpy.linalg",
    ]
    redefined = with_claims(claim("c-1", statement="another", document="d2", section="T"))
    assert sorted(key for _, key, _, _ in diff.compare(old, redefined).definitions) == [
        "document",
        "section",
        "statement",
    ]
    flipped = with_claims(claim("c-1", expected_to_hold=False))
    result = run_diff(str(write(tmp_path, "a.json", old)), str(write(tmp_path, "b.json", flipped)))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "c-1              expected_to_hold: true -> false" in result.stdout


def test_the_engine_command_is_the_one_spelling_and_its_readme_documents_it():
    """`python -m claim_audit diff` is the engine's one spelling of the command (no second
    `python -m claim_audit.report`), and the engine's own README shows it in CI, with where
    the baseline comes from and the exit codes."""
    second = subprocess.run(
        [sys.executable, "-m", "claim_audit.report", "diff", "a.json", "b.json"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=REPO,
    )
    assert second.returncode != 0 and "claim_audit.report" in second.stderr
    readme = (REPO / "engine" / "README.md").read_text()
    assert "python -m claim_audit diff" in readme and "baseline" in readme
    assert "claim_audit.report diff" not in readme
    for code in "0123":
        assert f"| {code} |" in readme


def threshold_claim(values: list[float], holds: int, reading: str = "'small': below 0.02") -> dict:
    """A threshold claim as the engine records it, over len(values) orders."""
    names = ["faithful", *(f"float32-{k}" for k in range(len(values) - 1))]
    effect = {
        "effect": "ECE",
        "region": "< 0.02",
        "scale": "linear",
        "faithful": values[0],
        "values": values,
        "range": [min(values), max(values)],
        "in_region": [holds, len(values)],
    }
    orders = {
        name: {"measured": v, "holds": v < 0.02} for name, v in zip(names, values, strict=True)
    }
    details = {
        "reading": reading,
        "holds_in_orders": [holds, len(values)],
        "share_interval": [0.0, 0.6],
        "share_method": "margins",
        "copies": 0,
        "effects": [effect],
        "orders": orders,
        "range_over_orders": [min(values), max(values)],
    }
    return claim("calib-7", "inconclusive", published="< 0.02", measured=f"{values[0]:.4g}", tolerance="< 0.02", details=details)  # fmt: skip


def test_a_several_fold_move_is_seen_whatever_the_old_spread(tmp_path):
    """A figure that moved six-fold (0.08566 -> 0.01343, holding in 0/3 then 3/3 orders) with
    the same verdict: listed as moved, with its fold, exit 3, though the old run's three
    orders spread so wide that the gap of two draws exceeds the move. A move inside the
    range of either run's orders is not several-fold. Bug fixed: "Figures: none moved beyond
    its tolerance." and exit 0."""
    old = with_claims(threshold_claim([0.08566, 0.03, 0.3], 0))
    new = with_claims(threshold_claim([0.01343, 0.0131, 0.0138], 3))
    changes = diff.compare(old, new)
    moved = {m.figure: m for m in changes.moved}
    assert moved["orders.faithful.measured"].fold == pytest.approx(0.08566 / 0.01343)
    assert moved["orders.faithful.measured"].tolerance > 0.08566 - 0.01343  # the old spread
    old_path, new_path = write(tmp_path, "a.json", old), write(tmp_path, "b.json", new)
    result = run_diff(str(old_path), str(new_path))
    assert result.returncode == 3, result.stdout + result.stderr
    assert (  # the most-moved of its three orders' figures, the others counted
        "calib-7          orders.float32-1.measured 0.3 -> 0.0138 (new/old 0.046, 21.7-fold "
        "beyond both runs' orders, tolerance 14.2538); 2 more figures moved" in result.stdout
    )
    verbose = run_diff("--verbose", str(old_path), str(new_path)).stdout
    assert (
        "0.08566 -> 0.01343 (moved 0.07223, 6.38-fold beyond both runs' orders, tolerance"
        in verbose
    )
    overlapping = with_claims(threshold_claim([0.01343, 0.0131, 0.04], 2))
    assert diff.compare(old, overlapping).moved == []
    assert diff.several_fold(diff.Figure(1.0, None, span=(0.9, 1.1)), diff.Figure(-1.0, None, span=(-1.1, -0.9))) == math.inf  # fmt: skip


def test_an_effect_its_old_orders_agreed_on_is_listed_for_any_move(tmp_path):
    """engine/README.md: an effect has no printed digits, so its tolerance is the old orders'
    spread alone; where every old order computed it alike, a move of 1e-4 is listed and the
    diff exits 3 (found by the trial on scikit-learn's calibration curves)."""
    old = with_claims(threshold_claim([0.0100] * 3, 3))
    new = with_claims(threshold_claim([0.0101] * 3, 3))
    moved = {m.figure: m for m in diff.compare(old, new).moved}
    assert moved["orders.faithful.measured"].tolerance < 1e-12
    result = run_diff(str(write(tmp_path, "a.json", old)), str(write(tmp_path, "b.json", new)))
    assert result.returncode == 3, result.stdout + result.stderr
    assert "orders.faithful.measured 0.01 -> 0.0101" in result.stdout


def test_a_changed_reading_or_region_is_a_changed_definition_not_a_moved_figure():
    """A qualitative claim whose reading, region or tolerance changed: listed with the
    published figure, tolerance and statement changes, not as moved figures."""
    values = [0.01343, 0.0131, 0.0138]
    old = threshold_claim(values, 3)
    new = threshold_claim(values, 3, reading="'small': below 0.03")
    new["tolerance"] = new["details"]["effects"][0]["region"] = "< 0.03"
    changes = diff.compare(with_claims(old), with_claims(new))
    assert changes.moved == [] and not changes.gate_fails
    assert [key for _, key, _, _ in changes.definitions] == [
        "tolerance",
        "reading",
        "effects[0].region",
    ]
    text = "\n".join(diff.render(changes, "a", "b"))
    assert "reading: 'small': below 0.02 -> 'small': below 0.03" in text
    assert sum("calib-7" in line for line in text.splitlines()) == 1


def test_more_orders_move_the_metadata_not_the_figures(tmp_path):
    """`--orders 3` then `--orders 6`: the shared orders' figures are compared, the new
    orders', the interval ends and the count are not; one metadata line says 3 -> 6; exit 0.
    Bug fixed: exit 3 with "figures[0].orders 3 -> 6" and a line per new order."""
    old = with_claims(threshold_claim([0.01343, 0.0131, 0.0138], 3), figure_claim(orders=3))
    new = with_claims(
        threshold_claim([0.01343, 0.0131, 0.0138, 0.0133, 0.0135, 0.0136], 6),
        figure_claim(low=2.4470, high=2.4480, orders=6),
    )
    new["claims"][1]["details"]["orders"] |= {f"twin-{k}": {"measured": 2.4477} for k in range(4)}  # fmt: skip
    changes = diff.compare(old, new)
    assert (changes.moved, changes.figures_only_in_one, changes.lost) == ([], [], [])
    assert changes.orders == {(3, 6): ["calib-7"], (2, 6): ["f-1"]}
    result = run_diff(str(write(tmp_path, "a.json", old)), str(write(tmp_path, "b.json", new)))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "orders per claim: 3 -> 6 (1 claim: calib-7)" in result.stdout
    assert "new figures" not in result.stdout


def test_a_closed_pipe_ends_the_diff_quietly(tmp_path):
    """`python -m claim_audit diff OLD NEW | head -1`: no BrokenPipeError traceback, and the
    exit status is still the diff's. Bug fixed: a traceback on stderr."""
    new = copy.deepcopy(AUDIT)
    new["metadata"]["versions"] = {f"package-{k}": "1.0" for k in range(20_000)}
    old_path, new_path = write(tmp_path, "a.json", AUDIT), write(tmp_path, "b.json", new)
    command = f"{shlex.quote(sys.executable)} -m claim_audit diff {old_path} {new_path} | head -1; exit ${{PIPESTATUS[0]}}"  # fmt: skip
    result = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=REPO
    )
    assert result.stdout == f"old: {old_path}\n"
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr
    assert result.returncode == 0, result.stderr


def test_a_six_fold_move_of_one_claims_figures_is_one_line_naming_its_ratio(tmp_path):
    """Every figure of one claim moved six-fold (its figure in each of 8 orders, its measured
    figure and its prediction interval): the diff prints one line naming the claim, with
    its most-moved figure old -> new and the ratio, the other moves counted; --verbose
    lists every order's figure."""
    values = [0.0120, 0.0121, 0.0119, 0.0122, 0.0118, 0.0120, 0.0121, 0.0119]
    old = with_claims(threshold_claim(values, 8), figure_claim(orders=8))
    new = with_claims(threshold_claim([6 * v for v in values], 0), figure_claim(low=6 * 2.4427, high=6 * 2.4527, orders=8))  # fmt: skip
    new["claims"][0]["verdict"] = "refuted"
    new["claims"][1]["details"] |= {"measured_value": 6 * 2.44772}
    for entry in new["claims"][1]["details"]["orders"].values():
        entry["measured"] *= 6
    old_path, new_path = write(tmp_path, "a.json", old), write(tmp_path, "b.json", new)
    result = run_diff(str(old_path), str(new_path))
    assert result.returncode == 1, result.stdout + result.stderr
    for claim_id in ("calib-7", "f-1"):
        naming = [line for line in result.stdout.splitlines() if claim_id in line]
        assert len(naming) == 1, result.stdout
        assert "new/old 6, 6-fold" in naming[0], naming[0]
    (calib,) = [line for line in result.stdout.splitlines() if "calib-7" in line]
    assert "inconclusive -> refuted" in calib and "7 more figures moved" in calib
    verbose = run_diff("--verbose", str(old_path), str(new_path)).stdout
    assert sum("calib-7" in line for line in verbose.splitlines()) >= 9  # each order's own


def robustness(holding: int | None, seeds: list[int] | None) -> dict:
    """audit.json's robustness section: claim c-1 on the published seed, and on a sweep."""
    claim = {"published": {"seeds": [0], "holds": True}}
    if holding is not None:
        claim["sweep"] = {"holding": holding, "total": 10, "label": "fragile", "seeds": seeds}
    return {"published_seeds": [0], "sweep_seeds": seeds, "claims": {"c-1": claim}}


def test_a_sweeps_changes_are_seen(tmp_path):
    """A claim whose sweep over other seeds went from 8/10 to 5/10 seeds: one line naming
    it, exit 3 (no verdict moved, the sweep did); a run with `--seeds` against one without:
    the sweep's seeds as changed metadata, exit 3, not 0; --verdicts-only: 0."""
    swept = list(range(10))
    old = {**copy.deepcopy(AUDIT), "robustness": robustness(8, swept)}
    new = {**copy.deepcopy(AUDIT), "robustness": robustness(5, swept)}
    unswept = {**copy.deepcopy(AUDIT), "robustness": robustness(None, None)}
    paths = {name: write(tmp_path, f"{name}.json", a) for name, a in [("old", old), ("new", new), ("unswept", unswept)]}  # fmt: skip
    result = run_diff(str(paths["old"]), str(paths["new"]))
    assert result.returncode == 3, result.stdout + result.stderr
    assert "c-1              seeds holding 8/10 (fragile) -> 5/10 (fragile)" in result.stdout
    for a, b in (("unswept", "old"), ("old", "unswept")):
        result = run_diff(str(paths[a]), str(paths[b]))
        assert result.returncode == 3, result.stdout + result.stderr
        shown = ("none", "0-9 (10 seeds)") if a == "unswept" else ("0-9 (10 seeds)", "none")
        assert f"sweep seeds (--seeds): {shown[0]} -> {shown[1]}" in result.stdout
        assert run_diff("--verdicts-only", str(paths[a]), str(paths[b])).returncode == 0
    assert run_diff(str(paths["unswept"]), str(paths["unswept"])).returncode == 0


def run_accept(*args: str) -> subprocess.CompletedProcess:
    return run_engine("accept", *args)


def test_accept_makes_a_complete_run_the_baseline(tmp_path):
    """`python -m claim_audit accept NEW BASELINE`: NEW's bytes become BASELINE/audit.json
    (a folder, made if need be) or the .json named, replacing the old baseline whole, and
    diff against it then finds nothing."""
    new = copy.deepcopy(AUDIT)
    new["claims"][0]["verdict"] = "refuted"
    run = write(tmp_path, "run.json", new)
    baseline = tmp_path / "audit-baseline"
    done = run_accept(str(run), str(baseline))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (baseline / "audit.json").read_bytes() == run.read_bytes()
    assert "accepted" in done.stdout and str(baseline / "audit.json") in done.stdout
    assert run_diff(str(baseline / "audit.json"), str(run)).returncode == 0
    named = tmp_path / "base.json"
    named.write_text(json.dumps(AUDIT))
    assert run_accept(str(run), str(named)).returncode == 0
    assert named.read_bytes() == run.read_bytes()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".audit-")] == []


@pytest.mark.fault
@pytest.mark.parametrize(
    ("content", "says"),
    [
        ({**AUDIT, "partial": ["-k was given"]}, "is a partial run (-k was given)"),
        ("not json", "cannot be read as JSON"),
        ({"schema_version": 1, "claims": []}, "schema_version 1 is not one"),
    ],
    ids=["partial", "not-json", "old-schema"],
)
def test_accept_refuses_what_is_no_complete_audit(tmp_path, content, says):
    """A partial run, a file that is no audit, or an audit of another schema: exit 2, one
    line on stderr, and the baseline as it was."""
    run = tmp_path / "run.json"
    run.write_text(content if isinstance(content, str) else json.dumps(content))
    baseline = write(tmp_path, "baseline.json", AUDIT)
    before = baseline.read_bytes()
    done = run_accept(str(run), str(baseline))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and says in done.stderr, done.stderr
    assert done.stderr.startswith("error: not accepted:") and done.stdout == ""
    assert baseline.read_bytes() == before
