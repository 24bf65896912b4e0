"""Claims of "Calibrating a Bounded Net, in JAX/Flax NNX" (seeds/calibration-of-a-bounded-net.txt).

Each test states one assertion of the post in our words, cites its section, and judges
the post's figure on the reproduction in every valid float order (lib/orders.py; the
faithful order, RECIPE.md A and C, gives the headline figure). Figures are 3-seed means
unless the claim names a seed; ECE is in percent as printed. Tolerances: lib/tolerance.py
and fixtures/TOLERANCES.md.
"""

from __future__ import annotations

import numpy as np
import pytest
from flax import nnx

from lib import metrics
from lib.calibration.evaluation import aggregate, subsample_aurocs
from lib.calibration.experiment import NETS
from lib.calibration.models import HIDDEN, N_CLASSES, N_PIXELS, build_model, yat_prototype_indices
from lib.robustness.bootstrap import claim_intervals
from lib.robustness.calibration import A_TOUCH, BARELY, BY_ID, FAR_BELOW, FAR_MORE
from lib.tolerance import K_SIGMA, reproduction_tolerance, sigma_order
from lib.verdict import Judgement, all_close, close_to, satisfied

DOC = "calibration"
S_HEAD = "Two nets, one head"
S_FORECAST = "The forecaster's test, in code"
S_BRAG = "Why the bounded net brags"
S_KNOB = "One knob, fit on held-out data"
S_OOD = "The number the softmax throws away"
S_WOBBLE = "The channel that does not wobble"
S_RECIPE = "Recipe invariants (RECIPE.md A)"


def claim_marker(
    id: str, section: str, statement: str, finding: str | None = None
) -> pytest.MarkDecorator:
    return pytest.mark.claim(
        id=id, document=DOC, section=section, statement=statement, finding=finding
    )


def per_seed(calibration, net: str, name: str, scale: float = 1.0) -> list[float]:
    return [figures[name] * scale for figures in calibration.per_seed[net]]


def mean_of(calibration, net: str, name: str, scale: float = 1.0) -> tuple[float, float]:
    return aggregate(per_seed(calibration, net, name, scale))


def mean_close(net: str, name: str, printed: str, scale: float = 1.0):
    """A judge: the 3-seed mean of `name` for `net` is the printed figure within tolerance."""
    tolerance = reproduction_tolerance(name, printed, n_seeds=3, scale=scale)

    def judge(calibration) -> Judgement:
        mean, std = mean_of(calibration, net, name, scale)
        values = per_seed(calibration, net, name, scale)
        return close_to(mean, printed, tolerance, std=std, per_seed=values)

    return judge


def seed0_close(net: str, name: str, printed: str):
    """A judge: seed 0's figure `name` for `net` is the printed figure within tolerance."""
    tolerance = reproduction_tolerance(name, printed)
    return lambda c: close_to(c.per_seed[net][0][name], printed, tolerance)


def compared(claim_id: str, published: str):
    """A judge: the comparative claim's definition (lib/robustness/calibration.py: effects,
    regions, the reading of its words) on the per-seed figures."""
    return lambda calibration: BY_ID[claim_id].judge(calibration.per_seed, published=published)


def three_to_four(claim_id: str, published: str):
    """A judge: the Yat/ReLU ratio of mean ECEs (the comparison's effect) lies in its region
    [3, 4], widened by the ratio's K_SIGMA float-order noise (relative sd of each mean
    sigma_order / sqrt(3), propagated)."""
    comparison = BY_ID[claim_id]
    (effect,) = comparison.effects
    (name,) = effect.inputs

    def judge(calibration) -> Judgement:
        ratio = effect.statistic(calibration.per_seed)
        yat, relu = mean_of(calibration, "yat", name)[0], mean_of(calibration, "relu", name)[0]
        rel_sigma = sigma_order(name) / np.sqrt(3) * np.hypot(1 / yat, 1 / relu)
        half_width = K_SIGMA * ratio * rel_sigma
        return satisfied(
            effect.region.low - half_width <= ratio <= effect.region.high + half_width,
            published=published,
            measured=ratio,
            tolerance=f"{effect.region} ± {half_width:.2f}",
            reading=comparison.reading,
        )

    return judge


def confidence(claim_id: str) -> list[dict]:
    """The claim's effects on seeds 0-2 (faithful order) with paired test-image 95% intervals,
    recorded beside the verdict (lib/robustness/bootstrap.py); the verdict does not use them."""
    return claim_intervals(BY_ID[claim_id])


# --- Two nets, one head -------------------------------------------------------------------


