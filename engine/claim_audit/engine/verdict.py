"""A claim's judgement in one order (`Judgement`, `Measured`, `Comparison`); `fmt`; `verdict_shares`."""

from __future__ import annotations

import math
import numbers
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

RESAMPLES = 100  # per claim in `verdict_shares`: the shares to about +-0.05
CHANGES_LEVEL = 0.99  # `expected_changes` limit is exceeded with probability 1 - this
PerSeed = Mapping[str, Sequence[Mapping[str, Any]]]  # per group, each seed's figures in order


def fmt(value: Any) -> str:
    """A figure as the audit prints it: 4 significant digits, sequences joined by commas."""
    if isinstance(value, float):  # NaN and infinities print as "nan", "inf"
        if value.is_integer() and abs(value) <= 2**53:
            return f"{value:.0f}"
        return f"{value:.3e}" if abs(value) < 1e-3 else f"{value:.4g}"
    if isinstance(value, list | tuple):
        return ", ".join(fmt(v) for v in value)
    if hasattr(value, "tolist") and hasattr(value, "ndim"):  # a numpy array or scalar
        return fmt(value.tolist())
    if isinstance(value, dict):
        return ", ".join(f"{k}: {fmt(v)}" for k, v in value.items())
    return str(value)


def as_json(value: Any) -> Any:
    """A measured figure as audit.json holds it (a 1-figure tuple as its number)."""
    if hasattr(value, "tolist") and hasattr(value, "ndim"):
        value = value.tolist()
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, list | tuple):
        return as_json(value[0]) if len(value) == 1 else [as_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): as_json(v) for k, v in value.items()}
    return str(value)


@dataclass(frozen=True)
class Region:
    """The values of an effect for which a claim holds: an interval, closed or open."""

    low: float = -math.inf
    high: float = math.inf
    closed: bool = True

    def __post_init__(self) -> None:
        for name in ("low", "high"):
            bound = getattr(self, name)
            if not isinstance(bound, numbers.Real) or isinstance(bound, bool) or math.isnan(bound):
                raise ValueError(f"a region's {name} must be a number; got {bound!r}")
        if self.low > self.high or (not self.closed and self.low == self.high):
            kind = "closed" if self.closed else "open"
            raise ValueError(f"the {kind} region {self.low!r} to {self.high!r} holds no value")

    def contains(self, value: float) -> bool:
        """Whether `value` lies in the region (NaN never does)."""
        return self.low <= value <= self.high if self.closed else self.low < value < self.high

    def __str__(self) -> str:
        if self.low == -math.inf:
            return f"{'<=' if self.closed else '<'} {self.high:g}"
        if self.high == math.inf:
            return f"{'>=' if self.closed else '>'} {self.low:g}"
        brackets = "[]" if self.closed else "()"
        return f"in {brackets[0]}{self.low:g}, {self.high:g}{brackets[1]}"


@dataclass(frozen=True)
class Threshold:
    """One number a threshold claim compares, in one order, and its region and scale."""

    name: str
    value: float
    region: Region
    scale: str = "linear"


@dataclass(frozen=True)
class Judgement:
    """A qualitative claim on one order's results; `inconclusive`: why it cannot be judged;
    `fact`: an identity or a property of the code, which no float order may break (`fact()`)."""

    holds: bool
    published: Any
    measured: Any
    tolerance: Any = "-"
    details: dict[str, Any] = field(default_factory=dict)
    thresholds: tuple[Threshold, ...] = ()
    inconclusive: str | None = None
    fact: bool = False

    def beside(self, **details: Any) -> Judgement:
        """This judgement with `details` recorded beside it (never judged)."""
        return replace(self, details={**self.details, **details})

    def __post_init__(self) -> None:
        if self.thresholds and self.holds != all(
            t.region.contains(t.value) for t in self.thresholds
        ):
            raise ValueError(
                f"holds={self.holds}, but a claim holds exactly when each of its {self.thresholds} does"
            )


@dataclass(frozen=True)
class Measured:
    """A figure claim's figures in one order: as published (printed) and as measured."""

    published: tuple[str, ...]
    measured: tuple[float, ...]
    details: dict[str, Any] = field(default_factory=dict)


