"""The verdicts' error rates and power, measured through the engine's own judging.

Each simulated claim is judged by `judge_body`, as the audit judges one: its body is run in
every order, copies by value are merged, and a claim left undecided by its first orders is
judged again over the extension its `Orders` allow (the calibration post's 8 orders become
20; the guide's 22 are judged once). The draws come from known shares of valid computations
p (the claim holds in a share p of them) in three ways: the number compared with its line
is normal (the margins route), the claim is a bare yes or no (the counts alone), and each
again with a quarter of the draws copies of another draw, or near-copies of it (equal to one
part in 1e5, which is not float noise: two draws, but barely apart).

docs/VERDICTS.md states the rates: a wrong verdict (*holds* at p < 80%, *refuted* at p > 20%,
*sensitive* at p outside 10% to 90%) at most SHARE_ALPHA of the time, over both looks; the
power at the audit's draw counts is printed (`-rP`) and quoted there.
"""

from __future__ import annotations

import zlib
from collections import Counter

import numpy as np
import pytest
from claim_audit import Orders, Region, satisfied, within
from claim_audit.engine import claim as engine_claim
from claim_audit.engine import share
from claim_audit.engine.claim import ClaimSpec, judge_body
from claim_audit.engine.prediction import FIGURE_ALPHA, conclusive, half_unit, interval_bounds
from scipy import stats

from uncertainty_claims.calibration.experiment import ORDERS, TWIN_BATCH
from uncertainty_claims.orders.uncertainty import ORDER_COUNT

pytestmark = pytest.mark.property

SIMULATIONS = 400
# A rate at SHARE_ALPHA measured over SIMULATIONS has a binomial sd of
# sqrt(a (1 - a) / SIMULATIONS) (0.0109 at 400): the limit allows three of them above it.
LIMIT = share.SHARE_ALPHA + 3 * np.sqrt(share.SHARE_ALPHA * (1 - share.SHARE_ALPHA) / SIMULATIONS)
SHARES = (0.95, 0.8, 0.5, 0.2, 0.05)
EXTRA = 2 * TWIN_BATCH  # the audit's EXTRA_TWIN_BATCHES (conftest.py) of twins
AUDITS = {  # first orders, and the budget they may be extended to (0: judged once)
    "calibration": (len(ORDERS), len(ORDERS) + EXTRA),
    "uncertainty": (ORDER_COUNT, 0),
}
SPEC = ClaimSpec("sim", "simulated", "a section", "a simulated claim", None)


def wrong(verdict: str, p: float) -> bool:
    """Whether `verdict` is an error for a claim given by a share p of computations."""
    if verdict == "holds":
        return p < share.HOLDS_AT
    if verdict == "refuted":
        return p > share.REFUTED_AT
    if verdict == "sensitive":
        return not share.SENSITIVE_BETWEEN[0] <= p <= share.SENSITIVE_BETWEEN[1]
    return False


