"""This suite's command-line faults: a mistyped option, a setting that keeps JAX from starting,
too few sweep seeds for the documents: a usage error before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from fault_tools import (
    REPO_ROOT,
    child_env,
    run_pytest,
)

pytestmark = pytest.mark.fault

USAGE_ERROR = pytest.ExitCode.USAGE_ERROR  # 4


def test_unknown_option_is_a_usage_error():
    """`pytest claims --no-such-option`: a usage error, exit 4 naming the option; nothing is
    collected or trained."""
    result = run_pytest(REPO_ROOT, "claims", "--no-such-option", "-k", "nothing")
    assert result.returncode == USAGE_ERROR
    assert "unrecognized arguments: --no-such-option" in result.stderr
    assert "passed" not in result.stdout and "[claims] computing" not in result.stderr


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ({"XLA_FLAGS": "--xla_no_such_flag=3"}, "Unknown flag in XLA_FLAGS: --xla_no_such_flag=3"),
        ({"JAX_PLATFORMS": "cuda"}, "no device of the platform JAX_PLATFORMS names is visible"),
    ],
    ids=["garbage-xla-flag", "cuda-without-a-gpu"],
)
def test_a_setting_that_keeps_jax_from_starting_is_a_usage_error(setting, says):
    """A garbage XLA_FLAGS, or JAX_PLATFORMS=cuda with no GPU: JAX is tried in a child before
    any worker starts, exit 4 with one line naming the flag or the missing device. Bug fixed:
    XLA aborted every worker (exit 5, no table, the flag never named), or every claim was an
    ERROR reading only "AssertionError" (conftest.py, lib/placement/_startup.py)."""
    if "JAX_PLATFORMS" in setting and Path("/dev/nvidiactl").exists():
        pytest.skip("a GPU is visible here: JAX_PLATFORMS=cuda may start")
    result = run_pytest(REPO_ROOT, "claims", "-n", "2", "-k", "nothing", env=child_env(**setting))
    assert result.returncode == USAGE_ERROR, result.stdout + result.stderr
    assert "JAX cannot start with" in result.stderr and says in result.stderr
    assert "Traceback" not in result.stderr


def test_too_few_sweep_seeds_is_the_documents_usage_error():
    """`--seeds 0,1`: the calibration post averages three seeds, so this suite's sweep needs
    at least three (the document's rule, claims/conftest.py; the engine's option takes any
    seeds): exit 4 naming the minimum, before anything runs."""
    result = run_pytest(REPO_ROOT, "claims", "--seeds", "0,1", "-k", "nothing")
    assert result.returncode == USAGE_ERROR, result.stdout + result.stderr
    assert "needs at least 3 seeds" in result.stderr
