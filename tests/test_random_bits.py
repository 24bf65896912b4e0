"""The experiments' random bits do not depend on how threefry2x32 is lowered.

lib/numerics.py lowers JAX's threefry2x32 hash unrolled on the CPU (JAX's own lowering
for every other backend) instead of JAX's rolled CPU loop, for speed. The hash is uint32
arithmetic, so the bits must not move: checked against the hash's published test vectors
(Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011; the Random123
known-answer tests, as JAX's own test suite uses them) and against JAX's rolled CPU
lowering in a fresh process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest
from jax.extend.random import threefry_2x32

from uncertainty_claims.numerics import unrolled_cpu_threefry

cpu_only = pytest.mark.skipif(jax.default_backend() != "cpu", reason="the CPU lowering")

# (key pair, counter pair) -> hash, from Random123's kat_vectors for threefry2x32_20.
KNOWN_ANSWERS = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
]

# Dropout-like draws as the recipes make them: a stack of keys, folded, then bits,
# uniforms and Bernoulli masks of odd and even sizes.
_DRAWS = textwrap.dedent(
    """
    import json, sys, jax, jax.numpy as jnp, numpy as np
    if sys.argv[1] == "unrolled":
        from uncertainty_claims.numerics import unrolled_cpu_threefry
        assert unrolled_cpu_threefry()

    @jax.jit
    def draws(keys):
        def one(key):
            a, b = jax.random.split(jax.random.fold_in(key, 7))
            return (
                jax.random.bits(a, (3, 5)),
                jax.lax.bitcast_convert_type(jax.random.uniform(b, (64, 64)), jnp.uint32),
                jax.random.bernoulli(a, 0.9, (120, 64)).astype(jnp.uint32),
            )
        return jax.vmap(one)(keys)

    keys = jax.random.split(jax.random.key(2024), 5)
    out = [np.asarray(x).ravel().tolist() for x in draws(keys)]
    print(json.dumps({"hlo_has_loop": "while" in draws.lower(keys).as_text(), "bits": out}))
    """
)


def _draws(lowering: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _DRAWS, lowering], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("key", "count", "expected"), KNOWN_ANSWERS)
def test_threefry_gives_the_published_hash(key, count, expected):
    unrolled_cpu_threefry()
    result = threefry_2x32(np.uint32(key), np.uint32(count))
    assert tuple(int(x) for x in np.asarray(result)) == expected


@cpu_only
def test_unrolled_lowering_draws_the_bits_of_jaxs_own_cpu_lowering():
    rolled, unrolled = _draws("rolled"), _draws("unrolled")
    # The switch took effect (JAX's CPU lowering is a loop; the unrolled one has none) ...
    assert rolled["hlo_has_loop"] and not unrolled["hlo_has_loop"]
    # ... and moved no bit.
    assert unrolled["bits"] == rolled["bits"]


@cpu_only
def test_experiments_lower_threefry_unrolled():
    """`full_precision` (every experiment's entry point) switches the lowering on."""
    from uncertainty_claims.numerics import full_precision

    @full_precision
    def lowered() -> str:
        return jax.jit(lambda k: jax.random.bits(k, (4,))).lower(jax.random.key(0)).as_text()

    assert "while" not in lowered()
