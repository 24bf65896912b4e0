"""Hand-worked reference values for every metric; the arithmetic is written out beside each case.

All inputs are binary fractions, so confidences sit exactly on bin edges where intended.
"""

import math

import numpy as np
import pytest

from uncertainty_claims.metrics import (
    accuracy,
    auroc,
    bin_index,
    brier,
    decompose_variance,
    ece,
    ece_equal_mass,
    energy_score,
    fit_temperature,
    fpr_at_tpr,
    gaussian_nll,
    max_logit_score,
    mce,
    msp_score,
    nll,
    reliability_bins,
)

pytestmark = pytest.mark.property

# Five examples, four classes, n_bins = 4, so edges = [0, 0.25, 0.5, 0.75, 1].
#   row  probs                      label  conf   argmax  correct  bin
#   r0   [0.5,   0.5,   0, 0]       1      0.5    0 (tie) no       2  (0.5 on an inner edge)
#   r1   [0.25,  0.75,  0, 0]       1      0.75   1       yes      3  (0.75 on an inner edge)
#   r2   [1,     0,     0, 0]       0      1.0    0       yes      3  (1.0 goes to the last bin)
#   r3   [0.125, 0.875, 0, 0]       0      0.875  1       no       3
#   r4   [0.25,  0.25,  0.25, 0.25] 0      0.25   0 (tie) yes      1  (0.25 on an inner edge)
PROBS = np.array(
    [
        [0.5, 0.5, 0.0, 0.0],
        [0.25, 0.75, 0.0, 0.0],
        [1.0, 0.0, 0.0, 0.0],
        [0.125, 0.875, 0.0, 0.0],
        [0.25, 0.25, 0.25, 0.25],
    ]
)
LABELS = np.array([1, 1, 0, 0, 0])


def test_reliability_bins_by_hand():
    # bin 1: {r4}: conf 0.25, acc 1.  bin 2: {r0}: conf 0.5, acc 0.
    # bin 3: {r1, r2, r3}: conf (0.75 + 1 + 0.875) / 3 = 2.625 / 3 = 0.875, acc 2/3.
    bins = reliability_bins(PROBS, LABELS, n_bins=4)
    np.testing.assert_array_equal(bins.count, [0, 1, 1, 3])
    np.testing.assert_allclose(bins.mean_confidence, [0.0, 0.25, 0.5, 0.875], rtol=1e-15)
    np.testing.assert_allclose(bins.accuracy, [0.0, 1.0, 0.0, 2 / 3], rtol=1e-15)
    np.testing.assert_array_equal(bins.edges, [0.0, 0.25, 0.5, 0.75, 1.0])


def test_ece_and_mce_by_hand():
    # gaps: bin 1 |1 - 0.25| = 0.75, bin 2 |0 - 0.5| = 0.5, bin 3 |2/3 - 0.875| = 5/24.
    # ECE = (1/5)(0.75) + (1/5)(0.5) + (3/5)(5/24) = 0.15 + 0.1 + 0.125 = 0.375.
    # MCE = max(0.75, 0.5, 5/24) = 0.75.
    assert ece(PROBS, LABELS, n_bins=4) == pytest.approx(0.375, rel=1e-14)
    assert mce(PROBS, LABELS, n_bins=4) == pytest.approx(0.75, rel=1e-14)


def test_equal_mass_ece_by_hand():
    # Stable sort by conf: r4 (0.25), r0 (0.5), r1 (0.75), r3 (0.875), r2 (1.0).
    # array_split into 2 groups of sizes 3 and 2:
    #   {r4, r0, r1}: conf (0.25 + 0.5 + 0.75) / 3 = 0.5, acc (1 + 0 + 1) / 3 = 2/3, gap 1/6.
    #   {r3, r2}:     conf (0.875 + 1) / 2 = 0.9375, acc (0 + 1) / 2 = 0.5, gap 0.4375.
    # ECE = (3 (1/6) + 2 (0.4375)) / 5 = (0.5 + 0.875) / 5 = 0.275.
    assert ece_equal_mass(PROBS, LABELS, n_bins=2) == pytest.approx(0.275, rel=1e-14)


def test_nll_brier_and_accuracy_by_hand():
    # p_true = 0.5, 0.75, 1, 0.125, 0.25, so
    # NLL = (ln 2 + ln(4/3) + 0 + ln 8 + ln 4) / 5 = (8 ln 2 - ln 3) / 5 ~= 0.889313.
    # Brier per row: r0 0.5^2 + 0.5^2 = 0.5; r1 0.25^2 + 0.25^2 = 0.125; r2 0;
    #   r3 0.875^2 + 0.875^2 = 1.53125; r4 0.75^2 + 3 (0.25^2) = 0.75;
    #   mean = (0.5 + 0.125 + 0 + 1.53125 + 0.75) / 5 = 2.90625 / 5 = 0.58125.
    # Accuracy = 3 correct of 5 = 0.6.
    assert nll(PROBS, LABELS) == pytest.approx((8 * math.log(2) - math.log(3)) / 5, rel=1e-14)
    assert brier(PROBS, LABELS) == pytest.approx(0.58125, rel=1e-14)
    assert accuracy(PROBS, LABELS) == 0.6


def test_confidence_exactly_on_a_default_edge_goes_to_the_upper_bin():
    # With 15 bins edges[9] = linspace(0, 1, 16)[9] == 0.6 exactly, so conf 0.6 lands in bin 9,
    # [0.6, 0.6667). One correct example: ECE = MCE = |1 - 0.6| = 0.4.
    probs, labels = np.array([[0.6, 0.4]]), np.array([0])
    assert np.linspace(0, 1, 16)[9] == 0.6
    assert reliability_bins(probs, labels).count.tolist() == [0] * 9 + [1] + [0] * 5
    assert ece(probs, labels) == pytest.approx(0.4, rel=1e-14)
    assert mce(probs, labels) == pytest.approx(0.4, rel=1e-14)


