"""Claims written where their tests live (engine/claim_audit/engine/claim.py): what a body
returns, how it is run once per order, and the mistakes refused with a message."""

from __future__ import annotations

import contextlib
import inspect
import json

import numpy as np
import pytest
from claim_audit import (
    Claims,
    Orders,
    Region,
    fact,
    figure,
    over_seeds,
    satisfied,
    second_reading,
    within,
)
from claim_audit.engine.claim import PROPERTY, ClaimRecord, ClaimRefuted, run_claim
from claim_audit.render import markdown, table
from claim_audit.render.markdown import second_reading_notes
from fault_tools import run_audit_pytest, write_test_folder

claims = Claims("written-doc")


def _define(claim_id: str, published, **kw) -> None:
    """A claim whose test this module does not collect (the body is handed to run_claim)."""
    claims(claim_id, "S", f"statement of {claim_id}", published=published, **kw)(lambda: None)


for claim_id, published in [
    ("w-figure", "5.00"),
    ("w-pair", ("5.00", "7.0")),
    ("w-mean-sd", "2.0 ± 0.8"),
    ("w-mean", "2.0"),
    ("w-within", "> 4"),
    ("w-once", "same"),
    ("w-fact", "no change"),
]:
    _define(claim_id, published)


def judge(claim_id: str, body, **arguments) -> dict:
    """The record run_claim writes for `claim_id`, with `body` over `arguments`."""
    properties: list = []
    with contextlib.suppress(ClaimRefuted):  # a refuted claim is recorded, then raised
        run_claim(claims[claim_id], body, arguments, properties)
    (record,) = [json.loads(v) for name, v in properties if name == PROPERTY]
    return record


def orders(*values) -> Orders:
    return Orders({"faithful": values[0], **{f"o{i}": v for i, v in enumerate(values[1:])}})


def test_a_number_is_a_figure_judged_over_every_order():
    record = judge("w-figure", lambda x: x, x=orders(5.001, 4.999, 5.002))
    assert record["verdict"] == "holds"
    assert list(record["details"]["orders"]) == ["faithful", "o0", "o1"]
    assert judge("w-figure", lambda x: x, x=orders(6.0, 6.001, 5.999))["verdict"] == "refuted"


def test_a_published_tuple_takes_one_number_per_figure():
    assert judge("w-pair", lambda x: [x, x + 2], x=orders(5.0, 5.0))["verdict"] == "holds"
    with pytest.raises(ValueError, match="w-pair: 1 figures measured, 2 published"):
        judge("w-pair", lambda x: x, x=orders(5.0, 5.001))
    with pytest.raises(TypeError, match="one per published figure: 2"):
        judge("w-pair", lambda x: str(x), x=orders(5.0, 5.001))


def test_a_mean_and_sd_over_seeds_are_two_figures_with_the_ddof_chosen():
    seeds = [1.0, 2.0, 3.0]  # mean 2, population sd 0.816, sample sd 1
    record = judge("w-mean-sd", lambda s: over_seeds(s, ddof=0), s=orders(seeds, seeds))
    assert record["verdict"] == "holds"
    assert [f["published"] for f in record["details"]["figures"]] == ["2.0", "0.8"]
    assert record["details"]["per_seed"] == seeds and record["details"]["sd_ddof"] == 0
    sample = judge("w-mean-sd", lambda s: over_seeds(s, ddof=1), s=orders(seeds, seeds))
    assert sample["verdict"] == "refuted"  # 1.0 is not 0.8 where every order agrees
    assert judge("w-mean", lambda s: over_seeds(s, ddof=1), s=orders(seeds))["verdict"] == "holds"