_MEAN_SD = re.compile(r"^\s*(\S+)\s*(?:±|\+-|\+/-)\s*(\S+)\s*$")


def mean_and_sd(published: str) -> tuple[str, str] | None:
    """The two printed figures of a mean and its sd, "6.20 ± 1.13" (or "+-", "+/-"), else None."""
    match = _MEAN_SD.match(published)
    return (match[1], match[2]) if match else None


def printed_figures(published: str | tuple[str, ...]) -> tuple[str, ...]:
    """The figures a figure claim's published text prints, one by one."""
    if isinstance(published, tuple):
        return published
    return mean_and_sd(published) or (published,)


@dataclass(frozen=True)
class SecondReading:
    """Another fair reading of a claim's sentence in one order: its words, its value and the
    region where it would hold. Recorded beside the verdict with its result in every order
    and its own verdict by the share rule, never counted (`second_reading`)."""

    reading: str
    value: float
    region: Region


def second_reading(reading: str, value: float, region: Region) -> SecondReading:
    """A second reading of the claim's sentence, returned beside its judgement under a name
    (`.beside(strict=second_reading(...))`, `figure(..., strict=...)`): the record and every
    report show its value, result and own verdict over the orders; it never changes the
    claim's verdict."""
    if not (isinstance(reading, str) and reading.strip()):
        raise ValueError(f"a second reading's words are a non-empty string; got {reading!r}")
    if not isinstance(region, Region):
        raise TypeError(f"a second reading's region is a Region; got {region!r:.60}")
    if not math.isfinite(value := float(value)):
        raise ValueError(f"second reading {reading!r}: its value is {value}, not a finite number")
    return SecondReading(reading, value, region)


def satisfied(
    condition: bool,
    *,
    published: Any = None,
    measured: Any,
    tolerance: Any = "-",
    inconclusive: str | None = None,
    **details: Any,
) -> Judgement:
    """Holds when `condition` is true: a claim comparing no number with a threshold."""
    return Judgement(
        bool(condition), published, measured, tolerance, dict(details), inconclusive=inconclusive
    )


def fact(
    condition: bool,
    *,
    published: Any = None,
    measured: Any,
    tolerance: Any = "-",
    **details: Any,
) -> Judgement:
    """An identity or a property of the code (softmax ignores a shift, a shape, a bit-for-bit
    recomputation): judged as one fact, never as a share of draws. It holds when `condition`
    is true in every order, and is refuted by any order where it is not."""
    return Judgement(bool(condition), published, measured, tolerance, dict(details), fact=True)


def as_float(value: Any, where: str) -> float:
    """`value` as a float; one beyond a float's range is a ValueError saying so."""
    try:
        return float(value)
    except OverflowError:
        raise ValueError(
            f"{where} {value!r:.40}... is too large for a float (beyond ±1.8e308); the experiment or its input is broken, so there is no verdict"
        ) from None


def within(
    value: float,
    region: Region,
    *,
    published: Any = None,
    name: str = "",
    measured: Any = None,
    scale: str = "linear",
    **details: Any,
) -> Judgement:
    """A threshold claim: holds when `value` lies in `region`, judged over orders on `scale`."""
    if isinstance(value, bool | np.bool_) or getattr(value, "dtype", None) == np.bool_:
        raise TypeError(
            f"within(...) compares a number; got the bool {value!r} ({name or 'unnamed'})"
        )
    value = as_float(value, f"within(...) was given {name or 'a value'}:")
    threshold = Threshold(name, value, region, scale)
    shown = value if measured is None else measured
    return Judgement(region.contains(value), published, shown, str(region), details, (threshold,))


@dataclass(frozen=True)
class Effect:
    """A claim's measured quantity (`null`: its value at no difference; `inputs`: its figures)."""

    name: str
    statistic: Callable[[Any], float]
    region: Region
    null: float | None = None
    inputs: tuple[str, ...] = ()
    unit: str = "ratio"
    scale: str = "linear"