@claim_marker(
    "cal-01",
    S_HEAD,
    "Both nets are 784 -> 50 -> 10 with the same kind of linear readout; only the feature layer differs, and the Yat prototypes are training images.",
)
def test_same_head(claim, calibration):
    train_x = calibration.faithful.split.train_x
    yat = build_model("yat", 0, train_x)
    relu = build_model("relu", 0, train_x)
    readouts = (yat.readout, relu.l2)
    shapes = {
        "yat.W": yat.yat.W[...].shape,
        "relu.l1": relu.l1.kernel[...].shape,
        "readouts": [r.kernel[...].shape for r in readouts],
    }
    prototypes_are_images = bool(
        np.array_equal(np.asarray(yat.yat.W[...]), train_x[yat_prototype_indices(0, 55000)])
    )
    same_head = all(
        type(r) is nnx.Linear and r.kernel[...].shape == (HIDDEN, N_CLASSES) for r in readouts
    )
    claim.record(
        satisfied(
            same_head
            and shapes["yat.W"] == (HIDDEN, N_PIXELS)
            and shapes["relu.l1"] == (N_PIXELS, HIDDEN)
            and prototypes_are_images,
            published="784->50->10, same readout",
            measured=f"W {shapes['yat.W']}, l1 {shapes['relu.l1']}, readouts {shapes['readouts']}, prototypes=images: {prototypes_are_images}",
        )
    )


# --- The forecaster's test ------------------------------------------------------------------


@claim_marker(
    "cal-02a", S_FORECAST, "Averaged over seeds 0-2, the ReLU net's ECE is 1.76% (+- 0.22)."
)
def test_relu_ece(claim, calibration):
    claim.check(calibration, mean_close("relu", "ece", "1.76", scale=100))


@claim_marker(
    "cal-02b", S_FORECAST, "Averaged over seeds 0-2, the Yat net's ECE is 6.20% (+- 1.13)."
)
def test_yat_ece(claim, calibration):
    claim.check(calibration, mean_close("yat", "ece", "6.20", scale=100))


@claim_marker(
    "cal-02c", S_FORECAST, "The Yat net's mean ECE is between three and four times the ReLU net's."
)
def test_ece_ratio(claim, calibration):
    judge = three_to_four("cal-02c", "3 to 4 (6.20/1.76 = 3.52)")
    claim.check(calibration, judge, ci=confidence("cal-02c"))


@claim_marker("cal-03a", S_FORECAST, "The ReLU net's mean test NLL is 0.360.")
def test_relu_nll(claim, calibration):
    claim.check(calibration, mean_close("relu", "nll", "0.360"))


@claim_marker("cal-03b", S_FORECAST, "The Yat net's mean test NLL is 0.577.")
def test_yat_nll(claim, calibration):
    claim.check(calibration, mean_close("yat", "nll", "0.577"))


@claim_marker("cal-03c", S_FORECAST, "The ReLU net's mean test Brier score is 0.181.")
def test_relu_brier(claim, calibration):
    claim.check(calibration, mean_close("relu", "brier", "0.181"))


@claim_marker("cal-03d", S_FORECAST, "The Yat net's mean test Brier score is 0.244.")
def test_yat_brier(claim, calibration):
    claim.check(calibration, mean_close("yat", "brier", "0.244"))


@claim_marker(
    "cal-03e",
    S_FORECAST,
    "The proper scoring rules agree with ECE: the Yat net is worse on both NLL and Brier.",
)
def test_scoring_rules_agree(claim, calibration):
    judge = compared("cal-03e", "Yat worse on ECE, NLL, Brier")
    claim.check(calibration, judge, ci=confidence("cal-03e"))


# Our reading of "almost every bin": at least 80% of the populated bins of each seed.
ALMOST_EVERY = 0.8
# "On the diagonal", with a derived tolerance: a calibrated net's bin accuracy deviates from
# its mean confidence by binomial sampling error alone, sd = sqrt(c (1 - c) / n); we allow
# 3 sd in every bin holding at least 30 test images (fewer make the normal approximation poor).
DIAGONAL_MIN_COUNT, DIAGONAL_K = 30, 3.0


def reliability(calibration, net: str, seed_index: int):
    probs = metrics.softmax(calibration.runs[net].logits_test[seed_index])
    return metrics.reliability_bins(probs, calibration.split.test_y)


