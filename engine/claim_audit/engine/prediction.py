"""A published figure against its prediction interval over float orders (docs/VERDICTS.md)."""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import numpy as np

FAMILY_ALPHA = 0.01
FAMILY_SIZE = 50
FIGURE_ALPHA = FAMILY_ALPHA / FAMILY_SIZE  # a false refutation per figure over all its looks
CONCLUSIVE_HALF_WIDTH = 0.5  # an interval wider than +- this share of its figure cannot check it
POWER_TARGET = 0.8
POWER_DRAWS = 20_000
MAX_ORDERS = 10_000  # the most orders `orders_to_conclude` considers


@dataclass(frozen=True)
class Scale:
    """A map of a quantity's domain (low, high) onto the real line and back."""

    name: str
    low: float
    high: float
    forward: Callable[[np.ndarray], np.ndarray]
    back: Callable[[np.ndarray], np.ndarray]

    def inside(self, values: np.ndarray) -> bool:
        """Whether every value lies strictly inside the domain (where `forward` is finite)."""
        x = np.asarray(values, dtype=np.float64)
        return bool(np.all((x > self.low) & (x < self.high)))

    def to_scale(self, values: np.ndarray) -> np.ndarray:
        """`values` on the scale; a ValueError names a value outside the domain."""
        x = np.asarray(values, dtype=np.float64)
        outside = ~((x >= self.low) & (x <= self.high))
        if np.any(outside):
            raise ValueError(
                f"{x[outside][0]!r} lies outside the {self.name} scale's domain [{self.low:g}, {self.high:g}]: declare the quantity's scale as 'linear'"
            )
        with np.errstate(divide="ignore"):
            return self.forward(x)

    def clip(self, value: float) -> float:
        """`value` moved into the closed domain."""
        return float(min(max(value, self.low), self.high))


SCALES: dict[str, Scale] = {
    "linear": Scale("linear", -math.inf, math.inf, lambda x: x, lambda y: y),
    "log": Scale("log", 0.0, math.inf, np.log, np.exp),
    "logit": Scale(
        "logit", 0.0, 1.0, lambda x: np.log(x) - np.log1p(-x), lambda y: 1.0 / (1.0 + np.exp(-y))
    ),
}


def scale_named(name: str) -> Scale:
    """The scale called `name`; a ValueError lists the known ones."""
    try:
        return SCALES[name]
    except (KeyError, TypeError):
        raise ValueError(f"a scale is one of {sorted(SCALES)}; got {name!r}") from None


def half_unit(printed: str) -> float:
    """Half a unit in the last printed digit: "0.25" -> 0.005, "125" -> 0.5, "1.0e3" -> 50."""
    try:  # NaN and infinity have the exponent "n", "N" or "F"
        return 0.5 * 10.0 ** int(Decimal(printed.strip().lstrip("+-")).as_tuple().exponent)
    except (InvalidOperation, ValueError):
        raise ValueError(f"not a finite printed number: {printed!r}") from None


@dataclass(frozen=True)
class FigureVerdict:
    """A figure's interval and power; `copies`: orders repeating another's value bit for bit;
    `pinnable`: whether enough orders would make the interval conclusive."""

    printed: str
    holds: bool
    low: float
    high: float
    mean: float
    sd: float
    n_orders: int
    t_score: float | None
    p_value: float | None
    conclusive: bool = True
    detectable: float | None = None
    orders_to_conclude: int | None = None
    scale: str = "linear"
    copies: int = 0
    pinnable: bool = True

    @property
    def collapsed(self) -> bool:
        """Every order gave one value bit for bit: the orders sampled no spread."""
        return self.n_orders == 1 and self.copies > 0

    @property
    def verdict(self) -> str:
        """refuted outside its interval; inside it, holds where the interval checks the figure,
        unpinned where no number of orders would (the recipe's own spread is wider than the
        figure can be checked against), else inconclusive (as when the draws collapsed)."""
        if self.collapsed:
            return "inconclusive"
        if not self.holds:
            return "refuted"
        if self.conclusive:
            return "holds"
        return "inconclusive" if self.pinnable else "unpinned"

    def to_json(self) -> dict:
        recipe_range = {} if self.pinnable else {"recipe_range": [self.low, self.high]}
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
            **recipe_range,
        }