def test_a_mean_and_sd_published_needs_the_values_over_seeds():
    with pytest.raises(ValueError, match=r"return over_seeds\(values, ddof=...\)"):
        judge("w-mean-sd", lambda s: float(np.mean(s)), s=orders([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="ddof must be 0"):
        over_seeds([1.0, 2.0], ddof=2)
    with pytest.raises(ValueError, match="needs more than 1 seeds"):
        over_seeds([1.0], ddof=1)


def test_figure_records_its_details_beside_the_figures():
    record = judge("w-pair", lambda x: figure([x, x + 2], per_seed=[1, 2]), x=orders(5.0, 5.0))
    assert (record["verdict"], record["details"]["per_seed"]) == ("holds", [1, 2])
    with pytest.raises(ValueError, match="1 figures measured, 2 published"):
        judge("w-pair", lambda x: figure(x), x=orders(5.0, 5.0))
    with pytest.raises(TypeError, match="a number or a sequence of numbers"):
        figure("5.0")


def test_the_published_text_sets_the_kind_a_body_returns():
    assert (claims["w-figure"].figure_count, claims["w-mean-sd"].figure_count) == (1, 2)
    assert (claims["w-pair"].figure_count, claims["w-within"].figure_count) == (2, 0)
    with pytest.raises(TypeError, match=r"returned Judgement.*it returns figures"):
        judge("w-figure", lambda x: within(x, Region(4.0)), x=orders(5.0, 5.0))
    with pytest.raises(TypeError, match=r"returned float.*it returns a Judgement"):
        judge("w-within", lambda x: x, x=orders(5.0, 5.0))
    with pytest.raises(ValueError, match="judged over every order"):
        claims("w-once-figure", "S", "judged once", published="1.0", once=True)(lambda: None)


def test_a_comparison_without_its_published_text_takes_the_claim_s():
    calm = orders(5.0, 5.01, 5.02, 4.99, 5.0)
    record = judge("w-within", lambda x: within(x, Region(4.0, closed=False)), x=calm)
    assert (record["published"], record["verdict"]) == ("> 4", "holds")
    straddles = judge("w-within", lambda x: within(x, Region(4.0)), x=orders(4.5, 3.9, 4.2))
    assert straddles["verdict"] == "inconclusive"  # three draws cannot tell a share


def test_a_body_without_orders_is_judged_once_and_other_fixtures_pass_as_they_are():
    record = judge("w-once", lambda n: satisfied(n == 3, measured=n), n=3)
    assert list(record["details"]["orders"]) == ["faithful"]
    mixed = judge("w-figure", lambda x, shift: x + shift, x=orders(4.0, 4.0), shift=1.0)
    assert mixed["verdict"] == "holds"


def test_orders_arguments_must_name_the_same_orders():
    a, b = orders(5.0, 5.0), Orders({"faithful": 5.0, "other": 5.0})
    with pytest.raises(ValueError, match="name different orders"):
        judge("w-figure", lambda a, b: a, a=a, b=b)


def test_a_body_returning_a_bool_is_an_error_not_a_verdict():
    with pytest.raises(TypeError, match="returned bool"):
        judge("w-within", lambda x: x > 4, x=orders(5.0))


def test_a_body_that_asks_for_any_args_is_refused():
    with pytest.raises(ValueError, match="names each fixture"):
        claims("w-bad-2", "S", "bad")(lambda **fixtures: None)


def test_a_claims_test_asks_for_its_bodys_fixtures_and_request_once():
    def body(request, x):
        return None

    test = claims("w-request", "S", "reads request", published="ok")(body)
    assert list(inspect.signature(test).parameters) == ["request", "x"]


def test_a_claim_id_defined_twice_is_refused():
    with pytest.raises(ValueError, match="defined twice"):
        _define("w-figure", "5.00")


def test_a_case_outside_each_is_a_claim_in_error(tmp_path):
    """A `claims.case(...)` given to a plain `pytest.mark.parametrize`: its test runs, but no
    claim is judged, so the claim ends in ERROR ("the test recorded nothing") and the run
    fails; it never reads as a verdict."""
    module = """
        import pytest
        from claim_audit import Claims

        claims = Claims("demo")

        @pytest.mark.parametrize("v", [claims.case("d-1", "S", "a case", 1, published="1")])
        def test_plain(v):
            assert v == 1
    """
    done = run_audit_pytest(write_test_folder(tmp_path, module), "--no-report")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "ERROR in d-1: the test recorded nothing" in done.stdout


@pytest.mark.parametrize(
    ("low", "high", "closed", "says"),
    [
        (3, 1, True, "holds no value"),
        (1, 1, False, "holds no value"),
        (float("nan"), 1, True, "low must be a number"),
        (0, "2", True, "high must be a number"),
        (True, 2, True, "low must be a number"),
    ],
)
def test_a_region_that_holds_no_value_is_refused(low, high, closed, says):
    """Bug fixed: Region(3, 1) was taken, printed "in [3, 1]", and refuted every claim judged
    against it; a NaN bound never held either."""
    with pytest.raises(ValueError, match=says):
        Region(low, high, closed=closed)
    assert Region(1, 1).contains(1) and Region(high=0, closed=False).contains(-1)


def test_orders_that_give_one_value_are_one_draw_worded_without_a_t_statistic():
    """14 orders, no digests, every one the same figure bit for bit or to float64 rounding
    (a spread of 2.3e-16): one draw, its 13 copies counted once, judged as reproduced to
    the printed digits, with no t statistic of float noise."""
    for spread in (0.0, 2.3e-16):
        values = [5.0 + spread * (i % 2) for i in range(14)]
        record = judge("w-figure", lambda x: x, x=orders(*values))
        (figure,) = record["details"]["figures"]
        assert (record["verdict"], figure["orders"], figure["t_score"]) == ("holds", 1, None)
        assert record["details"]["copies_by_value"] == 13
        assert sum("copy_of" in e for e in record["details"]["orders"].values()) == 13
    # Not float noise: 1e-4 apart, two draws, with their spread.
    two = judge("w-figure", lambda x: x, x=orders(5.0, 5.0001, 5.0))
    assert two["details"]["figures"][0]["orders"] == 2 and two["details"]["copies_by_value"] == 1


def test_copies_are_found_by_everything_a_body_returns():
    """A coarse figure equal in two orders whose other numbers differ is two draws."""
    record = judge(
        "w-within",
        lambda x: within(round(x), Region(4.0, closed=False), exact=x),
        x=orders(5.0, 5.1, 4.9, 5.2, 5.05),
    )
    assert "copies_by_value" not in record["details"]
    assert record["details"]["holds_in_orders"] == [5, 5]


def test_a_fact_holds_in_every_order_or_is_refuted_by_those_where_it_fails():
    """Never judged as a share of draws: two orders or forty, it holds or is refuted."""
    for n in (2, 40):
        record = judge("w-fact", lambda x: fact(x == x, measured=0.0), x=orders(*[1.0] * n))
        assert record["verdict"] == "holds" and record["details"]["holds_in_orders"] == [n, n]
    broken = judge("w-fact", lambda x: fact(x < 3, measured=x), x=orders(1.0, 2.0, 4.0))
    assert broken["verdict"] == "refuted" and broken["details"]["fails_in_orders"] == ["o1"]
    with pytest.raises(TypeError, match="a fact in every order or in none"):
        judge(
            "w-fact",
            lambda x: fact(True, measured=x) if x < 2 else satisfied(True, measured=x),
            x=orders(1.0, 3.0),
        )


REFUTED_MODULE = """
    import pytest
    from claim_audit import Claims, Orders, Region, figure, within

    claims = Claims("demo")

    @pytest.fixture
    def x():
        return Orders({"faithful": 1.0, "b": 1.0001, "c": 0.9999, "d": 1.0002})

    @claims("d-1", "S", "Three figures print 1.0, 2.0 and 5.0.", published=("1.0", "2.0", "5.0"))
    def test_figures(x):
        return figure([x, 2 * x, 2 * x])

    @claims("d-2", "S", "The ratio is below 0.5.", published="< 0.5")
    def test_threshold(x):
        return within(x, Region(high=0.5), name="ratio")
"""


def test_a_refuted_claims_failure_names_what_failed_without_the_engines_frames(tmp_path):
    """The failure of a refuted claim's test: the claim, the published figure that lay
    outside which interval (of the claim's three), or the effect that left its region, and no
    traceback through the engine's functions or the plugin's hook wrappers."""
    done = run_audit_pytest(write_test_folder(tmp_path, REFUTED_MODULE), "--no-report")
    assert done.returncode == 1, done.stdout + done.stderr
    failures = done.stdout.split("= FAILURES =")[1].split("CLAIMS AUDIT")[0]
    assert "ClaimRefuted: d-1 refuted: Three figures print 1.0, 2.0 and 5.0." in failures
    assert "published 5.0 lies outside [1.9" in failures and "(figure 3 of 3)" in failures
    assert "published 1.0 lies" not in failures and "published 2.0 lies" not in failures
    assert "'ratio' lies <= 0.5 in 0 of 4 draws (0.9999 to 1.0002)" in failures
    for frame in ("def run_claim", "timeouts.py", "claim.py", "yield"):
        assert frame not in failures, failures


def test_a_second_reading_is_gathered_over_every_order_and_judged_beside():
    """`second_reading(...)` beside a judgement: the record holds its words, region, value in
    each order, in how many it holds and its own verdict by the share rule, under its name;
    the claim's verdict is the first reading's."""
    _define("w-second", "< 2")
    record = judge(
        "w-second",
        lambda x: within(x, Region(high=2.0)).beside(
            strict=second_reading("negligible: below 1.0", x, Region(high=1.0))
        ),
        x=orders(0.99, 1.01, 0.98, 1.02),
    )
    assert record["verdict"] == "holds"
    assert "strict" not in record["details"]
    readings = record["details"]["second_readings"]
    assert readings["strict"].pop("share_interval")[0] < 0.1  # two of four: undecided
    assert readings == {
        "strict": {
            "reading": "negligible: below 1.0",
            "verdict": "inconclusive",
            "region": "<= 1",
            "faithful": 0.99,
            "values": {"faithful": 0.99, "o0": 1.01, "o1": 0.98, "o2": 1.02},
            "range_over_orders": [0.98, 1.02],
            "holds_in_orders": [2, 4],
        }
    }
    note = (
        "second reading (strict), negligible: below 1.0: inconclusive: <= 1 holds in 2 of 4 "
        "draws (0.98 to 1.02); not counted"
    )
    assert second_reading_notes(record["details"]) == [note]
    fields = {k: v for k, v in record.items() if k in ClaimRecord.__dataclass_fields__}
    terminal = "\n".join(table.render([ClaimRecord(**fields)], {}, width=200))
    assert note in terminal
    audit = {
        "claims": [record | {"expected_to_hold": True}],
        "summary": "1 claim",
        "metadata": {"cache": {}, "git": {}},
    }
    page = markdown.render(audit, [])  # in the statement's cell, "<" escaped
    assert "*Second reading (strict), negligible: below 1.0: inconclusive: &lt;= 1 holds in 2 of 4 draws (0.98 to 1.02); not counted.*" in page  # fmt: skip


def test_a_second_reading_must_be_the_same_in_every_order():
    _define("w-second-differs", "< 2")
    with pytest.raises(ValueError, match="every order returns the same reading"):
        judge(
            "w-second-differs",
            lambda x: within(x, Region(high=2.0)).beside(
                strict=second_reading("below x", x, Region(high=x))
            ),
            x=orders(0.99, 1.01),
        )
    with pytest.raises(ValueError, match="not a finite number"):
        second_reading("never", float("nan"), Region(high=1.0))
