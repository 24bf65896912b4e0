"""Compiled-program cache faults (lib/placement/_compile_cache.py, JAX's own persistent cache): a disk
that cannot take the programs must not stop a run; another program's file under a
program's name is run (a known limit of JAX's store, kept in view here).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest
from fault_tools import REPO_ROOT, TIMEOUT_S, child_env, pytest_command, run_python

from uncertainty_claims.placement import _compile_cache as compile_cache

pytestmark = pytest.mark.fault

# Where a child keeps its programs is given by the argument alone (not inherited from this run).
FOLDER_VARIABLES = (compile_cache.FOLDER_VARIABLE, "JAX_COMPILATION_CACHE_DIR")


def own_cache_env(**overrides: str) -> dict[str, str]:
    env = {k: v for k, v in child_env().items() if k not in FOLDER_VARIABLES}
    return {**env, **overrides}


# Two programs of the same signature (either's machine code runs on the other's inputs),
# kept in the project's compiled-program cache.
TWO_PROGRAMS = """
    from pathlib import Path
    import jax, jax.numpy as jnp
    from uncertainty_claims.placement._compile_cache import enable_compilation_cache
    print(enable_compilation_cache(Path({cache_dir!r})))
    x = jnp.linspace(-3.0, 3.0, 4096, dtype=jnp.float32).reshape(64, 64)
    def double(a):
        return a * 2.0
    def shift(a):
        return a + 1.0
    print(jax.jit(double)(x).tobytes().hex(), jax.jit(shift)(x).tobytes().hex())
"""


def test_jax_own_store_runs_a_swapped_program(tmp_path):
    """A known limit of JAX's store: it names a file by its key but keeps nothing inside
    that ties the bytes to it, so `double`'s file copied over `shift`'s is loaded and run,
    and `shift` returns `double`'s numbers. Only a hand-edited cache folder does that; clear
    it (`rm -r .cache/jax-programs`) after copying files into it. When a JAX release checks
    its entries, this fails: then say so in lib/placement/_compile_cache.py and drop this test."""
    script = TWO_PROGRAMS.format(cache_dir=str(tmp_path))
    first = run_python(script, env=own_cache_env())
    assert first.returncode == 0, first.stderr
    _, doubled, shifted = first.stdout.split()
    assert doubled != shifted
    folder = tmp_path / compile_cache.FOLDER_NAME
    [double] = folder.glob("jit_double-*-cache")
    [shift] = folder.glob("jit_shift-*-cache")
    shutil.copyfile(double, shift)

    swapped = run_python(script, env=own_cache_env())
    assert swapped.returncode == 0, swapped.stderr
    assert swapped.stdout.split()[1:] == [doubled, doubled], (
        "JAX's own store now refuses a swapped file"
    )


FULL_DISK_MODULE = """
    import jax
    import jax.numpy as jnp

    def test_compiles_and_computes():
        assert jax.jit(lambda a: a * 2.0 + 1.0)(jnp.arange(4.0)).tolist() == [1.0, 3.0, 5.0, 7.0]
"""
COMPILE_CACHE_CONFTEST = """\
from claim_audit.cache import default_cache_dir

from uncertainty_claims.placement._compile_cache import enable_compilation_cache


def pytest_configure(config):
    enable_compilation_cache(default_cache_dir())
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
    """Compiled programs cannot be written (files limited to 1000 bytes, as on a full disk):
    the run goes on uncached and the warnings summary says the program was not cached. Bug
    fixed: JAX's warning "Error writing persistent compilation cache entry" became an error
    of every test that compiled (pyproject.toml filterwarnings)."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "test_full_disk.py").write_text(textwrap.dedent(FULL_DISK_MODULE))
    # The compiled-program cache is this suite's setting (conftest.py), not the plugin's.
    (folder / "conftest.py").write_text(COMPILE_CACHE_CONFTEST)
    cache_dir = tmp_path / "cache"
    command = pytest_command(
        *("-c", str(REPO_ROOT / "pyproject.toml"), "--rootdir", str(folder)),
        # xdist and pytest-timeout: named in the suite's addopts.
        *("-p", "claim_audit.report.plugin", "--no-report", str(folder)),
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
