"""The figure rule's error rates, measured by simulation (lib/engine/prediction.py).

The audit's own situation: its figure claims as registered (how many figures each judges),
each document's default number of orders and the `--orders` the docs name for power, and
order noise from calm (sd far below printing's half unit) to chaotic (sd 100 half units).
Under the null the published figure is one more draw of the order distribution, printed
to its digits; off the null it sits `shift` order sds away. NumPy only, a few seconds.

Run with `-rP` to see the measured rates beside their thresholds.
"""

from __future__ import annotations

import numpy as np
import pytest

import uncertainty_claims.calibration.claims.specs
import uncertainty_claims.uncertainty.claims.specs  # noqa: F401 (registers the guide's claims)
from uncertainty_claims.calibration.experiment import ORDERS
from uncertainty_claims.engine.claim import registered_specs
from uncertainty_claims.engine.prediction import (
    FAMILY_ALPHA,
    FAMILY_SIZE,
    FIGURE_ALPHA,
    half_unit,
    plausible,
    power,
    shift_for_power,
)
from uncertainty_claims.uncertainty.results import ORDER_COUNT

pytestmark = pytest.mark.property

DEFAULT_ORDERS = {"calibration": len(ORDERS), "uncertainty": ORDER_COUNT}
POWER_ORDERS = 44  # the --orders that docs/VERDICTS.md names for power at 6 order sds
PER_CLAIM_LIMIT = 0.01
FAMILY_LIMIT = 0.01
POWER_TARGET, POWER_SHIFT = 0.95, 6.0
NOISE_OVER_HALF_UNIT = (0.0, 0.01, 0.3, 1.0, 3.0, 100.0)
H = 0.005  # printing's half unit of a figure printed to two decimals ("4.56")


def figure_claims() -> list[tuple[str, str, int]]:
    """(claim id, document, figures judged) of every registered figure claim."""
    specs = [s for s in registered_specs() if s.document in DEFAULT_ORDERS]
    return [(s.id, s.document, s.figure_count) for s in specs if s.figure_count]


def old_per_order_rule(values, published, half_units):
    """The rule before: every order's figure within half a unit plus 3 sd of the orders.
    Kept here to show that this test catches a rule whose error rate grows with the orders."""
    sd = values.std(axis=-1, ddof=1)
    return np.all(np.abs(values - published[..., None]) <= (half_units + 3 * sd)[..., None], -1)


def simulate(rule, *, n_orders, n_figures, noise, shift, draws, rng) -> float:
    """The share of simulated audits in which `rule` refutes at least one of `n_figures`
    independent figures (Sidak: independence is the worst case for two-sided tests)."""
    sd = noise * H
    values = rng.normal(0.0, 1.0, (draws, n_figures, n_orders)) * sd
    drawn = (
        rng.normal(shift, 1.0, (draws, n_figures)) * sd
        if sd
        else np.full((draws, n_figures), shift * H)
    )
    published = np.round(drawn / (2 * H)) * (2 * H)  # printed to its digits
    return float(np.mean(~np.all(rule(values, published, np.full(published.shape, H)), axis=1)))


def rates(rule, rng) -> dict[str, float]:
    """Each rate the rule must keep, in the audit's situation."""
    out = {}
    for claim_id, document, n_figures in figure_claims():
        worst = max(
            simulate(
                rule,
                n_orders=DEFAULT_ORDERS[document],
                n_figures=n_figures,
                noise=noise,
                shift=0.0,
                draws=4000,
                rng=rng,
            )
            for noise in NOISE_OVER_HALF_UNIT
        )
        out[f"false not-holds, {claim_id}"] = worst
    for n_orders in (3, 5, 8, 22, 50):
        out[f"false not-holds, one figure, {n_orders} orders"] = simulate(
            rule, n_orders=n_orders, n_figures=1, noise=100.0, shift=0.0, draws=40000, rng=rng
        )
    family = 0.0
    for document, n_orders in DEFAULT_ORDERS.items():
        n_figures = sum(n for _, d, n in figure_claims() if d == document)
        p = simulate(
            rule,
            n_orders=n_orders,
            n_figures=n_figures,
            noise=100.0,
            shift=0.0,
            draws=20000,
            rng=rng,
        )
        family = 1 - (1 - family) * (1 - p)
    out["family-wise, a fresh machine's audit"] = family
    out[f"power at {POWER_SHIFT:g} sd, {POWER_ORDERS} orders"] = simulate(
        rule,
        n_orders=POWER_ORDERS,
        n_figures=1,
        noise=100.0,
        shift=POWER_SHIFT,
        draws=20000,
        rng=rng,
    )
    out["calm figure 2 printed units off: refuted"] = simulate(
        rule,
        n_orders=DEFAULT_ORDERS["calibration"],
        n_figures=1,
        noise=0.01,
        shift=400.0,
        draws=20000,
        rng=rng,
    )
    return out