def t_quantile(n_orders: np.ndarray | int, alpha: float = FIGURE_ALPHA) -> np.ndarray:
    """t_{n-1}(1 - alpha/2) sqrt(1 + 1/n): the half width in orders' sds (0 for one order)."""
    from scipy import stats  # on first use: a warm audit judges nothing

    n = np.asarray(n_orders, dtype=np.float64)
    df = np.maximum(n - 1, 1)
    return np.where(n > 1, stats.t.ppf(1 - alpha / 2, df) * np.sqrt(1 + 1 / n), 0.0)


def interval_bounds(
    values: np.ndarray,
    slack: np.ndarray | float = 0.0,
    scale: str = "linear",
    alpha: float = FIGURE_ALPHA,
) -> tuple[np.ndarray, np.ndarray]:
    """The prediction intervals (low, high) of `values` [..., n orders], widened by `slack`."""
    s = scale_named(scale)
    y = s.to_scale(values)
    n = y.shape[-1]
    sd = y.std(axis=-1, ddof=1) if n > 1 else np.zeros(y.shape[:-1])
    return _ends(s, y.mean(axis=-1), t_quantile(n, alpha) * sd, slack)


def _ends(s: Scale, mean: np.ndarray, half: np.ndarray, slack: np.ndarray | float) -> tuple:
    """mean -+ half mapped back from the scale, widened by `slack`, kept in the domain."""
    low = np.maximum(s.back(mean - half) - slack, s.low)
    return low, np.minimum(s.back(mean + half) + slack, s.high)


def conclusive(low: float, high: float, published: float, slack: float) -> bool:
    """Whether an interval excludes 0 and is at most +- CONCLUSIVE_HALF_WIDTH of the figure."""
    if published == 0:
        return (high - low) / 2 <= 2 * slack
    return not low <= 0 <= high and (high - low) / 2 <= CONCLUSIVE_HALF_WIDTH * abs(published)


def orders_to_conclude(
    mean: float,
    sd: float,
    slack: float,
    published: float,
    scale: str = "linear",
    alpha: float = FIGURE_ALPHA,
) -> int | None:
    """The fewest orders whose interval would be conclusive at this mean and sd, or None."""
    s = scale_named(scale)

    def fits(n: int) -> bool:
        return _conclusive_at(n, s, mean, sd, slack, published, alpha)

    if sd == 0:
        return 1 if fits(1) else None
    if not fits(MAX_ORDERS):
        return None
    return bisect.bisect_left(range(2, MAX_ORDERS), True, key=fits) + 2  # width falls with n


def _conclusive_at(
    n: int, s: Scale, mean: float, sd: float, slack: float, published: float, alpha: float
) -> bool:
    """Whether n orders of this mean and sd (on `s`) would give a conclusive interval."""
    low, high = _ends(s, np.float64(mean), float(t_quantile(n, alpha)) * sd, slack)
    return conclusive(float(low), float(high), published, slack)


