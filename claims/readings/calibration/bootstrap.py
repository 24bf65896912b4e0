"""Test-image bootstrap of the calibration figures, paired across nets and seeds.

All six nets are scored on the same 10,000 Fashion-MNIST test images and the same
10,000 MNIST images, so one resample of the images (one row of counts) is applied to
every net and seed at once: a comparison of two nets, or of two seeds, is then paired.
The post's subsample AUROCs resample within the post's subsample. Held-out images
(the temperature fit) and training are not resampled: T stays as fitted.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from claim_audit import Comparison, PerSeed, cache, stats

from uncertainty_claims import metrics
from uncertainty_claims.cache import cached
from uncertainty_claims.calibration.evaluation import CalibrationResults, subsample_indices
from uncertainty_claims.calibration.experiment import PUBLISHED_SEEDS, NetRun, Split, cache_key
from uncertainty_claims.calibration.training import TrainConfig
from uncertainty_claims.metrics import resampled
from uncertainty_claims.metrics.classification import PROB_FLOOR
from uncertainty_claims.orders.calibration import calibration_results

CLAIMS_SOURCE = cache.package_digest(__package__)
"""sha256 of this package's source (claims/readings/calibration/), taken at import: the resamples are
computed here, so a change here is another cache entry (lib/cache.py keys lib/ alone)."""

CALIBRATION = ("acc", "ece", "nll", "brier", "ece_T", "nll_T")
OOD = ("auroc.msp", "auroc.maxlogit", "auroc.energy", "auroc.kmax")
SUBSAMPLE = ("auroc_subsample.msp", "auroc_subsample.kmax")
RESAMPLED = CALIBRATION + OOD + SUBSAMPLE
METHOD = (
    "percentile bootstrap over test images (Fashion test and MNIST resampled with "
    "replacement, the same resamples for every net and seed)"
)


def calibration_on(seeds: tuple[int, ...]) -> CalibrationResults:
    """The published seeds in the faithful order (sharing the claims' memo entry:
    `functools.cache` keys `f()` and `f((0, 1, 2))` apart); other seeds in the fast
    scan + vmap order, a valid order as good as any for a sweep over seeds."""
    seeds = tuple(seeds)
    if seeds == PUBLISHED_SEEDS:
        return calibration_results()
    return calibration_results(seeds, order="scan_vmap")


def _calibration_terms(logits: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    """Per-image terms whose (binned) means are accuracy, ECE, NLL and Brier score."""
    probs = metrics.softmax(logits)
    rows = np.arange(len(labels))
    confidence = probs.max(axis=1)
    return {
        "confidence": confidence,
        "correct": (probs.argmax(axis=1) == labels).astype(np.float64),
        "bin": metrics.bin_index(confidence),
        "nll": -np.log(np.clip(probs[rows, labels], PROB_FLOOR, 1.0)),
        "brier": np.sum((probs - np.eye(probs.shape[1])[labels]) ** 2, axis=1),
    }


def _ood_scores(run: NetRun, i: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """(test, MNIST) scores of every OOD channel of seed index `i`, full set and subsample."""
    z_test, z_ood = run.logits_test[i], run.logits_ood[i]
    scores = {
        f"auroc.{name}": (score(z_test), score(z_ood))
        for name, score in (
            ("msp", metrics.msp_score),
            ("maxlogit", metrics.max_logit_score),
            ("energy", metrics.energy_score),
        )
    }
    test, ood = subsample_indices(len(z_test), len(z_ood))
    # Rounded as the post's lists were (see `subsample_aurocs`).
    scores["auroc_subsample.msp"] = (np.round(scores["auroc.msp"][0][test], 3), np.round(scores["auroc.msp"][1][ood], 3))  # fmt: skip
    if run.kmax_test is not None:
        scores["auroc.kmax"] = (run.kmax_test[i], run.kmax_ood[i])
        scores["auroc_subsample.kmax"] = (np.round(run.kmax_test[i][test], 1), np.round(run.kmax_ood[i][ood], 1))  # fmt: skip
    return scores


@dataclass(frozen=True)
class SeedTerms:
    """What one net and seed contributes to the resampled figures, computed once."""

    correct: np.ndarray  # argmax of the logits == label, for the accuracy
    plain: dict[str, np.ndarray]  # `_calibration_terms` of the softmax
    scaled: dict[str, np.ndarray]  # ... and of the softmax at the fitted temperature
    scores: dict[str, tuple[np.ndarray, np.ndarray]]  # `_ood_scores`


def seed_terms(run: NetRun, i: int, labels: np.ndarray, temperature: float) -> SeedTerms:
    """The per-image terms of seed index `i` of `run`, scaled at `temperature` for ECE_T, NLL_T."""
    logits = run.logits_test[i]
    return SeedTerms(
        correct=(logits.argmax(axis=1) == labels).astype(np.float64),
        plain=_calibration_terms(logits, labels),
        scaled=_calibration_terms(metrics.scale_logits(logits, temperature), labels),
        scores=_ood_scores(run, i),
    )


def resampled_figures(terms: SeedTerms, counts: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """[B] values of every figure of one net and seed under one chunk of resamples."""
    test = counts["test"]
    out = {"acc": resampled.mean(terms.correct, test)}
    for suffix, part in (("", terms.plain), ("_T", terms.scaled)):
        out["ece" + suffix] = resampled.binned_gap(
            part["confidence"], part["correct"], part["bin"], test
        )
        out["nll" + suffix] = resampled.mean(part["nll"], test)
    out["brier"] = resampled.mean(terms.plain["brier"], test)
    for name, (pos, neg) in terms.scores.items():
        prefix = "sub_" if name.startswith("auroc_subsample") else ""
        out[name] = resampled.auroc(pos, neg, counts[prefix + "test"], counts[prefix + "ood"])
    return out


@dataclass(frozen=True)
class FigureSamples:
    """B resampled values of every resampled figure: samples[net][figure] is [seeds, B]."""

    seeds: tuple[int, ...]
    b: int
    rng_seed: int
    samples: dict[str, dict[str, np.ndarray]]

    def resample(self, per_seed: PerSeed, r: int) -> PerSeed:
        """`per_seed` with every resampled figure replaced by its value in resample `r`."""
        out: dict[str, list[dict]] = {}
        for net, seeds in per_seed.items():
            out[net] = []
            for i, figures in enumerate(seeds):
                copy = {**figures, "auroc": dict(figures["auroc"])}
                copy["auroc_subsample"] = dict(figures["auroc_subsample"])
                for name, values in self.samples[net].items():
                    group, _, key = name.rpartition(".")
                    (copy[group] if group else copy)[key] = float(values[i, r])
                out[net].append(copy)
        return out

    def effect_samples(self, comparison: Comparison, per_seed: PerSeed) -> np.ndarray:
        """[effects, B]: each effect of `comparison` on every resample."""
        unknown = {n for e in comparison.effects for n in e.inputs} - set(RESAMPLED)
        if unknown or not all(e.inputs for e in comparison.effects):
            raise ValueError(
                f"the effects {[e.name for e in comparison.effects]} read figures that are not resampled: {sorted(unknown)}"
            )
        return np.array([comparison.values(self.resample(per_seed, r)) for r in range(self.b)]).T

    def figure_intervals(self, per_seed: PerSeed) -> dict[str, list[dict]]:
        """Per net and seed, every resampled figure's interval (JSON-able)."""
        from .measures import figure

        return {
            net: [
                {
                    "seed": int(seed),
                    **{
                        name: stats.interval(figure(per_seed[net][i], name), values[i]).to_json()
                        for name, values in self.samples[net].items()
                    },
                }
                for i, seed in enumerate(self.seeds)
            ]
            for net in per_seed
        }