def failures(measured: dict[str, float]) -> list[str]:
    """The rates that break their thresholds."""
    bad = []
    for name, rate in measured.items():
        if name.startswith("false not-holds") and rate > PER_CLAIM_LIMIT:
            bad.append(f"{name}: {rate:.4f} > {PER_CLAIM_LIMIT}")
        elif name.startswith("family-wise") and rate > FAMILY_LIMIT:
            bad.append(f"{name}: {rate:.4f} > {FAMILY_LIMIT}")
        elif name.startswith("power") and rate < POWER_TARGET:
            bad.append(f"{name}: {rate:.4f} < {POWER_TARGET}")
        elif name.startswith("calm") and rate < 1.0:
            bad.append(f"{name}: {rate:.4f} < 1")
    return bad


def show(title: str, measured: dict[str, float]) -> None:
    print(f"\n{title}")
    for name, rate in measured.items():
        print(f"  {name:<60} {rate:.4f}")


def test_the_suite_has_no_more_figures_than_the_family_allows():
    total = sum(n for *_, n in figure_claims())
    print(f"{total} figures, each refuted by noise with probability {FIGURE_ALPHA:g}: family-wise <= {total * FIGURE_ALPHA:.4f}")  # fmt: skip
    assert 0 < total <= FAMILY_SIZE
    assert total * FIGURE_ALPHA <= FAMILY_ALPHA


def test_the_prediction_rule_keeps_every_rate():
    measured = rates(plausible, np.random.default_rng(20261202))
    show(f"prediction interval (alpha {FIGURE_ALPHA:g} per figure)", measured)
    assert failures(measured) == []


def test_the_old_per_order_rule_breaks_them():
    measured = rates(old_per_order_rule, np.random.default_rng(20261202))
    show("old rule: every order within half a unit + 3 sd", measured)
    broken = failures(measured)
    print("broken:", *broken, sep="\n  ")
    assert any(b.startswith("false not-holds, one figure, 22 orders") for b in broken)
    assert any(b.startswith("family-wise") for b in broken)


@pytest.mark.parametrize("n_orders", [3, 8, 22, POWER_ORDERS])
def test_simulated_power_matches_the_noncentral_t(n_orders):
    simulated = simulate(
        plausible,
        n_orders=n_orders,
        n_figures=1,
        noise=1e4,
        shift=POWER_SHIFT,
        draws=40000,
        rng=np.random.default_rng(n_orders),
    )
    assert simulated == pytest.approx(power(POWER_SHIFT, n_orders), abs=0.01)


def test_power_of_the_default_audit_is_reported():
    for document, n_orders in DEFAULT_ORDERS.items():
        print(f"{document}: {n_orders} orders refute a figure off by 6 sd with p = {power(6, n_orders):.3f}; with p = 0.95 one off by {shift_for_power(0.95, n_orders):.1f} sd")  # fmt: skip
    assert power(POWER_SHIFT, POWER_ORDERS) >= POWER_TARGET
    assert power(POWER_SHIFT, POWER_ORDERS - 6) < POWER_TARGET  # the docs name the least batch


def test_half_unit_of_printed_figures():
    assert half_unit("4.56") == pytest.approx(0.005)
    assert half_unit("125") == 0.5
    assert half_unit("-0.9876") == pytest.approx(5e-5)
    with pytest.raises(ValueError, match="not a finite printed number"):
        half_unit("nan")
    with pytest.raises(ValueError, match="not a finite printed number"):
        half_unit("six")
