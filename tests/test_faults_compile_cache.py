"""Compiled-program cache faults (lib/compile_cache.py): another program's file under a
program's name, and a disk that cannot take the programs. Neither may change a number or
stop a run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from fault_tools import REPO_ROOT, TIMEOUT_S, pytest_command, run_python

from uncertainty_claims import compile_cache

pytestmark = pytest.mark.fault

# Where a child keeps its programs is given by the argument alone (not inherited from this run).
FOLDER_VARIABLES = (compile_cache.FOLDER_VARIABLE, "JAX_COMPILATION_CACHE_DIR")


def own_cache_env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in FOLDER_VARIABLES}
    return {**env, **overrides}


# Two programs of the same signature: either's machine code runs on the other's inputs.
PROGRAMS = """
    x = jnp.linspace(-3.0, 3.0, 4096, dtype=jnp.float32).reshape(64, 64)
    def double(a):
        return a * 2.0
    def shift(a):
        return a + 1.0
    print(jax.jit(double)(x).tobytes().hex(), jax.jit(shift)(x).tobytes().hex())
"""
# ... kept in the suite's sealed store, which prints its folder first,
TWO_PROGRAMS = (
    """
    from pathlib import Path
    import jax, jax.numpy as jnp
    from uncertainty_claims.compile_cache import enable_compilation_cache
    print(enable_compilation_cache(Path({cache_dir!r})))
"""
    + PROGRAMS
)
# ... or in JAX's own persistent cache, set through its public options only.
TWO_PROGRAMS_IN_JAX_STORE = (
    """
    import jax, jax.numpy as jnp
    jax.config.update("jax_compilation_cache_dir", {cache_dir!r})
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
"""
    + PROGRAMS
)


def test_another_programs_file_under_a_programs_name_is_compiled_afresh(tmp_path):
    """One compiled program's file copied over another's (`double`'s over `shift`'s): the file
    fails its seal, JAX warns, `shift` is compiled afresh (the same bytes as before) and the
    fresh program replaces the file, so the next run loads it silently. Bug fixed: JAX's own
    store ties nothing in a file to its name, so `shift` silently returned `double`'s
    numbers; the suite now gives JAX a store that seals each program, and hands it to child
    processes as CLAIMS_COMPILATION_CACHE_DIR, not JAX's variable (lib/compile_cache.py
    `SealedStore`, `enable_compilation_cache`)."""
    script = TWO_PROGRAMS.format(cache_dir=str(tmp_path))
    first = run_python(script, env=own_cache_env())
    assert first.returncode == 0, first.stderr
    folder = tmp_path / "xla"
    assert first.stdout.split()[0] == str(folder)
    [double] = folder.glob("jit_double-*-cache")
    [shift] = folder.glob("jit_shift-*-cache")
    shutil.copyfile(double, shift)

    swapped = run_python(script, env=own_cache_env())
    assert swapped.returncode == 0, swapped.stderr
    assert swapped.stdout == first.stdout
    assert "Error reading persistent compilation cache entry for 'jit_shift'" in swapped.stderr
    assert "is not the program sealed under its name" in swapped.stderr

    healed = run_python(script, env=own_cache_env())
    assert healed.returncode == 0, healed.stderr
    assert healed.stdout == first.stdout
    assert "persistent compilation cache" not in healed.stderr


def test_jax_own_store_runs_a_swapped_program(tmp_path):
    """Why the suite seals its programs instead of using JAX's own store as it is: with that
    store, `double`'s file copied over `shift`'s is loaded and run, and `shift` returns
    `double`'s numbers. When a JAX release checks its entries, this fails: the seal can then
    give way to JAX's own store."""
    script = TWO_PROGRAMS_IN_JAX_STORE.format(cache_dir=str(tmp_path))
    first = run_python(script, env=own_cache_env())
    assert first.returncode == 0, first.stderr
    doubled, shifted = first.stdout.split()
    assert doubled != shifted
    [double] = tmp_path.glob("jit_double-*")
    [shift] = tmp_path.glob("jit_shift-*")
    shutil.copyfile(double, shift)

    swapped = run_python(script, env=own_cache_env())
    assert swapped.returncode == 0, swapped.stderr
    assert swapped.stdout.split() == [doubled, doubled], (
        "JAX's own store now refuses a swapped file"
    )


