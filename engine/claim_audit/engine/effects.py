"""A comparative claim as data (`Comparison`): its effects and the regions where it holds."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .verdict import Judgement, Region, Threshold

PerSeed = Mapping[str, Sequence[Mapping[str, Any]]]  # per group, each seed's figures in order


@dataclass(frozen=True)
class Effect:
    """One measured quantity of a claim: `statistic` maps a subject to a float; `null`: the
    value of no difference; `inputs`: the per-seed figures it reads."""

    name: str
    statistic: Callable[[Any], float]
    region: Region
    null: float | None = None
    inputs: tuple[str, ...] = ()
    unit: str = "ratio"
    scale: str = "linear"


@dataclass(frozen=True)
class Comparison:
    """A claim holding when each effect lies in its region (`extreme`: no seed bootstrap)."""

    claim_id: str
    effects: tuple[Effect, ...]
    per_seed: bool = True
    extreme: bool = False

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

    def holds(self, subject: Any) -> bool:
        """Whether the claim holds on `subject`."""
        return self.holds_for(self.values(subject))


def ranking(
    claim_id: str,
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
            f"{claim_id}: a ranking needs one or more distinct rivals other than {best!r}; "
            f"got {list(rivals)}"
        )
    region = Region(high=0, closed=False) if lower_is_better else Region(low=0, closed=False)

    def margin(rival: str) -> Callable[[Any], float]:
        return lambda subject: score(subject, best) - score(subject, rival)

    effects = (Effect(f"{best} - {r}", margin(r), region, 0.0, unit=unit) for r in rivals)
    return Comparison(claim_id, tuple(effects))


def safe_ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator; inf (or NaN for 0 / 0) instead of an error at 0."""
    if denominator == 0:
        return math.nan if numerator == 0 else math.copysign(math.inf, numerator)
    return numerator / denominator