@claim_marker(
    "cal-04a",
    S_FORECAST,
    "The Yat net is overconfident: in almost every populated bin its accuracy is below its confidence.",
    finding="only 54%, 62%, 54% of the Yat net's populated bins (seeds 0, 1, 2) have "
    "accuracy below confidence; the sparsely populated low-confidence bins sit above the diagonal",
)
def test_yat_bins_below_diagonal(claim, calibration):
    def judge(c) -> Judgement:
        fractions, weighted = [], []
        for seed_index in range(3):
            bins = reliability(c, "yat", seed_index)
            populated = bins.count > 0
            below = bins.accuracy < bins.mean_confidence
            fractions.append(float(np.mean(below[populated])))
            weighted.append(float(bins.count[below].sum() / bins.count.sum()))
        return satisfied(
            min(fractions) >= ALMOST_EVERY,
            published=f">= {ALMOST_EVERY:.0%} of bins below",
            measured=[round(f, 3) for f in fractions],
            share_of_images_in_bins_below=weighted,
        )

    claim.check(calibration, judge)


@claim_marker(
    "cal-04b",
    S_FORECAST,
    "The ReLU net's reliability bins sit near the diagonal.",
    finding="the ReLU bars are close to the diagonal only to the eye (ECE 1.9%); the "
    "well-populated high-confidence bins miss it by up to 11.2 binomial sd (9.5 in the vmap order)",
)
def test_relu_bins_on_diagonal(claim, calibration):
    def judge(c) -> Judgement:
        worst = []
        for seed_index in range(3):
            bins = reliability(c, "relu", seed_index)
            big = bins.count >= DIAGONAL_MIN_COUNT
            conf = bins.mean_confidence[big]
            sampling_sd = np.sqrt(conf * (1 - conf) / bins.count[big])
            worst.append(float(np.max(np.abs(bins.accuracy[big] - conf) / sampling_sd)))
        return satisfied(
            max(worst) <= DIAGONAL_K,
            published="on the diagonal",
            measured=max(worst),
            tolerance=f"{DIAGONAL_K:g} sampling sd",
            worst_per_seed=worst,
        )

    claim.check(calibration, judge)


# --- Why the bounded net brags -------------------------------------------------------------


@claim_marker(
    "cal-05a", S_BRAG, "On seed 0 the median strongest kernel match on the test set is about 207."
)
def test_median_kmax_seed0(claim, calibration):
    claim.check(calibration, seed0_close("yat", "median_kmax", "207"))


@claim_marker("cal-05b", S_BRAG, "On seed 0 the Yat net's median top logit is 28.9.")
def test_yat_median_top_logit(claim, calibration):
    claim.check(calibration, seed0_close("yat", "median_top_logit", "28.9"))


@claim_marker("cal-05c", S_BRAG, "On seed 0 the ReLU net's median top logit is 7.2.")
def test_relu_median_top_logit(claim, calibration):
    claim.check(calibration, seed0_close("relu", "median_top_logit", "7.2"))


@claim_marker(
    "cal-06",
    S_BRAG,
    "The softmax reads only gaps between logits: adding a constant to every logit changes no probability.",
)
def test_softmax_reads_gaps(claim, calibration):
    def judge(c) -> Judgement:
        rng = np.random.default_rng(0)
        worst = 0.0
        for net in NETS:
            logits = c.runs[net].logits_test[0]
            shift = rng.uniform(-100, 100, size=(len(logits), 1))
            moved = metrics.softmax(logits + shift) - metrics.softmax(logits)
            worst = max(worst, float(np.max(np.abs(moved))))
        # float64 rounding of logits near 100 is ~1e-14; probabilities then move by at most that.
        return satisfied(
            worst <= 1e-12,
            published="no change",
            measured=worst,
            tolerance="1e-12 (float64 rounding)",
        )

    claim.check(calibration, judge)


# --- One knob, fit on held-out data ----------------------------------------------------------


@claim_marker(
    "cal-07",
    S_KNOB,
    "Temperature scaling never changes the argmax: accuracy after scaling equals accuracy before, for both nets and every seed.",
)
def test_temperature_keeps_accuracy(claim, calibration):
    def judge(c) -> Judgement:
        pairs = [(f["acc"], f["acc_T"]) for net in NETS for f in c.per_seed[net]]
        return satisfied(
            all(a == b for a, b in pairs),
            published="identical accuracy",
            measured=max(abs(a - b) for a, b in pairs),
            tolerance="0 (exact)",
        )

    claim.check(calibration, judge)


