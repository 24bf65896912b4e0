"""Draws in the CPU's other arithmetic (lib/other_arithmetic.py, issue 48 item 1): half of a
batch of twins is computed in a child process whose XLA uses other vectors."""

from __future__ import annotations

import functools
import os

import pytest

from uncertainty_claims.numerics import NARROW_VECTORS_FLAG
from uncertainty_claims.other_arithmetic import in_other_arithmetic, other_flags


@pytest.mark.parametrize(
    ("flags", "other"),
    [
        ("", NARROW_VECTORS_FLAG),
        (NARROW_VECTORS_FLAG, ""),
        (
            "--xla_cpu_max_isa=AVX2 --xla_force_host_platform_device_count=2",
            "--xla_force_host_platform_device_count=2",
        ),
        (
            "--xla_gpu_deterministic_ops=true",
            f"--xla_gpu_deterministic_ops=true {NARROW_VECTORS_FLAG}",
        ),
    ],
)
def test_the_other_arithmetic_swaps_the_vector_width_and_keeps_other_flags(flags, other):
    assert other_flags(flags) == other


def test_a_function_runs_in_a_child_with_the_other_flags(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "")
    assert in_other_arithmetic(os.getenv, "XLA_FLAGS") == NARROW_VECTORS_FLAG
    assert in_other_arithmetic(functools.partial(os.getenv, "JAX_PLATFORMS")) == "cpu"


def test_a_failing_child_is_an_error_naming_the_function():
    with pytest.raises(
        RuntimeError, match=r"getcwd in the other arithmetic .* exited with status 1"
    ):
        in_other_arithmetic(os.getcwd, "an argument getcwd does not take")
