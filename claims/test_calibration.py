"""Claims of "Calibrating a Bounded Net, in JAX/Flax NNX" (https://tahabouhsine.com/blog/calibration-of-a-bounded-net-jax-flax-nnx/).

One test per claim, judged on the reproduction in every valid float order. Each claim (its
statement, section, published figure, reading and rule) is defined once, in
lib/calibration/claims/specs.py; a test names it and hands over the results.
"""

from __future__ import annotations

from uncertainty_claims.calibration.claims.specs import COMPARISONS, SPECS

CLAIMS = SPECS
__all__ = ["CLAIMS", "COMPARISONS"]


@SPECS.mark("cal-01")
def test_same_head(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-02a")
def test_relu_ece(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-02b")
def test_yat_ece(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-02d")
def test_relu_ece_spread(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-02e")
def test_yat_ece_spread(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-02c")
def test_ece_ratio(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-03a")
def test_relu_nll(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-03b")
def test_yat_nll(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-03c")
def test_relu_brier(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-03d")
def test_yat_brier(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-03e")
def test_scoring_rules_agree(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-04a")
def test_yat_bins_below_diagonal(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-04b")
def test_relu_bins_on_diagonal(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-05a")
def test_median_kmax_seed0(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-05b")
def test_yat_median_top_logit(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-05c")
def test_relu_median_top_logit(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-05d")
def test_a_few_units_lead_pins_winner(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-06")
def test_softmax_reads_gaps(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-07")
def test_temperature_keeps_accuracy(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-08a")
def test_heldout_nll_interior_minimum(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-08b")
def test_yat_temperature_seed0(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-08c")
def test_yat_seed0_more_than_twice_as_loud(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-09a")
def test_relu_temperature(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-09b")
def test_yat_temperature(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-09e")
def test_relu_temperature_spread(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-09f")
def test_yat_temperature_sd(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-09c")
def test_yat_temperature_range(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-09d")
def test_yat_temperature_spread(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-09g")
def test_yat_needs_more_correction(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-10a")
def test_relu_ece_after_scaling(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-10b")
def test_yat_ece_after_scaling(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-10c")
def test_ece_ratio_after_scaling(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-10d")
def test_no_single_temperature_closes_gap(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-11a")
def test_kmax_auroc(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-11b")
def test_relu_maxlogit_auroc(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-11d")
def test_kmax_auroc_spread(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-11e")
def test_relu_maxlogit_auroc_spread(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-11f")
def test_relu_energy_auroc(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-11g")
def test_relu_energy_auroc_spread(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-11c")
def test_maxlogit_a_touch_better(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-12a")
def test_median_kmax_ood_seed0(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-12b")
def test_field_shallow_off_distribution(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-12c")
def test_ten_logits_sink_together(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-16")
def test_field_separates_softmax_smears(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-13a")
def test_field_auroc_per_seed(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-13b")
def test_softmax_auroc_per_seed(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-13c")
def test_field_steadier_than_softmax(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-14")
def test_bad_retraining_barely_better(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-17")
def test_field_never_has_bad_day(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-18")
def test_kernel_saturates_softmax(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-15a")
def test_split(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-15b")
def test_heldout_only_for_temperature(claim, calibration):
    claim.check(calibration)


@SPECS.mark("cal-15c")
def test_identical_confidence_pipeline(claim, calibration):
    claim.check(calibration)