def test_bin_index_by_hand():
    # Four bins, edges [0, 0.25, 0.5, 0.75, 1]: a confidence on an inner edge goes to the upper
    # bin, 1.0 to the last; the rule reliability_bins, the bootstrap and the ECE over
    # temperatures all bin by.
    confidence = np.array([0.0, 0.24, 0.25, 0.5, 0.74, 0.75, 1.0])
    assert bin_index(confidence, n_bins=4).tolist() == [0, 0, 1, 2, 2, 3, 3]


def test_auroc_by_hand():
    # pos = [3, 2, 2, 1], neg = [2, 0, 1]; 12 pairs, a tie counting 1/2:
    #   3 beats all three negatives: 3; each 2: tie with 2, beats 0 and 1: 2.5, twice: 5;
    #   1: loses to 2, beats 0, ties 1: 1.5.  Total 9.5, AUROC = 9.5 / 12 = 19/24.
    # Via ranks: pooled sorted 0 | 1 1 | 2 2 2 | 3 gets ranks 1 | 2.5 2.5 | 5 5 5 | 7;
    #   positive ranks 7 + 5 + 5 + 2.5 = 19.5, minus 4 * 5 / 2 = 10 gives U = 9.5.
    assert auroc([3, 2, 2, 1], [2, 0, 1]) == pytest.approx(19 / 24, rel=1e-14)
    assert auroc([2, 0, 1], [3, 2, 2, 1]) == pytest.approx(5 / 24, rel=1e-14)


def test_fpr_at_95_tpr_by_hand():
    # 20 positives 1..20: k = smallest count with k / 20 >= 0.95 is 19, so the threshold is the
    # 19th largest positive, 2 (positives >= 2: 19 of 20). Negatives >= 2 among
    # [0, 1, 1.5, 2, 2, 5, 19.5, 21]: 2, 2, 5, 19.5, 21, i.e. 5 of 8 = 0.625.
    pos = np.arange(1.0, 21.0)
    neg = np.array([0.0, 1.0, 1.5, 2.0, 2.0, 5.0, 19.5, 21.0])
    assert fpr_at_tpr(pos, neg) == 0.625
    # 10 positives 1..10: 9/10 < 0.95 so k = 10, threshold 1: negatives >= 1 are 7 of 8.
    assert fpr_at_tpr(np.arange(1.0, 11.0), neg) == 0.875
    # tpr = 0.5 with 10 positives: k = 5, threshold = 5th largest = 6: negatives >= 6 are 2 of 8.
    assert fpr_at_tpr(np.arange(1.0, 11.0), neg, tpr=0.5) == 0.25


def test_logit_scores_by_hand():
    # logits [0, ln 3]: softmax = [1/4, 3/4]; MSP 0.75; max logit ln 3; energy ln(1 + 3) = ln 4.
    z = np.array([[0.0, math.log(3.0)]])
    assert msp_score(z)[0] == pytest.approx(0.75, rel=1e-14)
    assert max_logit_score(z)[0] == math.log(3.0)
    assert energy_score(z)[0] == pytest.approx(math.log(4.0), rel=1e-14)


def test_fit_temperature_by_hand():
    # Four copies of logits [1, 0], labels 0, 0, 0, 1: with p = sigmoid(1 / T) the NLL is
    # -(3 ln p + ln(1 - p)) / 4, minimised at p = 3/4, i.e. 1 / T = ln 3, T = 1 / ln 3 ~= 0.9102.
    # Brent's xatol of 1e-5 in log T bounds the relative error by ~1e-5.
    z = np.tile([1.0, 0.0], (4, 1))
    assert fit_temperature(z, np.array([0, 0, 0, 1])) == pytest.approx(1 / math.log(3), rel=1e-4)
    # Labels 0, 1 on identical logits: the NLL falls towards p = 1/2, i.e. T -> inf, so the fit
    # stops at the upper bound 20.
    z = np.tile([1.0, 0.0], (2, 1))
    assert fit_temperature(z, np.array([0, 1])) == pytest.approx(20.0, rel=1e-4)


def test_gaussian_nll_by_hand():
    # mu = [0, 1], log_var = [0, ln 4], y = [1, 3]:
    #   term 1: 0 + (1 - 0)^2 / 1 = 1; term 2: ln 4 + (3 - 1)^2 / 4 = ln 4 + 1.
    #   NLL = 0.5 * (1 + ln 4 + 1) / 2 = 0.5 + ln(2) / 2 ~= 0.846574.
    got = gaussian_nll([0.0, 1.0], [0.0, math.log(4.0)], [1.0, 3.0])
    assert got == pytest.approx(0.5 + math.log(2) / 2, rel=1e-14)


def test_variance_decomposition_by_hand():
    # K = 2 members: means [1, 3], variances [2, 4].
    #   mean = 2; aleatoric = (2 + 4) / 2 = 3; epistemic = ((1 - 2)^2 + (3 - 2)^2) / 2 = 1;
    #   total = 4 = E[mu^2 + sigma^2] - E[mu]^2 = (1 + 2 + 9 + 4) / 2 - 4 = 8 - 4.
    d = decompose_variance([1.0, 3.0], [2.0, 4.0])
    assert (d.mean, d.aleatoric, d.epistemic, d.total) == (2.0, 3.0, 1.0, 4.0)
