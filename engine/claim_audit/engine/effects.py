"""A comparative claim as data: the effects it measures and the regions where it holds.

A `Comparison` is the rule of a comparative claim: the claim's body judges with it
(`Comparison.judge`), and the robustness sweeps (other seeds, binnings, test-example
resamples) re-evaluate the same object.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .verdict import Judgement, Region, Threshold

PerSeed = Mapping[str, Sequence[Mapping[str, Any]]]
"""Per-seed figures, what a comparison over several seeds reads: per group (a model), one
mapping of figures per seed, in seed order."""


@dataclass(frozen=True)
class Effect:
    """One measured quantity of a claim.

    `statistic` maps what the claim is evaluated on (per-seed figures of several seeds, or
    one run) to a float; `null` is the
    value of "no difference" (0 for a gap, 1 for a ratio), `None` where there is none;
    `inputs` names the per-seed figures the statistic reads (for a bootstrap over test examples;
    empty where the statistic reads anything else); `unit` labels its axis; `scale` is where
    its draws are judged ("log" for a ratio, "logit" for a share; claim_audit.engine.prediction).
    """

    name: str
    statistic: Callable[[Any], float]
    region: Region
    null: float | None = None
    inputs: tuple[str, ...] = ()
    unit: str = "ratio"
    scale: str = "linear"


@dataclass(frozen=True)
class Comparison:
    """A comparative claim: it holds when every one of its effects lies in its region.

    `per_seed`: whether the claim can be evaluated on a single seed (a ratio of seed means
    can; a spread across seeds cannot). `extreme`: the statistic reads the most extreme seed
    (a maximum, an argmin), for which a bootstrap over seeds is not valid. The claim's
    verdict reads the regions as they are in each float order; the order noise shows as
    orders that disagree (claim_audit.engine.claim), not as a wider region.
    """

    claim_id: str
    effects: tuple[Effect, ...]
    per_seed: bool = True
    extreme: bool = False

    def judge(self, subject: Any, *, published: str | None = None) -> Judgement:
        """The claim on `subject` as the audit records it: every effect's value against its
        region (one definition for the test, the sweeps and the report). A claim body leaves
        `published` out: the claim's own is used."""
        values = self.values(subject)
        measured = (
            values[0]
            if len(values) == 1
            else {e.name: v for e, v in zip(self.effects, values, strict=True)}
        )
        regions = "; ".join(str(e.region) for e in self.effects)
        return Judgement(
            self.holds_for(values),
            published,
            measured,
            regions,
            thresholds=tuple(
                Threshold(e.name, v, e.region, e.scale)
                for e, v in zip(self.effects, values, strict=True)
            ),
        )

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
    """The claim "`best` ranks first among `rivals`" ("LR is closest to the diagonal") as a
    `Comparison` whose effects are its margins: for each rival, `score(subject, best) -
    score(subject, rival)`, which must be below 0 (above 0 where higher is better). A margin
    says how far each draw is from a change of rank, so the verdict follows the share of
    draws in which `best` leads every rival, bounded by those margins (docs/VERDICTS.md).

    Raises:
      ValueError: no rival, a rival named twice, or `best` among the rivals.
    """
    rivals = tuple(rivals)
    if not rivals or len(set(rivals)) != len(rivals) or best in rivals:
        raise ValueError(
            f"{claim_id}: a ranking needs one or more distinct rivals other than {best!r}; "
            f"got {list(rivals)}"
        )
    region = Region(high=0, closed=False) if lower_is_better else Region(low=0, closed=False)
    return Comparison(
        claim_id,
        tuple(
            Effect(
                f"{best} - {rival}",
                lambda subject, rival=rival: score(subject, best) - score(subject, rival),
                region,
                null=0.0,
                unit=unit,
            )
            for rival in rivals
        ),
    )


def safe_ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator; inf (or NaN for 0 / 0) instead of an error at 0."""
    if denominator == 0:
        return math.nan if numerator == 0 else math.copysign(math.inf, numerator)
    return numerator / denominator
