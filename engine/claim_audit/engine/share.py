"""Bounds on the share p of draws where a qualitative claim holds, its verdict (VERDICTS.md)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special

from .prediction import scale_named
from .verdict import Region

SHARE_ALPHA = 0.05  # the rate at which each bound on p may be wrong, over all of a claim's looks
HOLDS_AT = 0.8
REFUTED_AT = 0.2
SENSITIVE_BETWEEN = (0.1, 0.9)  # between these and HOLDS_AT / REFUTED_AT, either verdict is right
MIN_NORMAL_DRAWS = 3  # Shapiro-Wilk needs 3
NORMALITY_P = 0.05
FLOAT_NOISE = 2.0**-20  # relative: about 8 float32 units in the last place
NEAR_COPY = 0.01  # draws closer than this share of their sd are one point to the shape test
FAR = 2.0**64  # from draws below 1 in size, a region's end this far is as far as infinity
MAX_DRAWS = 1000  # the most draws `draws_to_conclude` considers
_GRID = 161


@dataclass(frozen=True)
class ShareBounds:
    """What the draws say of p: confidence bounds, and how they were had."""

    low: float
    high: float
    method: str

    @property
    def verdict(self) -> str:
        """holds, refuted, sensitive or inconclusive."""
        return "inconclusive" if self.method == "collapsed" else verdict_of(self.low, self.high)


def verdict_of(low: float, high: float) -> str:
    """The verdict of confidence bounds [low, high] on p."""
    if low >= HOLDS_AT:
        return "holds"
    if high <= REFUTED_AT:
        return "refuted"
    if low > SENSITIVE_BETWEEN[0] and high < SENSITIVE_BETWEEN[1]:
        return "sensitive"
    return "inconclusive"


def agree(a: float, b: float) -> bool:
    """Whether two values differ by no more than float rounding (FLOAT_NOISE, relative)."""
    return a == b or abs(a - b) <= FLOAT_NOISE * max(abs(a), abs(b))


@functools.cache  # the resampled verdicts ask for the same few counts thousands of times
def count_bounds(k: int, n: int, alpha: float = SHARE_ALPHA) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds on p from k of n draws, each wrong at most `alpha`."""
    from scipy import stats  # on first use: a warm audit judges nothing

    if not 0 <= k <= n or n < 1:
        raise ValueError(f"need 0 <= k <= n, n >= 1; got k={k}, n={n}")
    low = 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha, k + 1, n - k))
    return low, high


@dataclass(frozen=True)
class Margins:
    """One compared value over the draws, on its scale: what the margins route reads of it."""

    mean: float
    sd: float
    method: str  # "unmoved values", "normal margins" or "Cantelli margins"
    region: Region  # on the scale


def _box(mean: float, sd: float, n: int, alpha: float) -> tuple[float, float, float, float]:
    """A 1 - alpha confidence box for the draws' (mean low, mean high, sd low, sd high)."""
    t, chi2_high, chi2_low = _box_quantiles(n, alpha)
    half = t * sd / math.sqrt(n)
    sd_low = sd * math.sqrt((n - 1) / chi2_high)
    sd_high = sd * math.sqrt((n - 1) / chi2_low)
    return mean - half, mean + half, sd_low, sd_high


@functools.cache  # one per count of draws and alpha, asked for thousands of times
def _box_quantiles(n: int, alpha: float) -> tuple[float, float, float]:
    from scipy import stats  # on first use: a warm audit judges nothing

    q = 1 - alpha / 4
    return (
        float(stats.t.ppf(q, n - 1)),
        float(stats.chi2.ppf(q, n - 1)),
        float(stats.chi2.ppf(alpha / 4, n - 1)),
    )


def _normal_bounds(m: Margins, n: int, alpha: float) -> tuple[float, float]:
    """Bounds on P(X in region) for normal draws: the extremes over the confidence box."""

    region = m.region
    mean_low, mean_high, sd_low, sd_high = _box(m.mean, m.sd, n, alpha)
    if math.isinf(region.low) or math.isinf(region.high):
        # One-sided: the share is monotone in the mean, and in the sd at any mean, so its
        # extremes over the box lie at its corners.
        means, sds = np.array([mean_low, mean_high]), np.array([sd_low, sd_high])
    else:
        means = np.linspace(mean_low, mean_high, _GRID)
        middle = (region.low + region.high) / 2
        if mean_low < middle < mean_high:
            means = np.append(means, middle)  # where a two-sided region's share peaks
        sds = np.geomspace(sd_low, sd_high, _GRID)
    cdf = special.ndtr  # the standard normal's cdf (stats.norm.cdf's own, without its checks)
    means, sds = means[:, None], sds[None, :]
    shares = cdf((region.high - means) / sds) - cdf((region.low - means) / sds)
    return float(shares.min()), float(shares.max())


def _cantelli(distance: float, sd: float) -> float:
    """Cantelli's bound on P(X beyond a point `distance` past its mean), any distribution."""
    return 1.0 if distance <= 0 else sd**2 / (sd**2 + distance**2)


def _free_bounds(m: Margins, n: int, alpha: float) -> tuple[float, float]:
    """Bounds on P(X in region) for draws of any shape: Cantelli at the box's worst corner."""
    region = m.region
    mean_low, mean_high, _, sd = _box(m.mean, m.sd, n, alpha)
    missed = _cantelli(mean_low - region.low, sd) + _cantelli(region.high - mean_high, sd)
    reached = min(_cantelli(region.low - mean_high, sd), _cantelli(mean_low - region.high, sd))
    return max(0.0, 1.0 - missed), reached