@dataclass(frozen=True)
class Comparison:
    """A claim holding when each effect lies in its region (`extreme`: no seed bootstrap).
    Its claim's id is the claim's to give (`rule=` of the claim, or `for_claim`)."""

    effects: tuple[Effect, ...]
    per_seed: bool = True
    extreme: bool = False
    claim_id: str | None = field(default=None, init=False)

    def for_claim(self, claim_id: str) -> Comparison:
        """This comparison as the rule of the claim `claim_id`, as `Claims.rules()` gives it."""
        bound = replace(self)
        object.__setattr__(bound, "claim_id", claim_id)
        return bound

    def claim(self) -> str:
        """The id of the claim this comparison is the rule of; a ValueError where it has none."""
        if self.claim_id is None:
            effects = ", ".join(repr(e.name) for e in self.effects)
            raise ValueError(
                f"the comparison of {effects} is no claim's rule: give it to its claim (rule=...) and take it from the claims' registry (Claims.rules()), or name its claim with for_claim(id)"
            )
        return self.claim_id

    def judge(self, subject: Any, *, published: str | None = None) -> Judgement:
        """The claim on `subject`: every effect's value against its region."""
        pairs = list(zip(self.effects, self.values(subject), strict=True))
        measured = pairs[0][1] if len(pairs) == 1 else {e.name: v for e, v in pairs}
        thresholds = tuple(Threshold(e.name, v, e.region, e.scale) for e, v in pairs)
        regions = "; ".join(str(e.region) for e in self.effects)
        holds = self.holds_for([v for _, v in pairs])
        return Judgement(holds, published, measured, regions, thresholds=thresholds)

    def values(self, subject: Any) -> list[float]:
        """Each effect's value on `subject`."""
        return [effect.statistic(subject) for effect in self.effects]

    def holds_for(self, values: list[float]) -> bool:
        """Whether the effect values all lie in their regions."""
        return all(e.region.contains(v) for e, v in zip(self.effects, values, strict=True))


def ranking(
    best: str,
    rivals: Sequence[str],
    score: Callable[[Any, str], float],
    *,
    lower_is_better: bool = True,
    unit: str = "score",
) -> Comparison:
    """The claim "`best` ranks first among `rivals`" as margins of `score`."""
    rivals = tuple(rivals)
    if not rivals or len(set(rivals)) != len(rivals) or best in rivals:
        raise ValueError(
            f"a ranking needs one or more distinct rivals other than {best!r}; got {list(rivals)}"
        )
    region = Region(high=0, closed=False) if lower_is_better else Region(low=0, closed=False)

    def margin(rival: str) -> Callable[[Any], float]:
        return lambda subject: score(subject, best) - score(subject, rival)

    effects = (Effect(f"{best} - {r}", margin(r), region, 0.0, unit=unit) for r in rivals)
    return Comparison(tuple(effects))


def verdict_shares(n: int, verdict_of: Callable[[np.ndarray], str]) -> dict[str, float]:
    """The share of each verdict over RESAMPLES bootstrap resamples of the n draws; a draw
    resampled twice is a copy, and counts once, as the rule counts copies."""
    rng = np.random.default_rng(0)
    counts = Counter(verdict_of(np.unique(rng.integers(0, n, n))) for _ in range(RESAMPLES))
    return {verdict: count / RESAMPLES for verdict, count in sorted(counts.items())}


def change_probability(shares: Mapping[str, float]) -> float:
    """The chance that two independent samples give a claim different verdicts."""
    return 1.0 - sum(share**2 for share in shares.values())


def expected_changes(shares: Iterable[Mapping[str, float]]) -> tuple[float, int]:
    """(mean, limit at CHANGES_LEVEL) of the claims on which two audits differ."""
    probabilities = [change_probability(s) for s in shares]
    distribution = np.array([1.0])
    for p in probabilities:
        distribution = np.convolve(distribution, [1 - p, p])
    limit = int(np.searchsorted(np.cumsum(distribution), CHANGES_LEVEL - 1e-12))
    return float(sum(probabilities)), limit


def crossing(old: str, new: str) -> bool:
    """Whether a verdict crossed between holds and refuted (never a matter of noise)."""
    return {old, new} == {"holds", "refuted"}


def safe_ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator; inf (or NaN for 0 / 0) instead of an error at 0."""
    if denominator == 0:
        return math.nan if numerator == 0 else math.copysign(math.inf, numerator)
    return numerator / denominator
