"""Fixtures shared by the claim tests: the experiments, trained once per configuration."""

import pytest

from lib.calibration.evaluation import CalibrationResults, calibration_results
from lib.uncertainty.experiment import UncertaintyResult
from lib.uncertainty.results import uncertainty_result

# Tests that need a document's trained models run on one xdist worker per document,
# so the two documents train in parallel and no worker waits on another's lock.
_GROUPS = {"calibration": "calibration", "uncertainty": "uncertainty"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for fixture, group in _GROUPS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.xdist_group(group))
                break


@pytest.fixture(scope="session")
def calibration() -> CalibrationResults:
    """Both calibration nets on seeds 0, 1, 2, trained per recipe (or loaded from the cache)."""
    return calibration_results()


@pytest.fixture(scope="session")
def uncertainty() -> UncertaintyResult:
    """The uncertainty guide's recipe from root key 0 (or loaded from the cache)."""
    return uncertainty_result()
