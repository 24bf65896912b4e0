"""The compiled-program cache (lib/placement/_compile_cache.py): where it lives, when it is off, and that
a damaged entry is compiled afresh."""

from __future__ import annotations

import os
from pathlib import Path

import jax
import pytest
from fault_tools import child_env, run_python

from uncertainty_claims.placement import _compile_cache as compile_cache

# A child that turns the cache on and prints the bytes of a small jitted computation.
CHILD = """
    import jax, jax.numpy as jnp
    from uncertainty_claims.placement._compile_cache import enable_compilation_cache
    print(enable_compilation_cache())
    x = jnp.linspace(-3.0, 3.0, 4096, dtype=jnp.float32).reshape(64, 64)
    print(jax.jit(lambda a: jnp.tanh(a @ a.T).sum(axis=0))(x).tobytes().hex())
"""


def programs(folder: Path) -> list[Path]:
    return sorted(folder.glob("*-cache"))


@pytest.mark.fault
def test_damaged_entries_are_compiled_afresh_with_the_same_result(tmp_path):
    """Every stored compiled program (`.cache/jax-programs/`) truncated or with a flipped
    byte: the next process warns it could not read them (JAX's entries are compressed, and
    the damage breaks that), compiles again and computes the same bytes."""
    env = child_env(**{compile_cache.FOLDER_VARIABLE: str(tmp_path / compile_cache.FOLDER_NAME)})
    first = run_python(CHILD, env=env)
    assert first.returncode == 0, first.stderr
    folder, result = first.stdout.split()
    stored = programs(Path(folder))
    assert Path(folder) == tmp_path / compile_cache.FOLDER_NAME and stored
    for index, path in enumerate(stored):
        data = bytearray(path.read_bytes())
        if index % 2:
            data[len(data) // 2] ^= 0xFF
        else:
            del data[len(data) // 2 :]
        path.write_bytes(bytes(data))

    second = run_python(CHILD, env=env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == [folder, result]
    assert "Error reading persistent compilation cache entry" in second.stderr


@pytest.mark.parametrize("off", ["0", "false", "off", "no", "False", " OFF "])
def test_switched_off_or_unwritable_means_no_cache(tmp_path, monkeypatch, off):
    """`CLAIMS_COMPILATION_CACHE=0` (or false, off, no, in any case), or a folder that cannot
    be created: no compiled-program cache; programs are compiled in each process; a value
    that is no switch is refused, naming it. Bug fixed: only "0" turned it off, "false",
    "off" and "no" left it on (lib/placement/_compile_cache.py `enable_compilation_cache`)."""
    monkeypatch.setenv(compile_cache.SWITCH_VARIABLE, off)
    assert compile_cache.enable_compilation_cache(tmp_path) is None
    assert not (tmp_path / compile_cache.FOLDER_NAME).exists()
    monkeypatch.setenv(compile_cache.SWITCH_VARIABLE, "maybe")
    with pytest.raises(ValueError, match=r"CLAIMS_COMPILATION_CACHE='maybe': expected 1 or 0"):
        compile_cache.enable_compilation_cache(tmp_path)
    monkeypatch.delenv(compile_cache.SWITCH_VARIABLE)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(compile_cache.FOLDER_VARIABLE, str(blocker / compile_cache.FOLDER_NAME))
    assert compile_cache.enable_compilation_cache() is None
    assert not (tmp_path / compile_cache.FOLDER_NAME).exists()


def test_children_share_the_test_runs_folder():
    """This suite's conftest turned the cache on and exported it, so the processes tests start
    reuse the programs compiled by earlier ones (unless switched off)."""
    if os.environ.get(compile_cache.SWITCH_VARIABLE, "1").strip().lower() in compile_cache.OFF:
        pytest.skip("compilation cache switched off for this run")
    folder = os.environ[compile_cache.FOLDER_VARIABLE]
    assert jax.config.jax_compilation_cache_dir == folder
    assert Path(folder).is_dir()
