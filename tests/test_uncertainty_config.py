"""The recipe's config read from the guide's environment variables (unc-17 judges the
mapping): a value that is not a positive integer is refused with its name, never coerced."""

from __future__ import annotations

import re

import pytest

from uncertainty_claims.uncertainty.config import UncertaintyConfig


@pytest.mark.parametrize("value", ["", "0", "00", "-5", "+5", " 5", "5.0", "1e3", "five"])
def test_a_value_that_is_not_a_positive_integer_is_refused(value):
    message = f"N_MODELS must be a positive integer; got {value!r}"
    with pytest.raises(ValueError, match=re.escape(message)):
        UncertaintyConfig.from_environment({"N_MODELS": value})


def test_other_variables_leave_the_defaults():
    environ = {"PATH": "/usr/bin", "SYNTHETIC": "0", "OUTDIR": "results"}
    assert UncertaintyConfig.from_environment(environ) == UncertaintyConfig()


def test_the_knobs_together():
    environ = {"EPOCHS": "50", "BATCH": "32", "N_MODELS": "8", "MC_SAMPLES": "100"}
    config = UncertaintyConfig.from_environment(environ)
    assert (config.mc_steps, config.ensemble_steps, config.mc_batch) == (50, 100, 32)
    assert (config.members, config.mc_samples) == (8, 100)
    assert (config.lr, config.dropout_rate) == (
        UncertaintyConfig().lr,
        UncertaintyConfig().dropout_rate,
    )
