"""A qualitative claim over valid float orders: the share of draws in which it holds.

Each valid order of the recipe (the documents' own, another fusion, a one-ulp twin) is a
draw of what another valid computation gives. A qualitative claim ("T > 2", "three to four
times", an identity) holds in some share p of all such computations. The verdict says where
p lies, with error control in both directions (an indifference-zone design, as in
statistical model checking):

- **holds**: p >= HOLDS_AT is shown at confidence 1 - SHARE_ALPHA (its lower bound);
- **refuted**: p <= REFUTED_AT, likewise (its upper bound);
- **sensitive**: p lies confidently between SENSITIVE_BETWEEN: the claim depends on the
  order (on the machine);
- **inconclusive**: the draws cannot yet tell; `draws_to_conclude` says how many would.

p's confidence bounds come from the counts (Clopper-Pearson: k of n draws hold; no
distributional assumption), and, for a claim that compares numbers with thresholds, also
from the numbers' margins: on the scale of each quantity (log for a ratio, logit for a
share: claim_audit.engine.scales) p is bounded over a joint confidence box for the
draws' mean and sd, taking the draws as normal where they look it (Shapiro-Wilk, at least
MIN_NORMAL_DRAWS draws) and otherwise by Cantelli's inequality, which holds for any shape
(two modes, a few discrete values). A draw far from its threshold then counts for more than
"one more draw on the right side". Both routes run at SHARE_ALPHA / 2 and their bounds are
intersected (Bonferroni): valid whichever route is sharper. Where they contradict each
other the counts alone decide.

Copies are not draws: an order whose results repeat another's bit for bit (a perturbation
that did not take) counts once (`Orders` digests, claim_audit.orders). Where every
order is one copy, the orders sampled nothing and the claim is *inconclusive* ("the draws
collapsed"), never held or refuted on them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .scales import scale_named
from .verdict import Region

SHARE_ALPHA = 0.05
"""The rate at which each bound on p may be wrong: a claim with p < HOLDS_AT reads *holds*
at most this often, one with p > REFUTED_AT reads *refuted* at most this often, and so on
(claims/properties/test_share_rule.py measures the rates)."""
HOLDS_AT = 0.8
"""A claim holds when at least 4 in 5 valid computations give it."""
REFUTED_AT = 0.2
"""A claim is refuted when at most 1 in 5 valid computations give it."""
SENSITIVE_BETWEEN = (0.1, 0.9)
"""A claim is sensitive when p is confidently neither almost never nor almost always.
Between HOLDS_AT and 0.9 (and REFUTED_AT and 0.1) either neighbouring verdict is right: the
indifference zones."""
MIN_NORMAL_DRAWS = 3
"""The fewest distinct draws for the normal route (Shapiro-Wilk needs 3)."""
NORMALITY_P = 0.05
"""Draws whose Shapiro-Wilk p-value is below this are not taken as normal."""
UNMOVED = 1e-12
"""Draws of a value that differ by at most this share of it differ only in the rounding of
the statistic itself (float64): the value did not move."""
MAX_DRAWS = 1000
"""The most draws `draws_to_conclude` considers."""
_GRID = 161


@dataclass(frozen=True)
class ShareBounds:
    """What the draws say of p, the share of valid computations in which a claim holds."""

    holds: int
    draws: int
    low: float
    high: float
    method: str
    copies: int = 0  # draws that repeat another bit for bit, left out of `draws`

    @property
    def verdict(self) -> str:
        """holds, refuted, sensitive or inconclusive (see the module's docstring)."""
        if self.method == "collapsed":
            return "inconclusive"
        return verdict_of(self.low, self.high)


def verdict_of(low: float, high: float) -> str:
    """The verdict of confidence bounds [low, high] on p."""
    if low >= HOLDS_AT:
        return "holds"
    if high <= REFUTED_AT:
        return "refuted"
    if low > SENSITIVE_BETWEEN[0] and high < SENSITIVE_BETWEEN[1]:
        return "sensitive"
    return "inconclusive"


def count_bounds(k: int, n: int, alpha: float = SHARE_ALPHA) -> tuple[float, float]:
    """One-sided Clopper-Pearson bounds on p from k of n draws, each wrong at most `alpha`."""
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"need 0 <= k <= n, n >= 1; got k={k}, n={n}")
    low = 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))
    high = 1.0 if k == n else float(stats.beta.ppf(1 - alpha, k + 1, n - k))
    return low, high


def draws_to_conclude(k: int, n: int, alpha: float = SHARE_ALPHA) -> int | None:
    """The fewest draws, more than n, whose counts alone would give a verdict other than
    inconclusive, if the share held stays k / n; None when no number up to MAX_DRAWS would."""
    share = k / n
    for m in range(n + 1, MAX_DRAWS + 1):
        if verdict_of(*count_bounds(round(share * m), m, alpha)) != "inconclusive":
            return m
    return None


