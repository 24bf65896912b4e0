"""The claim engine's verdicts (engine/claim_audit/engine/claim.py): a figure claim and a threshold claim
judged over all orders at once by prediction intervals, any other qualitative claim in each
order."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from claim_audit import Claims, Region, figure, satisfied, within
from claim_audit.engine.claim import PROPERTY, ClaimRefuted, ClaimSpec, Orders, run_claim
from claim_audit.engine.prediction import (
    FIGURE_ALPHA,
    detectable_shift,
    half_unit,
    judge_figure,
    orders_to_conclude,
    t_quantile,
)
from claim_audit.engine.verdict import Judgement, Threshold

claims = Claims("fv-doc")
BODIES: dict[str, Callable] = {}  # each claim's body by id, as its test runs it


def claim(claim_id: str, *args: Any, **kw: Any) -> Callable[[Callable], Callable]:
    """Define a claim of fv-doc and keep its body: its test is not collected here, so `check`
    hands the body its orders (one order's value `v`)."""

    def define(body: Callable) -> Callable:
        BODIES[claim_id] = body
        return claims(claim_id, *args, **kw)(body)

    return define


claim("fv-figure", "S", "prints 5.00", published="5.00")(lambda v: v)
claim("fv-pair", "S", "prints 5.00 and 7.0", published=("5.00", "7.0"))(lambda v: [v, v + 2])
claim("fv-qual", "S", "above 5", published="> 5")(lambda v: satisfied(v > 5, measured=v))
claim("fv-threshold", "S", "above 5", published="> 5")(
    lambda v: within(v, Region(5.0, closed=False))
)
claim("fv-busy", "S", "fast", published="< 1 s")(
    lambda v: satisfied(v < 1, measured=v, inconclusive="the machine was busy" if v < 0 else None)
)
claim("fv-mixed", "S", "mixed", published="5.00")(
    lambda v: figure(v) if v > 5 else satisfied(True, measured=v)
)


def orders(*values: float) -> Orders[float]:
    return Orders({"faithful": values[0], **{f"o{i}": v for i, v in enumerate(values[1:])}})


def check(claim_id: str, results: Orders) -> tuple[dict | None, Exception | None]:
    """The record of `claim_id`'s body judged over `results` (its orders), and what it raised."""
    properties: list = []
    error = None
    try:
        run_claim(claims[claim_id], BODIES[claim_id], {"v": results}, properties)
    except (ClaimRefuted, TypeError) as caught:
        error = caught
    records = [json.loads(v) for name, v in properties if name == PROPERTY]
    return (records[0] if records else None), error


CHAOTIC = (4.90, 5.10, 4.95, 5.05, 5.00, 4.98, 5.02, 5.08)  # sd ~ 0.07, mean ~ 5.01


def test_a_published_figure_among_its_orders_holds_with_its_interval():
    record, error = check("fv-figure", orders(*CHAOTIC))
    assert error is None and record["verdict"] == "holds"
    (figure,) = record["details"]["figures"]
    expected = judge_figure(CHAOTIC, "5.00")
    assert figure["interval"] == [expected.low, expected.high]
    assert figure["orders"] == len(CHAOTIC) and 0 < figure["p_value"] <= 1
    assert record["tolerance"].startswith("[") and record["measured"] == "4.9"


def test_a_published_figure_far_outside_its_orders_is_refuted():
    shifted = tuple(v + 2.0 for v in CHAOTIC)  # some 30 sds away
    record, error = check("fv-figure", orders(*shifted))
    assert isinstance(error, ClaimRefuted) and record["verdict"] == "refuted"
    assert record["details"]["figures"][0]["p_value"] < FIGURE_ALPHA


def test_orders_that_disagree_never_make_a_figure_claim_sensitive():
    """The orders' spread is the distribution the figure is judged against: a figure among
    widely spread orders is never sensitive; where the interval is wider than half the
    figure either way it cannot check it, and the claim is inconclusive, never a pass."""
    wide = (4.5, 5.5, 4.8, 5.2, 5.1, 4.9)
    record, error = check("fv-figure", orders(*wide))
    assert error is None and record["verdict"] == "inconclusive"
    assert "holds_in_orders" not in record["details"]
    (figure,) = record["details"]["figures"]
    low, high = figure["interval"]
    assert figure["verdict"] == "inconclusive" and low > 0 and (high - low) / 2 > 2.5
    assert record["details"]["orders_to_conclude"] == figure["orders_to_conclude"] > len(wide)


def test_an_interval_that_holds_zero_is_inconclusive_and_more_orders_would_conclude():
    spread = (4.2, 5.8, 4.68, 5.32, 5.16, 4.84)  # sd 0.55
    verdict = judge_figure(spread, "5.00")
    assert verdict.low < 0 < verdict.high and verdict.verdict == "inconclusive"
    needed = verdict.orders_to_conclude
    assert needed is not None
    # At that many orders (mean and sd as measured) the half width fits inside |mean|
    # and half the figure; one order fewer, it does not.
    half = lambda n: float(t_quantile(n)) * verdict.sd + half_unit("5.00")  # noqa: E731
    assert half(needed) < 2.5 <= half(needed - 1)
    # A spread so wide that even unbounded orders leave the interval over half the figure.
    assert orders_to_conclude(5.0, 2.0, half_unit("5.00"), 5.0) is None


def test_a_published_zero_is_checked_to_one_unit_of_its_last_digit():
    """A published 0 has no size for "± 50% of it": its interval is conclusive only within
    one unit of its last printed digit, the smallest figure the document could have printed
    instead. Bug fixed: any interval "checked" a 0, so "0.00" held against orders spread
    over ± 0.8, a claim that could not fail."""
    spread = (0.0, 0.0001, -0.0001, 0.05, -0.05, 0.03)
    verdict = judge_figure(spread, "0.00")
    # No number of orders pins it: the spread itself is wider than 0.01, so it is unpinned.
    assert verdict.holds and verdict.verdict == "unpinned" and not verdict.pinnable
    assert (verdict.high - verdict.low) / 2 > 2 * half_unit("0.00")
    assert verdict.orders_to_conclude is None
    exact = judge_figure((0.001, 0.001, 0.001), "0.00")  # reproduced to the printed digits
    assert exact.verdict == "holds" and exact.orders_to_conclude == 1
    calm = (0.0, 0.0001, -0.0001, 0.00005, -0.00005, 0.0)  # sd 7e-5: a few orders conclude
    assert judge_figure(calm, "0.00").verdict == "holds"
    assert judge_figure(calm, "0.0000").verdict == "unpinned"  # its spread is 1.4 units wide
    near = (0.03, 0.0305, 0.0295, 0.0302, 0.0298, 0.0301, 0.0299, 0.03)  # 0.03, sd 3e-4
    assert judge_figure(near, "0.00").verdict == "refuted"


def test_the_power_reported_is_the_simulated_rate_of_catching_a_shift():
    """The reported shift is caught with probability 0.8: checked against the noncentral t
    (printing's half unit negligible), which the simulation does not use."""
    from claim_audit.engine.prediction import power

    sd, n = 0.07, 8
    shift = detectable_shift(sd, n, slack=1e-9)
    assert power(shift / sd, n) == pytest.approx(0.8, abs=0.01)
    verdict = judge_figure(CHAOTIC, "5.00")
    assert verdict.detectable == pytest.approx(
        detectable_shift(verdict.sd, 8, half_unit("5.00")) / 5.0
    )
    assert verdict.to_json()["relative_shift_caught_0.8"] == verdict.detectable


def test_a_threshold_claim_is_judged_by_the_share_of_draws_and_their_margins():
    """Six draws above 5 by two or three of their sds: too few to show that 4 in 5 valid
    computations give the claim, so inconclusive, with the draws that would conclude it;
    the same draws far above hold, far below are refuted."""
    close = (5.3, 5.5, 5.2, 5.6, 5.4, 5.35)
    record, error = check("fv-threshold", orders(*close))
    assert error is None and record["details"]["holds_in_orders"] == [6, 6]
    assert record["verdict"] == "inconclusive" and record["details"]["draws_to_conclude"] > 6
    (effect,) = record["details"]["effects"]
    assert effect["in_region"] == [6, 6] and effect["range"] == [5.2, 5.6]
    far = tuple(v + 10 for v in close)
    record, _ = check("fv-threshold", orders(*far))
    assert record["verdict"] == "holds" and record["details"]["share_interval"][0] >= 0.8
    below = tuple(v - 10 for v in close)
    record, error = check("fv-threshold", orders(*below))
    assert record["verdict"] == "refuted" and isinstance(error, ClaimRefuted)


def test_a_claim_that_holds_in_about_half_the_draws_is_sensitive():
    """Confidently between 'almost never' and 'almost always': the claim depends on the
    order; never held or refuted on one machine's luck."""
    values = [5.0 + 0.1 * ((i % 2) * 2 - 1) * (1 + i / 40) for i in range(40)]
    record, error = check("fv-threshold", orders(*values))
    assert error is None and record["details"]["holds_in_orders"] == [20, 40]
    assert record["verdict"] == "sensitive"
    low, high = record["details"]["share_interval"]
    assert 0.1 < low < 0.5 < high < 0.9


def test_a_threshold_claim_whose_draws_disagree_is_neither_held_nor_refuted():
    crossing = (5.3, 5.5, 4.95, 5.6, 5.4, 5.35)
    assert check("fv-threshold", orders(*crossing))[0]["verdict"] == "inconclusive"


def test_a_threshold_judgement_must_hold_exactly_when_its_thresholds_do():
    with pytest.raises(ValueError, match="holds exactly when each"):
        Judgement(True, "> 5", 4.0, thresholds=(Threshold("x", 4.0, Region(5.0)),))


def test_a_claim_this_run_cannot_measure_is_inconclusive():
    record, error = check("fv-busy", orders(-1.0))
    assert error is None and record["verdict"] == "inconclusive"
    assert record["details"]["inconclusive"] == "the machine was busy"


def test_calm_orders_leave_printing_s_half_unit():
    record, _ = check("fv-figure", orders(5.004, 5.004, 5.004))
    assert record["verdict"] == "holds"
    assert record["details"]["figures"][0]["t_score"] is None  # no spread: exact rule
    _, error = check("fv-figure", orders(5.02, 5.02, 5.02))  # two printed units off
    assert isinstance(error, ClaimRefuted)


def test_every_figure_of_a_list_is_judged():
    record, error = check("fv-pair", orders(5.0, 5.001, 4.999))
    assert error is None and len(record["details"]["figures"]) == 2
    assert record["details"]["measured_values"] == [5.0, 7.0]
    single, _ = check("fv-figure", orders(*CHAOTIC))
    assert single["details"]["measured_value"] == CHAOTIC[0]


def test_a_qualitative_claim_reports_the_share_of_draws_that_hold():
    """Three of four draws: no margins to weigh (no threshold), so the counts alone, which
    cannot yet tell; the record says how many draws would."""
    record, _ = check("fv-qual", orders(6.0, 4.0, 6.5, 7.0))
    assert record["verdict"] == "inconclusive"
    assert record["details"]["holds_in_orders"] == [3, 4]
    low, high = record["details"]["share_interval"]
    assert 0 < low < 0.75 < high <= 1
    assert record["details"]["share_method"] == "counts"
    assert record["details"]["draws_to_conclude"] > 4


def test_a_body_that_returns_two_kinds_is_an_error():
    """The published text sets the kind: a figure claim whose body returns a judgement in
    one order is an error, with no record."""
    record, error = check("fv-mixed", orders(6.0, 4.0))
    assert isinstance(error, TypeError) and "it returns figures" in str(error) and record is None


def test_a_figure_claim_judged_once_is_refused():
    with pytest.raises(ValueError, match="fv-x: a figure claim is judged over every order"):
        claims("fv-x", "S", "s", published="5.0", once=True)(lambda v: v)


@pytest.mark.parametrize("values", [[], [1.0, float("nan")], [[1.0, 2.0]]])
def test_a_figure_without_one_finite_value_per_order_is_an_error(values):
    with pytest.raises(ValueError, match="one finite value per order"):
        judge_figure(values, "1.0")


def test_a_non_finite_figure_in_any_order_is_an_error_not_a_verdict():
    with pytest.raises(ValueError, match="NaN or infinite in order 'o0'"):
        check("fv-figure", orders(5.0, float("nan"), 5.0))


def test_a_benchmark_figure_is_recorded_and_never_fails_the_run():
    """A claim with gates=False (a timing of this machine) records its refutation and
    returns; it cannot also carry a finding."""
    claim("fv-timing", "S", "fast", published="under 30 s", once=True, gates=False)(
        lambda v: satisfied(v <= 30, measured=v)
    )
    spec = claims["fv-timing"]
    properties: list = []
    run_claim(spec, BODIES["fv-timing"], {"v": orders(165.0, 20.0)}, properties)
    (record,) = [json.loads(v) for name, v in properties if name == PROPERTY]
    assert record["verdict"] == "refuted" and record["details"]["gates"] is False
    with pytest.raises(ValueError, match="never gates"):
        ClaimSpec("fv-t2", "fv-doc", "S", "s", "x", gates=False, finding="slow")


def copies_of(values: tuple[float, ...], digests: tuple[str, ...]) -> Orders[float]:
    names = ["faithful", *(f"o{i}" for i in range(len(values) - 1))]
    return Orders(dict(zip(names, values, strict=True)), dict(zip(names, digests, strict=True)))


@pytest.mark.parametrize("claim_id", ["fv-threshold", "fv-qual", "fv-figure"])
@pytest.mark.parametrize("value", [5.3, 40.0, -40.0, 5.004])
def test_orders_that_repeat_one_result_collapse_to_neither_holds_nor_refuted(claim_id, value):
    """A chaotic recipe whose orders all gave the same results bit for bit (the
    perturbation did not take, as on a chip that rounds it away): the orders sampled none
    of the spread of valid computations, so the claim is inconclusive, and says why."""
    record, error = check(claim_id, copies_of((value,) * 6, ("same",) * 6))
    assert error is None and record["verdict"] == "inconclusive"
    assert "collapsed" in record["details"]["collapsed"]


def test_a_copy_counts_once():
    """Two of six orders repeat the faithful one: four draws, not six."""
    values = (45.0, 45.0, 45.0, 46.0, 47.0, 44.0)
    record, _ = check("fv-threshold", copies_of(values, ("a", "a", "a", "b", "c", "d")))
    assert record["details"]["holds_in_orders"] == [4, 4]
    assert record["details"]["copies"] == 2 and len(record["details"]["orders"]) == 4