def _points(y: np.ndarray, gap: float) -> np.ndarray:
    """The distinct points of `y`, sorted: a value within `gap` of the last one kept merges."""
    ordered = np.sort(y)
    kept = [ordered[0]]
    for value in ordered[1:]:
        if value - kept[-1] > gap:
            kept.append(value)
    return np.array(kept)


def _looks_normal(y: np.ndarray) -> bool:
    """Shapiro-Wilk on the draws' distinct points (near-copies, within NEAR_COPY of their sd,
    are one point: ties and tight clusters say nothing of the shape), when there are 3."""
    from scipy import stats  # on first use: a warm audit judges nothing

    points = _points(y, NEAR_COPY * float(y.std(ddof=1)))
    if len(points) < MIN_NORMAL_DRAWS:
        return False
    z = (points - points.mean()) / points.std()  # the test is scale-free; tiny values are not
    return float(stats.shapiro(z).pvalue) >= NORMALITY_P


def margins_of(column: np.ndarray, given: Region, scale_name: str) -> Margins | None:
    """One compared value's `Margins` over the draws, or None off its scale's domain."""
    scale = scale_named(scale_name)
    if not scale.inside(column):
        return None
    y = scale.to_scale(column)
    ends = [float(scale.to_scale(scale.clip(b))) for b in (given.low, given.high)]
    # p is the same for the draws and the region scaled alike: by a power of two, exactly, to
    # |draws| < 1, so that tiny or subnormal draws' spread squares without underflow
    unit = math.ldexp(1.0, math.frexp(float(np.abs(y).max()))[1])
    ends = [e / unit if abs(e / unit) < FAR else math.copysign(math.inf, e) for e in ends]
    y, region = y / unit, Region(*ends, given.closed)
    mean = float(y.mean())
    if len(y) < 2 or all(agree(float(v), float(y[0])) for v in y):
        return Margins(mean, 0.0, "unmoved values", region)
    sd = float(y.std(ddof=1))
    method = "normal margins" if _looks_normal(y) else "Cantelli margins"
    return Margins(mean, sd, method, region)


def margin_bounds(margins: Sequence[Margins], n: int, alpha: float) -> tuple[float, float]:
    """Bounds on p from each compared value's margins over n draws (Bonferroni over them)."""
    lows, highs = [], []
    for m in margins:
        if m.method == "unmoved values":
            low = high = float(m.region.contains(m.mean))
        elif m.method == "normal margins":
            low, high = _normal_bounds(m, n, alpha / len(margins))
        else:
            low, high = _free_bounds(m, n, alpha / len(margins))
        lows.append(low)
        highs.append(high)
    return max(0.0, 1.0 - sum(1.0 - low for low in lows)), min(highs)


def _bounds(k: int, n: int, margins: Sequence[Margins] | None, alpha: float) -> ShareBounds:
    """The counts' bounds, intersected with the margins' where there are any (alpha split)."""
    if margins:
        low, high = margin_bounds(margins, n, alpha / 2)
        counted = count_bounds(k, n, alpha / 2)
        low, high = max(counted[0], low), min(counted[1], high)
        if low <= high:
            method = " and ".join(sorted({m.method for m in margins}))
            return ShareBounds(low, high, f"counts and {method}")
    return ShareBounds(*count_bounds(k, n, alpha), "counts")


def share_bounds(
    holds: Sequence[bool],
    values: np.ndarray | None = None,
    regions: Sequence[Region] = (),
    scales: Sequence[str] = (),
    copies: int = 0,
    alpha: float = SHARE_ALPHA,
) -> ShareBounds:
    """What the distinct draws say of p (`values`: the numbers a threshold claim compares;
    `alpha`: the error rate of each bound, the rule's share of SHARE_ALPHA at this look)."""
    k, n = sum(bool(h) for h in holds), len(holds)
    if n == 1 and copies:
        return ShareBounds(0.0, 1.0, "collapsed")
    return _bounds(k, n, _all_margins(values, regions, scales), alpha)


def _all_margins(
    values: np.ndarray | None, regions: Sequence[Region], scales: Sequence[str]
) -> list[Margins] | None:
    if values is None or not len(regions):
        return None
    columns = np.asarray(values, np.float64).T
    margins = [margins_of(c, r, s) for c, r, s in zip(columns, regions, scales, strict=True)]
    return None if any(m is None for m in margins) else margins  # type: ignore[return-value]


def draws_to_conclude(
    holds: Sequence[bool],
    values: np.ndarray | None = None,
    regions: Sequence[Region] = (),
    scales: Sequence[str] = (),
    alpha: float = SHARE_ALPHA,
    limit: int | None = None,
) -> int | None:
    """The fewest draws (more than these) at which the rule that judges these draws would
    conclude, were the new draws like these (the same share holding, the same margins), or
    None within `limit` (MAX_DRAWS). The rule's own `share_bounds`, at its `alpha`, decides."""
    k, n = sum(bool(h) for h in holds), len(holds)
    margins = _all_margins(values, regions, scales)
    for m in range(n + 1, (limit or MAX_DRAWS) + 1):
        if _bounds(round(k / n * m), m, margins, alpha).verdict != "inconclusive":
            return m
    return None
