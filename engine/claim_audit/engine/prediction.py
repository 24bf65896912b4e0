"""Is a published figure a plausible draw of the recipe over valid float orders?

A figure claim (a printed number the recipe reproduces) is judged once, over all orders
together, not order by order. The orders' figures x_1..x_n are draws from the recipe's
distribution over valid float orders; the published figure is one more draw, computed on
the author's machine in an order we never run, then printed. Under the null hypothesis
that it is such a draw, with the draws normal N(mu, sigma^2),

    (p - mean(x)) / (s * sqrt(1 + 1/n))  ~  Student t with n - 1 degrees of freedom,

s the orders' sample sd. So the two-sided prediction interval

    mean(x) +- (t_{n-1}(1 - FIGURE_ALPHA / 2) * s * sqrt(1 + 1/n) + h),

h printing's half unit (the printed p is within h of the drawn one), holds a published
figure with probability at least 1 - FIGURE_ALPHA under the null, whatever n is: the
false-refutation rate is FIGURE_ALPHA per figure and does not grow with the number of
orders. Where every order agrees (s = 0: a calm model, a deterministic figure) the interval
is mean(x) +- h, exact reproduction to the printed digits. With one order there is no
spread to estimate: the same exact rule.

The interval is computed on the figure's scale (claim_audit.engine.scales: log for
a positive quantity, logit for a share) and mapped back, so that it stays in the quantity's
domain; the derivation holds there, for draws normal on that scale.

FIGURE_ALPHA is 1% shared over at most FAMILY_SIZE figures (Bonferroni): an audit of up to
that many figures turns red on noise alone with probability at most 1%, whatever the
figures' correlations. claims/properties/test_figure_rule.py measures all three rates by
simulation (false refutations per claim, family-wise, power) and fixtures/TOLERANCES.md
gives the derivation.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import numpy as np
from scipy import stats

from .scales import scale_named

FAMILY_ALPHA = 0.01
FAMILY_SIZE = 50
FIGURE_ALPHA = FAMILY_ALPHA / FAMILY_SIZE

CONCLUSIVE_HALF_WIDTH = 0.5
"""An interval wider than +- this share of the published figure (or one that holds 0) cannot
tell the figure from a quite different one: the claim is *inconclusive*, never a pass. (A
published 0: +- one unit of its last printed digit, `conclusive`.)"""
POWER_TARGET = 0.8
POWER_DRAWS = 20_000
MAX_ORDERS = 10_000
"""The most orders `orders_to_conclude` considers; beyond, no affordable audit concludes."""


def half_unit(printed: str) -> float:
    """Half a unit in the last digit of a figure as printed: "0.25" -> 0.005, "125" -> 0.5.
    A figure in exponent notation is printed to its mantissa's digits: "1e3" (one
    significant digit) -> 500, "1.0e3" -> 50, "1.00e-3" -> 5e-6."""
    try:
        exponent = Decimal(printed.strip().lstrip("+-")).as_tuple().exponent
    except InvalidOperation:
        exponent = None
    if not isinstance(exponent, int):
        raise ValueError(f"not a finite printed number: {printed!r}")
    return 0.5 * 10.0**exponent


@dataclass(frozen=True)
class FigureVerdict:
    """One published figure against its orders: the interval, where the figure falls, and
    how far off a figure the rule would catch (its power)."""

    printed: str
    holds: bool
    low: float
    high: float
    mean: float
    sd: float
    n_orders: int
    t_score: float | None  # beyond printing's half unit, in sds of a draw; None when s = 0
    p_value: float | None  # two-sided, under the null; None when s = 0
    conclusive: bool = True
    detectable: float | None = (
        None  # relative shift caught with POWER_TARGET; None: none is, or p = 0
    )
    orders_to_conclude: int | None = None  # None: no number of orders up to MAX_ORDERS
    scale: str = "linear"  # where mean and sd are taken (claim_audit.engine.scales)
    copies: int = 0  # orders that repeated another's value bit for bit, counted once

    @property
    def collapsed(self) -> bool:
        """Every order gave one value bit for bit: the orders sampled no spread."""
        return self.n_orders == 1 and self.copies > 0

    @property
    def verdict(self) -> str:
        """inconclusive when the orders collapsed to one value, else refuted when the figure
        lies outside its interval, else inconclusive when the interval cannot check it, else
        holds."""
        if self.collapsed:
            return "inconclusive"
        if not self.holds:
            return "refuted"
        return "holds" if self.conclusive else "inconclusive"

    def to_json(self) -> dict:
        return {
            "published": self.printed,
            "verdict": self.verdict,
            "interval": [self.low, self.high],
            "mean_over_orders": self.mean,
            "sd_over_orders": self.sd,
            "orders": self.n_orders,
            "t_score": self.t_score,
            "p_value": self.p_value,
            f"relative_shift_caught_{POWER_TARGET:g}": self.detectable,
            "orders_to_conclude": self.orders_to_conclude,
            "scale": self.scale,
            "copies": self.copies,
        }


def t_quantile(n_orders: np.ndarray | int, alpha: float = FIGURE_ALPHA) -> np.ndarray:
    """t_{n-1}(1 - alpha/2) sqrt(1 + 1/n): the interval's half width in units of the orders'
    sd (0 for a single order, which has no sd)."""
    n = np.asarray(n_orders, dtype=np.float64)
    df = np.maximum(n - 1, 1)
    return np.where(n > 1, stats.t.ppf(1 - alpha / 2, df) * np.sqrt(1 + 1 / n), 0.0)


def interval_bounds(
    values: np.ndarray,
    slack: np.ndarray | float = 0.0,
    alpha: float = FIGURE_ALPHA,
    scale: str = "linear",
) -> tuple[np.ndarray, np.ndarray]:
    """The prediction intervals (low, high) of whole arrays of orders: `values` [..., n],
    one value per order along the last axis, computed on `scale` (claim_audit.engine.scales),
    mapped back, widened by `slack` on each side and kept inside the scale's
    domain. The interval `prediction_interval` and `plausible` use; the simulations of the
    rules call it too."""
    s = scale_named(scale)
    y = s.to_scale(values)
    n = y.shape[-1]
    sd = y.std(axis=-1, ddof=1) if n > 1 else np.zeros(y.shape[:-1])
    half = t_quantile(n, alpha) * sd
    mean = y.mean(axis=-1)
    low = np.maximum(s.back(mean - half) - slack, s.low)
    high = np.minimum(s.back(mean + half) + slack, s.high)
    return low, high


def plausible(
    values: np.ndarray,
    published: np.ndarray,
    half_units: np.ndarray,
    alpha: float = FIGURE_ALPHA,
    scale: str = "linear",
) -> np.ndarray:
    """Whether each published figure lies in its prediction interval, for whole arrays:
    `values` [..., n] (one value per order along the last axis), `published` and
    `half_units` broadcast against values[..., 0]. The rule `judge_figure` applies; the
    simulation of its error rates (claims/properties/test_figure_rule.py) calls it too."""
    low, high = interval_bounds(values, half_units, alpha, scale)
    return (low <= published) & (published <= high)


def prediction_interval(
    values: Sequence[float], slack: float = 0.0, alpha: float = FIGURE_ALPHA, scale: str = "linear"
) -> tuple[float, float, float, float]:
    """(low, high, mean, sd): where one more draw of the orders' distribution lies with
    probability 1 - alpha, widened by `slack` (printing's half unit) on each side; mean and
    sd on `scale`."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or len(x) == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"a figure needs one finite value per order; got {values!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha}")
    low, high = interval_bounds(x, slack, alpha, scale)
    y = scale_named(scale).to_scale(x)
    return float(low), float(high), float(y.mean()), float(y.std(ddof=1)) if len(y) > 1 else 0.0


def figure_scale(values: np.ndarray, scale: str) -> str:
    """`scale`, or linear where a value sits on the edge of its domain (a share of exactly
    0 or 1, a variance of 0), which the log and logit scales cannot map."""
    return scale if scale_named(scale).inside(values) else "linear"


def conclusive(low: float, high: float, published: float, slack: float) -> bool:
    """Whether an interval can check a published figure: it excludes 0 and is at most
    +- CONCLUSIVE_HALF_WIDTH of the figure wide. A published 0 has no size to measure that
    by: its interval is at most +- one unit of the last printed digit (2 x `slack`, printing's
    half unit) wide, so it tells 0 from the smallest figure the document could have printed
    instead ("0.00" from 0.01)."""
    if published == 0:
        return (high - low) / 2 <= 2 * slack
    return not low <= 0 <= high and (high - low) / 2 <= CONCLUSIVE_HALF_WIDTH * abs(published)


def _bounds_at(mean: float, half: float, slack: float, scale: str) -> tuple[float, float]:
    """The interval mean +- half on `scale`, mapped back and widened by `slack`."""
    s = scale_named(scale)
    low = max(float(s.back(np.float64(mean - half))) - slack, s.low)
    high = min(float(s.back(np.float64(mean + half))) + slack, s.high)
    return low, high


def orders_to_conclude(
    mean: float,
    sd: float,
    slack: float,
    published: float,
    alpha: float = FIGURE_ALPHA,
    scale: str = "linear",
) -> int | None:
    """The fewest distinct orders whose interval would be conclusive, if the orders' mean
    and sd (on `scale`) stay as measured; None when no number up to MAX_ORDERS is (the
    recipe's own spread over float orders, or the printed digits, are too wide)."""

    def fits(n: int) -> bool:
        low, high = _bounds_at(mean, float(t_quantile(n, alpha)) * sd, slack, scale)
        return conclusive(low, high, published, slack)

    if sd == 0:
        return 1 if fits(1) else None
    if not fits(MAX_ORDERS):
        return None
    low, high = 2, MAX_ORDERS  # the width falls with n: bisect for the first that fits
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if fits(middle) else (middle + 1, high)
    return low


def detectable_shift(
    sd: float,
    n_orders: int,
    slack: float,
    target: float = POWER_TARGET,
    alpha: float = FIGURE_ALPHA,
    scale: str = "linear",
    mean: float = 0.0,
) -> float:
    """The smallest shift of the published figure's distribution from the orders' that the
    rule refutes with probability `target`, simulated: n orders and the published draw from
    N(mean, sd^2) on `scale`, the latter moved by the shift (on the scale) and printed
    (uniform within `slack`). Returned on the figure's own scale, as the distance between
    the two distributions' centres. The same draws serve every shift (common random
    numbers), so the answer is reproducible; inf when no shift is caught so often."""
    s = scale_named(scale)
    rng = np.random.default_rng(0)
    orders = mean + rng.standard_normal((POWER_DRAWS, n_orders)) * sd
    low, high = interval_bounds(s.back(orders), slack, alpha, scale)
    noise = rng.standard_normal(POWER_DRAWS) * sd
    printing = rng.uniform(-slack, slack, POWER_DRAWS)
    centre = float(s.back(np.float64(mean)))

    def caught(shift: float) -> float:
        up = s.back(mean + shift + noise) + printing
        down = s.back(mean - shift + noise) + printing
        return float(np.mean((up < low) | (up > high)) + np.mean((down < low) | (down > high))) / 2

    top = max(sd, 1e-300) if scale != "linear" else max(sd, slack, 1e-300)
    # Past this shift on a log or logit scale the figure has moved by a factor of e^40:
    # a rule that catches no such shift catches none (and exp would overflow beyond).
    limit = 1e6 * max(sd, slack, 1.0) if scale == "linear" else 40.0 + 10 * sd
    while caught(top) < target:
        if top > limit:
            return math.inf
        top *= 2
    bottom = 0.0
    for _ in range(40):  # bisection to a relative precision far below the simulation's own
        middle = (bottom + top) / 2
        bottom, top = (bottom, middle) if caught(middle) >= target else (middle, top)
    return abs(float(s.back(np.float64(mean + top))) - centre)


def judge_figure(
    values: Sequence[float],
    printed: str,
    alpha: float = FIGURE_ALPHA,
    scale: str = "linear",
    copies: int = 0,
    power: bool = True,
) -> FigureVerdict:
    """The published figure `printed` against the figure's value in each distinct order,
    `values`: its interval, and the rule's power and conclusiveness on this figure.
    `copies`: orders left out because they repeated another's results bit for bit; where
    one order is left with copies beside it, the orders sampled no spread (they
    collapsed) and the figure is inconclusive. `power=False`: the verdict and interval
    alone, without the simulated power and the orders that would conclude it (for
    resampling the verdict)."""
    h = half_unit(printed)
    x = np.asarray(values, dtype=np.float64)
    scale = figure_scale(x, scale)
    low, high, mean, sd = prediction_interval(x, h, alpha, scale)
    n = len(x)
    published = float(printed)
    t_score = p_value = None
    if sd > 0 and n > 1:
        # The distance beyond printing's slack, on the scale, in units of the draw's sd: the
        # rule holds exactly when this t is inside t_{n-1}(1 - alpha/2).
        s = scale_named(scale)
        nearest = s.clip(min(max(float(s.back(np.float64(mean))), published - h), published + h))
        nearest = min(max(nearest, np.nextafter(s.low, 1)), np.nextafter(s.high, 0))
        beyond = float(s.to_scale(np.float64(nearest))) - mean
        t_score = beyond / (sd * math.sqrt(1 + 1 / n))
        p_value = float(2 * stats.t.sf(abs(t_score), n - 1))
    shift = detectable_shift(sd, n, h, alpha=alpha, scale=scale, mean=mean) if power else math.inf
    collapsed = n == 1 and copies > 0
    return FigureVerdict(
        printed=printed,
        holds=low <= published <= high,
        low=low,
        high=high,
        mean=mean,
        sd=sd,
        n_orders=n,
        t_score=t_score,
        p_value=p_value,
        conclusive=conclusive(low, high, published, h) and not collapsed,
        detectable=shift / abs(published) if published and math.isfinite(shift) else None,
        orders_to_conclude=None
        if collapsed or not power
        else orders_to_conclude(mean, sd, h, published, alpha, scale),
        scale=scale,
        copies=copies,
    )


def power(shift: float, n_orders: int, alpha: float = FIGURE_ALPHA) -> float:
    """The probability that a published figure `shift` order sds off the recipe's mean is
    refuted by `n_orders` orders (printing's half unit negligible): the noncentral t."""
    if n_orders < 2:
        raise ValueError("with one order there is no spread: the rule is exact reproduction")
    df, scale = n_orders - 1, math.sqrt(1 + 1 / n_orders)
    crit = float(stats.t.ppf(1 - alpha / 2, df))
    ncp = abs(shift) / scale
    far_tail = float(stats.nct.cdf(-crit, df, ncp))  # NaN where it underflows (far below 1e-10)
    return float(stats.nct.sf(crit, df, ncp)) + (far_tail if math.isfinite(far_tail) else 0.0)


def shift_for_power(target: float, n_orders: int, alpha: float = FIGURE_ALPHA) -> float:
    """The shift (in order sds) that `n_orders` orders refute with probability `target`."""
    from scipy.optimize import brentq

    high = 1.0
    while power(high, n_orders, alpha) < target:
        high *= 2
    return float(brentq(lambda d: power(d, n_orders, alpha) - target, 0.0, high))
