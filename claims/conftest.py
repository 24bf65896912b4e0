"""Fixtures shared by the claim tests: the experiments, trained once per configuration.

The experiments are imported inside the fixtures: pytest loads this file before it parses
the command line, and a usage error should not wait for jax and scipy to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from lib.calibration.evaluation import CalibrationResults
    from lib.uncertainty.experiment import UncertaintyResult


@pytest.fixture(scope="session")
def calibration() -> CalibrationResults:
    """Both calibration nets on seeds 0, 1, 2, trained per recipe (or loaded from the cache)."""
    from lib.calibration.evaluation import calibration_results

    return calibration_results()


@pytest.fixture(scope="session")
def uncertainty() -> UncertaintyResult:
    """The uncertainty guide's recipe from root key 0 (or loaded from the cache)."""
    from lib.uncertainty.results import uncertainty_result

    return uncertainty_result()