def resample_figures(
    runs: dict[str, NetRun],
    split: Split,
    per_seed: PerSeed,
    *,
    b: int = stats.B,
    seed: int = stats.SEED,
) -> FigureSamples:
    """Resample the test images `b` times and recompute every figure in RESAMPLED."""
    first = next(iter(runs.values()))
    n_test, n_ood = first.logits_test.shape[1], first.logits_ood.shape[1]
    sub_test, sub_ood = subsample_indices(n_test, n_ood)
    sizes = {"test": n_test, "ood": n_ood, "sub_test": len(sub_test), "sub_ood": len(sub_ood)}
    children = np.random.SeedSequence(seed).spawn(len(sizes))
    streams = [
        resampled.resample_counts(n, b, np.random.default_rng(child))
        for n, child in zip(sizes.values(), children, strict=True)
    ]
    terms = {
        net: [
            seed_terms(run, i, split.test_y, per_seed[net][i]["T"]) for i in range(len(run.seeds))
        ]
        for net, run in runs.items()
    }
    parts: dict[str, dict[str, list[list[np.ndarray]]]] = {net: {} for net in runs}
    for chunk in zip(*streams, strict=True):
        counts = dict(zip(sizes, chunk, strict=True))
        for net, seeds in terms.items():
            for i, one in enumerate(seeds):
                for name, values in resampled_figures(one, counts).items():
                    parts[net].setdefault(name, [[] for _ in seeds])[i].append(values)
    samples = {
        net: {name: np.array([np.concatenate(p) for p in per]) for name, per in figures.items()}
        for net, figures in parts.items()
    }
    return FigureSamples(tuple(first.seeds), b, seed, samples)


