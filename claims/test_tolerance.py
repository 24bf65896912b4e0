"""The reproduction tolerances' order noise: derived from the runs, per net and seed, and
complete for what the claims read (lib/tolerance.py, fixtures/TOLERANCES.md)."""

from __future__ import annotations

import json
import math

import jax
import numpy as np
import pytest
from flax import nnx

from lib.calibration.experiment import NETS, ORDERS, PUBLISHED_SEEDS
from lib.calibration.models import build_model
from lib.nudge import nudge_params
from lib.tolerance import SPREAD_FILE, half_unit, mean_sigma, reproduction_tolerance, sigma_order

SPREAD = json.loads(SPREAD_FILE.read_text())


def test_the_spread_was_derived_on_the_orders_the_verdicts_use():
    """A change of the orders without re-deriving the spread leaves it stale."""
    assert SPREAD["orders"] == list(ORDERS)
    assert SPREAD["seeds"] == list(PUBLISHED_SEEDS)
    assert sorted(SPREAD["sigma_order"]) == sorted(NETS)


def test_each_sigma_is_the_sd_of_its_distinct_values_over_the_orders():
    """sigma_order is derived from the per-order values stored beside it, never edited."""
    for net, per_net in SPREAD["values"].items():
        for figure, per_seed in per_net.items():
            assert sorted(per_seed) == [str(s) for s in PUBLISHED_SEEDS], (net, figure)
            for seed, per_order in per_seed.items():
                assert len(per_order) == len(ORDERS), (net, figure, seed)
                distinct = np.unique(per_order)
                expected = float(distinct.std(ddof=1)) if len(distinct) > 1 else 0.0
                assert sigma_order(net, figure, int(seed)) == expected, (net, figure, seed)


def test_a_mean_over_seeds_adds_the_seeds_noise_in_quadrature():
    sds = [sigma_order("relu", "ece", s) for s in PUBLISHED_SEEDS]
    assert mean_sigma("relu", "ece", PUBLISHED_SEEDS) == pytest.approx(
        math.sqrt(sum(sd**2 for sd in sds)) / len(sds), rel=1e-15
    )
    assert mean_sigma("relu", "ece", [1]) == sds[1]
    tolerance = reproduction_tolerance("ece", "9.99", net="relu", seeds=PUBLISHED_SEEDS, scale=100)
    assert tolerance == pytest.approx(
        half_unit("9.99") + 3 * 100 * mean_sigma("relu", "ece", PUBLISHED_SEEDS), rel=1e-15
    )


def test_half_a_unit_of_the_last_printed_digit():
    assert half_unit("3.14") == pytest.approx(0.005)
    assert half_unit("314") == 0.5
    assert half_unit("-0.3141") == pytest.approx(0.00005)
    with pytest.raises(ValueError, match="not a finite printed number"):
        half_unit("nan")


@pytest.mark.parametrize(
    ("net", "figure", "seed", "seeds"),
    [("yat", "no_such_figure", 0, [0]), ("relu", "ece", 7, [0, 7]), ("mlp", "ece", 0, [0])],
)
def test_a_missing_spread_is_an_error_naming_it(net, figure, seed, seeds):
    with pytest.raises(KeyError, match=f"'{net}' '{figure}' seed {seed}"):
        mean_sigma(net, figure, seeds)


def test_a_mean_over_no_seeds_is_an_error():
    with pytest.raises(ValueError, match="no seeds"):
        mean_sigma("relu", "ece", [])


def test_a_nudge_moves_about_five_percent_of_the_weights_up_by_one_ulp():
    """The float-rounding twins' perturbation (lib/nudge.py): a fixed subset per seed, each
    chosen entry exactly one float32 step up, nothing else touched."""
    images = np.zeros((1000, 784), np.float32)

    def params(nudge: int | None):
        model = build_model("relu", 0, images)
        if nudge is not None:
            nudge_params(model, nudge)
        return [np.asarray(leaf) for leaf in jax.tree.leaves(nnx.state(model, nnx.Param))]

    moved = total = 0
    for before, after, again in zip(params(None), params(3), params(3), strict=True):
        changed = before != after
        up = np.nextafter(before, np.float32(np.inf))
        assert np.array_equal(after[changed], up[changed])
        assert np.array_equal(after, again)
        moved, total = moved + changed.sum(), total + changed.size
    assert not all(np.array_equal(a, b) for a, b in zip(params(3), params(4), strict=True))
    # Binomial(total, 0.05): within 5 sd.
    assert abs(moved - 0.05 * total) < 5 * math.sqrt(total * 0.05 * 0.95), (moved, total)