def draws(rng: np.random.Generator, p: float, n: int, copies: str) -> np.ndarray:
    """n draws of the compared number, normal with a share p above 0; a quarter of them
    (after the first) copies of an earlier draw, or near-copies, as `copies` says."""
    values = rng.normal(stats.norm.ppf(p), 1.0, n)
    if copies != "none":
        for i in rng.choice(np.arange(1, n), n // 4, replace=False):
            source = values[rng.integers(0, i)]
            values[i] = source if copies == "copies" else source * (1 + 1e-5)
    return values


def orders_of(values: np.ndarray, first: int, budget: int) -> Orders:
    names = ["faithful", *(f"o{i}" for i in range(1, len(values)))]
    every = dict(zip(names, values, strict=True))
    if not budget:
        return Orders(every)
    given = dict(list(every.items())[:first])
    return Orders(given, more=lambda: Orders(every), budget=budget)


def margins_body(x: float):
    return within(x, Region(0.0, closed=False), name="x")


def counts_body(x: float):
    return satisfied(x > 0, measured="above" if x > 0 else "below")


BODIES = {"margins": margins_body, "counts": counts_body}


@pytest.fixture(autouse=True)
def _judged_alone(monkeypatch):
    """Only the verdict is measured: the resampled verdict shares (a report's prediction)
    are left out, and an undecided claim's draws_to_conclude looks no further than any
    budget here."""
    monkeypatch.setattr(engine_claim, "verdict_shares", lambda n, verdict_of: {})
    monkeypatch.setattr(
        share, "MAX_DRAWS", max(budget or first for first, budget in AUDITS.values())
    )


def verdicts(audit: str, route: str, p: float, copies: str, simulations: int) -> Counter:
    first, budget = AUDITS[audit]
    rng = np.random.default_rng(zlib.crc32(repr((audit, route, p, copies)).encode()))
    found: Counter = Counter()
    for _ in range(simulations):
        values = draws(rng, p, budget or first, copies)
        arguments = {"x": orders_of(values, first, budget)}
        found[judge_body(SPEC, BODIES[route], arguments).verdict] += 1
    return found


@pytest.mark.parametrize(
    ("route", "copies"),
    # A yes-or-no body has no numbers to find copies by: its draws are counted as given.
    [("margins", "none"), ("margins", "copies"), ("margins", "near-copies"), ("counts", "none")],
)
@pytest.mark.parametrize("p", SHARES)
@pytest.mark.parametrize("audit", sorted(AUDITS))
def test_wrong_verdicts_stay_within_the_stated_rate(audit, route, p, copies):
    """Over both looks, a wrong verdict at most SHARE_ALPHA of the time (plus sampling
    error), for every share, route and kind of copies; the verdicts are printed."""
    found = verdicts(audit, route, p, copies, SIMULATIONS)
    rate = sum(count for verdict, count in found.items() if wrong(verdict, p)) / SIMULATIONS
    shares = ", ".join(f"{v} {c / SIMULATIONS:.3f}" for v, c in sorted(found.items()))
    print(f"{audit}, {route}, p = {p}, {copies}: wrong {rate:.3f} (limit {LIMIT:.3f}); {shares}")
    assert rate <= LIMIT


@pytest.mark.parametrize("route", sorted(BODIES))
@pytest.mark.parametrize("audit", sorted(AUDITS))
def test_power_at_the_audits_draw_counts(audit, route):
    """The chance of *holds* when p >= 0.95 and of *refuted* when p <= 0.05, printed for
    docs/VERDICTS.md. With the margins a claim far from its line concludes at the first
    orders; by the counts alone the calibration's 8 orders never can, 20 can."""
    holds = verdicts(audit, route, 0.99, "none", SIMULATIONS)["holds"] / SIMULATIONS
    refuted = verdicts(audit, route, 0.01, "none", SIMULATIONS)["refuted"] / SIMULATIONS
    print(f"{audit}, {route}: P(holds | p = 0.99) {holds:.2f}, P(refuted | p = 0.01) {refuted:.2f}")
    assert holds > 0.5 and refuted > 0.5  # the extension gives the counts their power


def test_a_claim_undecided_by_its_first_orders_takes_the_extension():
    """The second look happens only where the first left the claim undecided and the
    budget could decide it, and the record says so."""
    first, budget = AUDITS["calibration"]
    far = np.full(budget, 5.0) + np.linspace(0, 1, budget)  # every draw far above 0
    record = judge_body(SPEC, margins_body, {"x": orders_of(far, first, budget)})
    assert record.verdict == "holds" and not record.details["first_look"]["extended"]
    yes = judge_body(SPEC, counts_body, {"x": orders_of(far, first, budget)})
    assert yes.details["first_look"] == {
        "orders": first,
        "verdict": "inconclusive",
        "budget": budget,
        "extended": True,
    }
    assert yes.verdict == "holds" and yes.details["holds_in_orders"] == [budget, budget]


FIGURE_DRAWS = 200_000
H = half_unit("4.56")  # printing's half unit of a figure printed to two decimals


@pytest.mark.parametrize("noise", (0.3, 1.0, 3.0, 30.0))
def test_a_true_figure_is_refuted_at_most_alpha_over_both_looks(noise):
    """The figure rule's two looks, in the calibration's situation: a published figure that
    is a draw of the recipe (printed to its digits) is refuted at the first look (8 orders)
    or, undecided there, at the second (20), at most FIGURE_ALPHA of the time; each look runs
    at half of it. `noise`: the orders' sd in printing's half units (30: a figure the recipe
    cannot pin, which must still not be refuted wrongly)."""
    first, budget = AUDITS["calibration"]
    alpha = FIGURE_ALPHA / 2
    rng = np.random.default_rng(int(noise * 10))
    sd = noise * H
    values = rng.normal(1.0, sd, (FIGURE_DRAWS, budget))
    published = np.round(rng.normal(1.0, sd, FIGURE_DRAWS) / (2 * H)) * (2 * H)

    def looked(n: int) -> tuple[np.ndarray, np.ndarray]:
        low, high = interval_bounds(values[:, :n], H, alpha=alpha)
        refuted = (published < low) | (published > high)
        return refuted, ~refuted & ~np.vectorize(conclusive)(low, high, published, H)

    refuted_first, undecided = looked(first)
    refuted_second, _ = looked(budget)
    rate = float(np.mean(refuted_first | (undecided & refuted_second)))
    limit = FIGURE_ALPHA + 3 * np.sqrt(FIGURE_ALPHA / FIGURE_DRAWS)
    print(f"noise {noise} half units: a true figure refuted {rate:.2e} (limit {limit:.2e})")
    assert rate <= limit
