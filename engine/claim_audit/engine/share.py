"""Bounds on the share p of draws where a qualitative claim holds, its verdict (VERDICTS.md)."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from .prediction import scale_named
from .verdict import Region

SHARE_ALPHA = 0.05  # the rate at which each bound on p may be wrong
HOLDS_AT = 0.8
REFUTED_AT = 0.2
SENSITIVE_BETWEEN = (0.1, 0.9)  # between these and HOLDS_AT / REFUTED_AT, either verdict is right
MIN_NORMAL_DRAWS = 3  # Shapiro-Wilk needs 3
NORMALITY_P = 0.05
UNMOVED = 1e-12  # draws this close (relatively) differ only in float64 rounding
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


@functools.cache  # the resampled verdicts ask for the same few counts thousands of times
def count_bounds(k: int, n: int, alpha: float = SHARE_ALPHA) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds on p from k of n draws, each wrong at most `alpha`."""
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"need 0 <= k <= n, n >= 1; got k={k}, n={n}")
    low = 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha, k + 1, n - k))
    return low, high


def draws_to_conclude(k: int, n: int) -> int | None:
    """The fewest draws (> n) whose counts would conclude at share k / n, or None."""
    share = k / n
    for m in range(n + 1, MAX_DRAWS + 1):
        if verdict_of(*count_bounds(round(share * m), m)) != "inconclusive":
            return m
    return None


def _box(y: np.ndarray, alpha: float) -> tuple[float, float, float, float]:
    """A 1 - alpha confidence box for the draws' (mean low, mean high, sd low, sd high)."""
    n = len(y)
    mean, sd = float(y.mean()), float(y.std(ddof=1))
    t, chi2_high, chi2_low = _box_quantiles(n, alpha)
    half = t * sd / math.sqrt(n)
    sd_low = sd * math.sqrt((n - 1) / chi2_high)
    sd_high = sd * math.sqrt((n - 1) / chi2_low)
    return mean - half, mean + half, sd_low, sd_high


@functools.cache  # one per count of draws and alpha, asked for thousands of times
def _box_quantiles(n: int, alpha: float) -> tuple[float, float, float]:
    q = 1 - alpha / 4
    return (
        float(stats.t.ppf(q, n - 1)),
        float(stats.chi2.ppf(q, n - 1)),
        float(stats.chi2.ppf(alpha / 4, n - 1)),
    )


def _normal_bounds(y: np.ndarray, region: Region, alpha: float) -> tuple[float, float]:
    """Bounds on P(X in region) for normal draws `y`: the extremes over the confidence box."""
    mean_low, mean_high, sd_low, sd_high = _box(y, alpha)
    means = np.linspace(mean_low, mean_high, _GRID)
    middle = (region.low + region.high) / 2 if math.isfinite(region.low + region.high) else None
    if middle is not None and mean_low < middle < mean_high:
        means = np.append(means, middle)  # where a two-sided region's share peaks
    sds = np.geomspace(sd_low, sd_high, _GRID)[None, :]
    cdf = special.ndtr  # the standard normal's cdf (stats.norm.cdf's own, without its checks)
    shares = cdf((region.high - means[:, None]) / sds) - cdf((region.low - means[:, None]) / sds)
    return float(shares.min()), float(shares.max())


def _cantelli(distance: float, sd: float) -> float:
    """Cantelli's bound on P(X beyond a point `distance` past its mean), any distribution."""
    return 1.0 if distance <= 0 else sd**2 / (sd**2 + distance**2)


def _free_bounds(y: np.ndarray, region: Region, alpha: float) -> tuple[float, float]:
    """Bounds on P(X in region) for draws of any shape: Cantelli at the box's worst corner."""
    mean_low, mean_high, _, sd = _box(y, alpha)
    missed = _cantelli(mean_low - region.low, sd) + _cantelli(region.high - mean_high, sd)
    reached = min(_cantelli(region.low - mean_high, sd), _cantelli(mean_low - region.high, sd))
    return max(0.0, 1.0 - missed), reached


def margin_bounds(
    values: np.ndarray, regions: Sequence[Region], scales: Sequence[str], alpha: float
) -> tuple[tuple[float, float], str] | None:
    """Bounds on p from the margins of `values` [draws, thresholds] and their method, or None."""
    m = values.shape[1]
    lows, highs, methods = [], [], set()
    for column, given, scale_name in zip(values.T, regions, scales, strict=True):
        scale = scale_named(scale_name)
        if not scale.inside(column):
            return None
        y = scale.to_scale(column)
        ends = [float(scale.to_scale(scale.clip(b))) for b in (given.low, given.high)]
        # p is the same for the draws and the region scaled alike: by a power of two, exactly,
        # to |draws| < 1, so that tiny or subnormal draws' spread squares without underflow
        unit = math.ldexp(1.0, math.frexp(float(np.abs(y).max()))[1])
        ends = [e / unit if abs(e / unit) < FAR else math.copysign(math.inf, e) for e in ends]
        y, region = y / unit, Region(*ends, given.closed)
        if float(np.ptp(y)) <= UNMOVED * float(np.abs(y).max()):
            low = high = float(region.contains(float(y[0])))
            methods.add("unmoved values")
        elif len(y) >= MIN_NORMAL_DRAWS and float(stats.shapiro(y).pvalue) >= NORMALITY_P:
            low, high = _normal_bounds(y, region, alpha / m)
            methods.add("normal margins")
        else:
            low, high = _free_bounds(y, region, alpha / m)
            methods.add("Cantelli margins")
        lows.append(low)
        highs.append(high)
    method = " and ".join(sorted(methods))
    return (max(0.0, 1.0 - sum(1.0 - low for low in lows)), min(highs)), method


def share_bounds(
    holds: Sequence[bool],
    values: np.ndarray | None = None,
    regions: Sequence[Region] = (),
    scales: Sequence[str] = (),
    copies: int = 0,
) -> ShareBounds:
    """What the distinct draws say of p (`values`: the numbers a threshold claim compares)."""
    k, n = sum(bool(h) for h in holds), len(holds)
    if n == 1 and copies:
        return ShareBounds(0.0, 1.0, "collapsed")
    if values is not None and len(regions):
        margins = margin_bounds(np.asarray(values, np.float64), regions, scales, SHARE_ALPHA / 2)
        if margins is not None:
            (low, high), method = margins
            counted = count_bounds(k, n, SHARE_ALPHA / 2)
            low, high = max(counted[0], low), min(counted[1], high)
            if low <= high:
                return ShareBounds(low, high, f"counts and {method}")
    return ShareBounds(*count_bounds(k, n), "counts")