def _arrays(samples: FigureSamples) -> dict[str, np.ndarray]:
    return {
        f"{net}/{name}": values
        for net, figures in samples.samples.items()
        for name, values in figures.items()
    }


def _from_arrays(
    arrays: dict[str, np.ndarray], seeds: tuple[int, ...], b: int, seed: int
) -> FigureSamples:
    samples: dict[str, dict[str, np.ndarray]] = {}
    for key, values in sorted(arrays.items()):
        net, name = key.split("/")
        samples.setdefault(net, {})[name] = values
    return FigureSamples(seeds, b, seed, samples)


def figure_samples(
    seeds: tuple[int, ...] = PUBLISHED_SEEDS, *, b: int = stats.B, seed: int = stats.SEED
) -> FigureSamples:
    """`resample_figures` of both nets on `seeds`, cached on disk and per process."""
    return _figure_samples(tuple(seeds), b, seed)


def samples_key(
    nets: tuple[str, ...], seeds: tuple[int, ...], order: str, b: int, seed: int
) -> dict:
    """The cache key of the test-image resamples of `nets` on `seeds` in `order`: the runs'
    keys, the resampling's size and seed, and this package's source, which computes them."""
    return {
        "nets": {net: cache_key(net, seeds, TrainConfig(), order) for net in nets},
        "b": b,
        "seed": seed,
        "claims_source": CLAIMS_SOURCE,
    }


@functools.cache
def _figure_samples(seeds: tuple[int, ...], b: int, seed: int) -> FigureSamples:
    results = calibration_on(seeds)
    entry = cached(
        f"bootstrap-seeds{len(seeds)}",
        samples_key(tuple(results.runs), seeds, results.order, b, seed),
        lambda: _arrays(
            resample_figures(results.runs, results.split, results.per_seed, b=b, seed=seed)
        ),
    )
    return _from_arrays(entry.arrays, tuple(seeds), b, seed)


def claim_intervals(comparison: Comparison, seeds: tuple[int, ...] = PUBLISHED_SEEDS) -> list[dict]:
    """Each effect of `comparison` on `seeds` with its paired test-image interval (JSON-able).

    Per effect: name, estimate, low, high, level, whether the whole interval lies in the
    region where the claim holds, and the two-sided bootstrap p-value of "no difference".
    """
    results = calibration_on(seeds)
    samples = figure_samples(seeds)
    effect_samples = samples.effect_samples(comparison, results.per_seed)
    out = []
    for effect, estimate, values in zip(
        comparison.effects, comparison.values(results.per_seed), effect_samples, strict=True
    ):
        interval = stats.interval(estimate, values)
        out.append(
            {
                "effect": effect.name,
                **interval.to_json(),
                "region": str(effect.region),
                "within_region": interval.within(effect.region.low, effect.region.high),
                "p_value": None if effect.null is None else resampled.p_value(values, effect.null),
                "b": samples.b,
                "method": f"{stats.METHOD} over test images, B = {samples.b}",
            }
        )
    return out