@claim_marker(
    "cal-08a",
    S_KNOB,
    "The held-out NLL as a function of T has an interior minimum, for both nets and every seed.",
)
def test_heldout_nll_interior_minimum(claim, calibration):
    def judge(c) -> Judgement:
        interior = []
        for net in NETS:
            for seed_index, figures in enumerate(c.per_seed[net]):
                curve = metrics.heldout_nll_curve(
                    c.runs[net].logits_heldout[seed_index],
                    c.split.heldout_y,
                    np.array([0.05, figures["T"], 20.0]),
                )
                interior.append(bool(curve[1] < curve[0] and curve[1] < curve[2]))
        return satisfied(
            all(interior), published="interior minimum", measured=f"{sum(interior)}/6 nets"
        )

    claim.check(calibration, judge)


@claim_marker("cal-08b", S_KNOB, "On seed 0 the Yat net's fitted temperature is T = 2.07.")
def test_yat_temperature_seed0(claim, calibration):
    claim.check(calibration, seed0_close("yat", "T", "2.07"))


@claim_marker(
    "cal-09a", S_KNOB, "The ReLU net's fitted temperature is 1.17 (+- 0.02) over seeds 0-2."
)
def test_relu_temperature(claim, calibration):
    claim.check(calibration, mean_close("relu", "T", "1.17"))


@claim_marker(
    "cal-09b", S_KNOB, "The Yat net's fitted temperature is 1.68 (+- 0.29) over seeds 0-2."
)
def test_yat_temperature(claim, calibration):
    claim.check(calibration, mean_close("yat", "T", "1.68"))


@claim_marker(
    "cal-09c", S_KNOB, "The Yat net's temperature ranges from 1.37 to 2.07 across the three seeds."
)
def test_yat_temperature_range(claim, calibration):
    def judge(c) -> Judgement:
        temperatures = per_seed(c, "yat", "T")
        return all_close(
            [min(temperatures), max(temperatures)],
            ["1.37", "2.07"],
            reproduction_tolerance("T", "1.37"),
        )

    claim.check(calibration, judge)


@claim_marker(
    "cal-09d", S_KNOB, "The Yat temperature varies far more across seeds than the ReLU temperature."
)
def test_yat_temperature_spread(claim, calibration):
    claim.check(calibration, compared("cal-09d", f"0.29 vs 0.02 (ratio >= {FAR_MORE:g})"))


@claim_marker("cal-10a", S_KNOB, "After temperature scaling the ReLU net's mean ECE is 0.82%.")
def test_relu_ece_after_scaling(claim, calibration):
    claim.check(calibration, mean_close("relu", "ece_T", "0.82", scale=100))


@claim_marker("cal-10b", S_KNOB, "After temperature scaling the Yat net's mean ECE is 3.11%.")
def test_yat_ece_after_scaling(claim, calibration):
    claim.check(calibration, mean_close("yat", "ece_T", "3.11", scale=100))


@claim_marker(
    "cal-10c",
    S_KNOB,
    "After scaling the Yat net is still three to four times worse calibrated than the ReLU net.",
)
def test_ece_ratio_after_scaling(claim, calibration):
    judge = three_to_four("cal-10c", "3 to 4 (3.11/0.82 = 3.79)")
    claim.check(calibration, judge, ci=confidence("cal-10c"))


# --- The number the softmax throws away ----------------------------------------------------


def auroc_mean_close(net: str, channel: str, printed: str):
    """A judge: the 3-seed mean full-set AUROC of `channel` is the printed figure."""
    tolerance = reproduction_tolerance(f"auroc.{channel}", printed, n_seeds=3)

    def judge(c) -> Judgement:
        values = [f["auroc"][channel] for f in c.per_seed[net]]
        mean, std = aggregate(values)
        return close_to(mean, printed, tolerance, std=std, per_seed=values)

    return judge


@claim_marker(
    "cal-11a",
    S_OOD,
    "The field magnitude (largest kernel score) separates Fashion from MNIST at AUROC 0.916 (+- 0.008) over seeds 0-2.",
)
def test_kmax_auroc(claim, calibration):
    claim.check(calibration, auroc_mean_close("yat", "kmax", "0.916"))


@claim_marker(
    "cal-11b", S_OOD, "The ReLU net's max logit reaches AUROC 0.935 (+- 0.005) over seeds 0-2."
)
def test_relu_maxlogit_auroc(claim, calibration):
    claim.check(calibration, auroc_mean_close("relu", "maxlogit", "0.935"))


@claim_marker(
    "cal-11c",
    S_OOD,
    "The ReLU max logit is a touch better than the Yat field magnitude as an OOD score.",
)
def test_maxlogit_a_touch_better(claim, calibration):
    judge = compared("cal-11c", f"0 < gap < {A_TOUCH} (0.935 - 0.916)")
    claim.check(calibration, judge, ci=confidence("cal-11c"))