def test_program_stored_by_jax_itself_is_compiled_afresh_and_replaced(tmp_path):
    """A folder written by JAX's own store (a plain JAX process's, or this suite's before
    programs were sealed): its unsealed files are never loaded; each program is compiled
    afresh and replaced by a sealed one, quietly (an old cache is not damage). Bug fixed:
    part of the sealed store, see the test above (lib/compile_cache.py `SealedStore`)."""
    folder = tmp_path / "xla"
    plain_jax = TWO_PROGRAMS.replace(
        "print(enable_compilation_cache(Path({cache_dir!r})))",
        "jax.config.update('jax_compilation_cache_dir', {folder!r}); print({folder!r})\n"
        "    jax.config.update('jax_persistent_cache_min_compile_time_secs', 0.0)",
    ).format(folder=str(folder))
    first = run_python(plain_jax, env=own_cache_env())
    assert first.returncode == 0, first.stderr
    unsealed = {p.name: p.read_bytes() for p in folder.glob("jit_*-cache")}
    assert {name.split("-")[0] for name in unsealed} >= {"jit_double", "jit_shift"}

    script = TWO_PROGRAMS.format(cache_dir=str(tmp_path))
    sealed = run_python(script, env=own_cache_env())
    assert sealed.returncode == 0, sealed.stderr
    assert sealed.stdout.split()[1:] == first.stdout.split()[1:]
    assert "persistent compilation cache" not in sealed.stderr
    for name, data in unsealed.items():
        assert (folder / name).read_bytes() != data
        assert (folder / name).read_bytes().startswith(compile_cache._MAGIC)


FULL_DISK_MODULE = """
    import jax
    import jax.numpy as jnp

    def test_compiles_and_computes():
        assert jax.jit(lambda a: a * 2.0 + 1.0)(jnp.arange(4.0)).tolist() == [1.0, 3.0, 5.0, 7.0]
"""
COMPILE_CACHE_CONFTEST = """\
from uncertainty_claims.compile_cache import enable_compilation_cache


def pytest_configure(config):
    enable_compilation_cache()
"""
# Runs its arguments as a Python command line with files limited to 1000 bytes: every
# compiled program (about 2 kB and more) fails to be written, as on a full disk.
# (Python ignores SIGXFSZ, so the write fails with EFBIG.)
SMALL_FILES = (
    "import os, resource, sys; "
    "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000)); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


def test_disk_that_cannot_take_a_program_runs_uncached_and_says_so(tmp_path):
    """Compiled programs cannot be written (files limited to 1000 bytes, as on a full disk; also
    tried on a full 1 MB tmpfs): the run goes on uncached, the warnings summary says the
    program was not cached, and no partial program is left. Bug fixed: JAX's warning "Error
    writing persistent compilation cache entry" became an error of every test that compiled,
    and JAX's store left a partial file (pyproject.toml filterwarnings; lib/compile_cache.py
    `SealedStore.put` writes a temporary file and renames it)."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "test_full_disk.py").write_text(textwrap.dedent(FULL_DISK_MODULE))
    # The compiled-program cache is this suite's setting (conftest.py), not the plugin's.
    (folder / "conftest.py").write_text(COMPILE_CACHE_CONFTEST)
    cache_dir = tmp_path / "cache"
    command = pytest_command(
        *("-c", str(REPO_ROOT / "pyproject.toml"), "--rootdir", str(folder)),
        # xdist and pytest-timeout: named in the suite's addopts.
        *("-p", "uncertainty_claims.report.plugin", "--no-report", str(folder)),
    )
    result = subprocess.run(
        [sys.executable, "-c", SMALL_FILES, *command[1:]],
        cwd=folder,
        env=own_cache_env(
            PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",  # as tiny_pytest_env: plugins named with -p
            CLAIMS_CACHE_DIR=str(cache_dir),
            PYTHONDONTWRITEBYTECODE="1",
        ),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "1 passed" in result.stdout
    assert "Error writing persistent compilation cache entry" in result.stdout
    assert "File too large" in result.stdout
    assert [p.name for p in (cache_dir / "xla").iterdir()] == []
