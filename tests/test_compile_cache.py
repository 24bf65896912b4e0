"""The compiled-program cache (lib/compile_cache.py): where it lives, when it is off, and that
a damaged entry is compiled afresh, never run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import pytest
from fault_tools import TIMEOUT_S, child_env, run_python

from uncertainty_claims import compile_cache

# A child that turns the cache on and prints the bytes of a small jitted computation.
CHILD = """
    import jax, jax.numpy as jnp
    from uncertainty_claims.compile_cache import enable_compilation_cache
    print(enable_compilation_cache())
    x = jnp.linspace(-3.0, 3.0, 4096, dtype=jnp.float32).reshape(64, 64)
    print(jax.jit(lambda a: jnp.tanh(a @ a.T).sum(axis=0))(x).tobytes().hex())
"""


def programs(folder: Path) -> list[Path]:
    return sorted(folder.glob("*-cache"))


@pytest.mark.fault
def test_damaged_entries_are_compiled_afresh_with_the_same_result(tmp_path):
    """Every stored compiled program (`.cache/xla/`) truncated or with a flipped byte: the next
    process warns it could not read them (they fail their seal, a sha256 of key and program),
    compiles again and computes the same bytes."""
    env = child_env(**{compile_cache.FOLDER_VARIABLE: str(tmp_path / "xla")})
    first = run_python(CHILD, env=env)
    assert first.returncode == 0, first.stderr
    folder, result = first.stdout.split()
    stored = programs(Path(folder))
    assert Path(folder) == tmp_path / "xla" and stored
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


def test_switched_off_or_unwritable_means_no_cache(tmp_path, monkeypatch):
    """`CLAIMS_COMPILATION_CACHE=0`, or a folder that cannot be created: no compiled-program
    cache; programs are compiled in each process."""
    monkeypatch.setenv(compile_cache.SWITCH_VARIABLE, "0")
    assert compile_cache.enable_compilation_cache(tmp_path) is None
    monkeypatch.delenv(compile_cache.SWITCH_VARIABLE)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(compile_cache.FOLDER_VARIABLE, str(blocker / "xla"))
    assert compile_cache.enable_compilation_cache() is None
    assert not (tmp_path / "xla").exists()


def test_another_jax_release_keeps_no_programs(tmp_path, monkeypatch):
    """The store plugs into JAX internals checked on one release (`CHECKED_JAX`): on any
    other, no program is kept on disk and JAX's configuration is left as it was."""
    monkeypatch.delenv(compile_cache.FOLDER_VARIABLE, raising=False)
    monkeypatch.setattr(jax, "__version__", "0.0.0")
    before = jax.config.jax_compilation_cache_dir
    assert compile_cache.enable_compilation_cache(tmp_path) is None
    assert jax.config.jax_compilation_cache_dir == before


# JAX's own persistent cache, configured through its public options only.
PLAIN_JAX_STORE = """
    import sys
    import jax, jax.numpy as jnp
    jax.config.update("jax_compilation_cache_dir", sys.argv[1])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    x = jnp.linspace(-3.0, 3.0, 4096, dtype=jnp.float32).reshape(64, 64)
    def double(a):
        return a * 2.0
    def shift(a):
        return a + 1.0
    print(float(jax.jit(double)(x)[0, 0]), float(jax.jit(shift)(x)[0, 0]))
"""


@pytest.mark.fault
def test_jax_own_store_runs_a_swapped_program(tmp_path):
    """Why the suite seals its programs instead of using JAX's own store as it is: with that
    store, one program's file copied over another's name is loaded and run, and `shift`
    returns `double`'s numbers. When a JAX release checks its entries, this fails: the seal
    can then give way to JAX's own store."""
    folder = tmp_path / "plain"
    script = textwrap.dedent(PLAIN_JAX_STORE)
    command = [sys.executable, "-c", script, str(folder)]
    env = {k: v for k, v in child_env().items() if k != "JAX_COMPILATION_CACHE_DIR"}
    first = subprocess.run(command, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert first.returncode == 0, first.stderr
    assert first.stdout.split() == ["-6.0", "-2.0"]
    [double] = folder.glob("jit_double-*")
    [shift] = folder.glob("jit_shift-*")
    shutil.copyfile(double, shift)
    swapped = subprocess.run(command, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert swapped.returncode == 0, swapped.stderr
    assert swapped.stdout.split() == ["-6.0", "-6.0"], "JAX's own store now refuses a swapped file"


def test_children_share_the_test_runs_folder():
    """This suite's conftest turned the cache on and exported it, so the processes tests start
    reuse the programs compiled by earlier ones (unless switched off)."""
    if os.environ.get(compile_cache.SWITCH_VARIABLE) == "0":
        pytest.skip("compilation cache switched off for this run")
    folder = os.environ[compile_cache.FOLDER_VARIABLE]
    assert jax.config.jax_compilation_cache_dir == folder
    assert Path(folder).is_dir()