def detectable_shift(
    sd: float,
    n_orders: int,
    slack: float,
    scale: str = "linear",
    mean: float = 0.0,
    alpha: float = FIGURE_ALPHA,
) -> float:
    """The least shift of the figure refuted with probability POWER_TARGET (simulated), or inf."""
    s = scale_named(scale)
    rng = np.random.default_rng(0)
    orders = mean + rng.standard_normal((POWER_DRAWS, n_orders)) * sd
    low, high = interval_bounds(s.back(orders), slack, scale, alpha)
    noise = rng.standard_normal(POWER_DRAWS) * sd
    printing = rng.uniform(-slack, slack, POWER_DRAWS)
    centre = float(s.back(np.float64(mean)))

    def caught(shift: float) -> float:
        up = s.back(mean + shift + noise) + printing
        down = s.back(mean - shift + noise) + printing
        return float(np.mean((up < low) | (up > high)) + np.mean((down < low) | (down > high))) / 2

    top = max(sd, 1e-300) if scale != "linear" else max(sd, slack, 1e-300)
    # Past a factor of e^40 on a log or logit scale a rule that catches nothing never will.
    limit = 1e6 * max(sd, slack, 1.0) if scale == "linear" else 40.0 + 10 * sd
    while caught(top) < POWER_TARGET:
        if top > limit:
            return math.inf
        top *= 2
    bottom = 0.0
    for _ in range(40):
        middle = (bottom + top) / 2
        bottom, top = (bottom, middle) if caught(middle) >= POWER_TARGET else (middle, top)
    return abs(float(s.back(np.float64(mean + top))) - centre)


def judge_figure(
    values: Sequence[float],
    printed: str,
    scale: str = "linear",
    copies: int = 0,
    power: bool = True,
    alpha: float = FIGURE_ALPHA,
) -> FigureVerdict:
    """`printed` against its value in each distinct order (`power=False`: no power figures;
    `alpha`: the false-refutation rate of this look)."""
    from scipy import stats  # on first use: a warm audit judges nothing

    h = half_unit(printed)
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or len(x) == 0 or not np.all(np.isfinite(x)):
        raise ValueError(f"a figure needs one finite value per order; got {values!r}")
    # linear where a value sits on its domain's edge (a share of 0), which log/logit cannot map
    s = scale_named(scale if scale_named(scale).inside(x) else "linear")
    scale, y = s.name, s.to_scale(x)
    n = len(x)
    mean, sd = float(y.mean()), float(y.std(ddof=1)) if n > 1 else 0.0
    low, high = (float(b) for b in _ends(s, np.float64(mean), t_quantile(n, alpha) * sd, h))
    published = float(printed)
    t_score = p_value = None
    if sd > 0 and n > 1:
        # The distance beyond printing's slack on the scale, in sds of a draw.
        nearest = s.clip(min(max(float(s.back(np.float64(mean))), published - h), published + h))
        nearest = min(max(nearest, np.nextafter(s.low, 1)), np.nextafter(s.high, 0))
        t_score = (float(s.to_scale(np.float64(nearest))) - mean) / (sd * math.sqrt(1 + 1 / n))
        p_value = float(2 * stats.t.sf(abs(t_score), n - 1))
    shift = detectable_shift(sd, n, h, scale=scale, mean=mean, alpha=alpha) if power else math.inf
    collapsed = n == 1 and copies > 0
    pinnable = _conclusive_at(MAX_ORDERS, s, mean, sd, h, published, alpha)
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
        if collapsed or not power or not pinnable
        else orders_to_conclude(mean, sd, h, published, scale, alpha),
        scale=scale,
        copies=copies,
        pinnable=pinnable,
    )


def power(shift: float, n_orders: int) -> float:
    """The probability that a figure `shift` order sds off is refuted: the noncentral t."""
    from scipy import stats  # on first use: a warm audit judges nothing

    if n_orders < 2:
        raise ValueError("with one order there is no spread: the rule is exact reproduction")
    df, scale = n_orders - 1, math.sqrt(1 + 1 / n_orders)
    crit = float(stats.t.ppf(1 - FIGURE_ALPHA / 2, df))
    ncp = abs(shift) / scale
    far_tail = float(stats.nct.cdf(-crit, df, ncp))  # NaN where it underflows (far below 1e-10)
    return float(stats.nct.sf(crit, df, ncp)) + (far_tail if math.isfinite(far_tail) else 0.0)