@claim_marker("cal-12a", S_OOD, "On seed 0 a typical MNIST digit's field magnitude is about 27.")
def test_median_kmax_ood_seed0(claim, calibration):
    claim.check(calibration, seed0_close("yat", "median_kmax_ood", "27"))


@claim_marker(
    "cal-12b",
    S_OOD,
    "Off-distribution the field is shallow: the median MNIST field magnitude is far below the median test one, on every seed.",
)
def test_field_shallow_off_distribution(claim, calibration):
    claim.check(calibration, compared("cal-12b", f"ratio < {FAR_BELOW} (27 / 207)"))


# --- The channel that does not wobble -------------------------------------------------------


def subsample(calibration, net: str, channel: str) -> list[float]:
    return [subsample_aurocs(calibration.runs[net], i)[channel] for i in range(3)]


@claim_marker(
    "cal-13a",
    S_WOBBLE,
    "Per seed (recipe's subsample), the field magnitude's AUROC is 0.914, 0.924, 0.901.",
)
def test_field_auroc_per_seed(claim, calibration):
    tolerance = reproduction_tolerance("auroc_subsample.kmax", "0.914")
    claim.check(
        calibration,
        lambda c: all_close(subsample(c, "yat", "kmax"), ["0.914", "0.924", "0.901"], tolerance),
    )


@claim_marker(
    "cal-13b",
    S_WOBBLE,
    "Per seed (recipe's subsample), the Yat softmax channel's AUROC is 0.924, 0.905, 0.809.",
)
def test_softmax_auroc_per_seed(claim, calibration):
    tolerance = reproduction_tolerance("auroc_subsample.msp", "0.924")
    claim.check(
        calibration,
        lambda c: all_close(subsample(c, "yat", "msp"), ["0.924", "0.905", "0.809"], tolerance),
    )


@claim_marker(
    "cal-13c", S_WOBBLE, "The field channel varies less across seeds than the softmax channel."
)
def test_field_steadier_than_softmax(claim, calibration):
    judge = compared("cal-13c", "std field < std softmax")
    claim.check(calibration, judge, ci=confidence("cal-13c"))


@claim_marker(
    "cal-14",
    S_WOBBLE,
    "On the bad retraining (the seed where the Yat softmax channel is lowest) that channel is barely better than the ReLU baseline.",
)
def test_bad_retraining_barely_better(claim, calibration):
    judge = compared("cal-14", f"0 < Yat - ReLU softmax AUROC < {BARELY}")
    claim.check(calibration, judge)


# --- Recipe invariants ---------------------------------------------------------------------


@claim_marker(
    "cal-15a",
    S_RECIPE,
    "The data split is 55,000 train / 5,000 held-out / 10,000 test with no overlap between train and held-out.",
)
def test_split(claim, calibration):
    from lib.data import fashion_split

    train, heldout = fashion_split()
    sizes = (len(train), len(heldout), len(calibration.faithful.split.test_y))
    disjoint = not set(train.tolist()) & set(heldout.tolist())
    claim.record(
        satisfied(
            sizes == (55000, 5000, 10000) and disjoint,
            published="55000 / 5000 / 10000, disjoint",
            measured=f"{sizes}, disjoint={disjoint}",
        )
    )


@claim_marker(
    "cal-15b",
    S_RECIPE,
    "Held-out images are used only to fit T: training batches draw only from the 55,000 training rows.",
)
def test_heldout_only_for_temperature(claim, calibration):
    from lib.calibration.training import TrainConfig, batch_indices

    n_train = len(calibration.faithful.split.train_y)
    largest = max(int(batch_indices(seed, n_train, TrainConfig()).max()) for seed in (0, 1, 2))
    claim.record(
        satisfied(
            largest < n_train,
            published="batches within train split",
            measured=f"largest row {largest} of {n_train}",
        )
    )


@claim_marker(
    "cal-15c",
    S_RECIPE,
    "Confidence is read identically from both nets: the max of the softmax of float64 logits.",
)
def test_identical_confidence_pipeline(claim, calibration):
    def judge(c) -> Judgement:
        same = all(
            c.runs[net].logits_test.dtype == np.float64
            and np.array_equal(
                metrics.msp_score(c.runs[net].logits_test[0]),
                metrics.softmax(c.runs[net].logits_test[0]).max(axis=1),
            )
            for net in NETS
        )
        return satisfied(
            same, published="same pipeline", measured=f"float64 logits, msp == max softmax: {same}"
        )

    claim.check(calibration, judge)
