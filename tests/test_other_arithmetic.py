"""Draws in the CPU's other arithmetic (lib/placement/_arithmetic.py): half of a
batch of twins is computed in a child process whose XLA uses other vectors."""

from __future__ import annotations

import functools
import os

import pytest

from uncertainty_claims.numerics import NARROW_VECTORS_FLAG
from uncertainty_claims.placement._arithmetic import in_other_arithmetic, other_flags


@pytest.mark.parametrize(
    ("flags", "other"),
    [
        ("", NARROW_VECTORS_FLAG),
        (NARROW_VECTORS_FLAG, ""),
        (
            "--xla_cpu_max_isa=AVX2 --xla_force_host_platform_device_count=2",
            f"--xla_force_host_platform_device_count=2 {NARROW_VECTORS_FLAG}",
        ),
        ("--xla_cpu_max_isa=bogus", NARROW_VECTORS_FLAG),
        ("--xla_cpu_max_isa=SSE4_2 --xla_cpu_max_isa=AVX2", NARROW_VECTORS_FLAG),
        ("--xla_cpu_max_isa=AVX2 --xla_cpu_max_isa=SSE4_2", ""),
        ('--xla_dump_to="my dump"', f'--xla_dump_to="my dump" {NARROW_VECTORS_FLAG}'),
        (
            "--xla_gpu_deterministic_ops=true",
            f"--xla_gpu_deterministic_ops=true {NARROW_VECTORS_FLAG}",
        ),
    ],
)
def test_the_other_arithmetic_swaps_the_vector_width_and_keeps_other_flags(flags, other):
    """128-bit vectors (XLA takes the last --xla_cpu_max_isa) against the widest, any other
    cap (AVX2, an ISA XLA ignores) against 128-bit ones; the other flags as written, quotes
    kept. Bugs fixed: any cap was dropped, so AVX2 met the widest vectors (on an AVX-512
    machine, the same bits) and a bogus ISA met itself; a quoted value holding a space
    reached the child unquoted, and XLA took its first word (lib/placement/_arithmetic.py
    `other_flags`)."""
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