def _share_in(region: Region, mean: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """P(X in region) for X ~ N(mean, sd^2), on the region's own (already scaled) bounds."""
    return stats.norm.cdf((region.high - mean) / sd) - stats.norm.cdf((region.low - mean) / sd)


def _box(y: np.ndarray, alpha: float) -> tuple[float, float, float, float]:
    """A confidence box of level 1 - alpha for the draws' mean and sd: (mean low, mean
    high, sd low, sd high), each side at 1 - alpha / 2 (t and chi-square)."""
    n = len(y)
    mean, sd = float(y.mean()), float(y.std(ddof=1))
    half = float(stats.t.ppf(1 - alpha / 4, n - 1)) * sd / math.sqrt(n)
    sd_low = sd * math.sqrt((n - 1) / float(stats.chi2.ppf(1 - alpha / 4, n - 1)))
    sd_high = sd * math.sqrt((n - 1) / float(stats.chi2.ppf(alpha / 4, n - 1)))
    return mean - half, mean + half, sd_low, sd_high


def _normal_bounds(y: np.ndarray, region: Region, alpha: float) -> tuple[float, float]:
    """Bounds on P(X in region) when the draws `y` are normal: the extremes of that share
    over the confidence box for their mean and sd."""
    mean_low, mean_high, sd_low, sd_high = _box(y, alpha)
    means = np.linspace(mean_low, mean_high, _GRID)
    middle = (region.low + region.high) / 2 if math.isfinite(region.low + region.high) else None
    if middle is not None and mean_low < middle < mean_high:
        means = np.append(means, middle)  # where a two-sided region's share peaks
    sds = np.geomspace(sd_low, sd_high, _GRID)
    shares = _share_in(region, means[:, None], sds[None, :])
    return float(shares.min()), float(shares.max())


def _cantelli(distance: float, sd: float) -> float:
    """Cantelli's bound on P(X beyond a point `distance` past its mean), any distribution
    with that sd; 1 where the point is not past the mean."""
    return 1.0 if distance <= 0 else sd**2 / (sd**2 + distance**2)


def _free_bounds(y: np.ndarray, region: Region, alpha: float) -> tuple[float, float]:
    """Bounds on P(X in region) with no assumption on the draws' shape (two modes, a few
    discrete values): Cantelli's inequality at the confidence box's worst mean and sd."""
    mean_low, mean_high, _, sd = _box(y, alpha)
    missed = _cantelli(mean_low - region.low, sd) + _cantelli(region.high - mean_high, sd)
    reached = min(_cantelli(region.low - mean_high, sd), _cantelli(mean_low - region.high, sd))
    return max(0.0, 1.0 - missed), reached


def _scaled_region(region: Region, scale: str) -> Region:
    s = scale_named(scale)
    with np.errstate(divide="ignore"):
        low, high = (float(s.forward(np.float64(s.clip(b)))) for b in (region.low, region.high))
    return Region(low, high, region.closed)


def _looks_normal(y: np.ndarray) -> bool:
    return len(y) >= MIN_NORMAL_DRAWS and float(stats.shapiro(y).pvalue) >= NORMALITY_P


def margin_bounds(
    values: np.ndarray, regions: Sequence[Region], scales: Sequence[str], alpha: float
) -> tuple[tuple[float, float], str] | None:
    """Bounds on p from the margins of the numbers a threshold claim compares: `values`
    [draws, thresholds], each threshold's region and scale, and how they were had. On its
    scale a threshold's draws are taken as normal where they look it (Shapiro-Wilk), else
    bounded by Cantelli's inequality; a value no draw moved lies in its region or not. The
    claim holds when every threshold does, so p is at least 1 - the sum of each one's miss
    and at most the least of them (each at alpha / m). None where a value leaves its
    scale's domain (its draws then count by the counts alone)."""
    m = values.shape[1]
    lows, highs, methods = [], [], set()
    for i in range(m):
        scale = scale_named(scales[i])
        if not scale.inside(values[:, i]):
            return None
        y = scale.to_scale(values[:, i])
        region = _scaled_region(regions[i], scales[i])
        if float(np.ptp(y)) <= UNMOVED * float(np.abs(y).max()):
            inside = float(region.contains(float(y[0])))
            low = high = inside
            methods.add("unmoved values")
        elif _looks_normal(y):
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
    alpha: float = SHARE_ALPHA,
) -> ShareBounds:
    """What the distinct draws say of p. `holds[j]`: whether the claim holds in draw j;
    `values` [draws, thresholds]: the numbers a threshold claim compares, with each one's
    region and scale; `copies`: draws left out because they repeated another bit for bit
    (one draw left with copies beside it: the draws collapsed)."""
    k, n = sum(bool(h) for h in holds), len(holds)
    if n == 1 and copies:
        return ShareBounds(k, n, 0.0, 1.0, "collapsed", copies)
    if values is None or not len(regions):
        return ShareBounds(k, n, *count_bounds(k, n, alpha), "counts", copies)
    counted = count_bounds(k, n, alpha / 2)
    margins = margin_bounds(np.asarray(values, np.float64), regions, scales, alpha / 2)
    if margins is not None:
        (low, high), method = margins
        low, high = max(counted[0], low), min(counted[1], high)
        if low <= high:
            return ShareBounds(k, n, low, high, f"counts and {method}", copies)
    return ShareBounds(k, n, *count_bounds(k, n, alpha), "counts", copies)
