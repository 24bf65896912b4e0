"""What one process of a run sets up before its first computation: the most a child process
may take, the compiled-program cache, whether JAX can start at all, and whether this process
holds the accelerator."""

from __future__ import annotations

import os
from pathlib import Path

from . import _child, _devices
from ._compile_cache import enable_compilation_cache
from ._startup import jax_start_error


def prepare_process(
    worker: str | None,
    workers: int,
    *,
    cache_dir: Path | None,
    budget_s: float | None,
    try_start: bool,
    open_now: bool,
) -> str | None:
    """Set up this process of a run (`worker`: its xdist id, None for the controller; `workers`
    in all) before JAX starts a backend. No child process outlives `budget_s` (None: no
    bound); compiled programs are kept in `cache_dir` (`enable_compilation_cache`); with
    `try_start`, a child process first tries to start JAX under this environment; on a machine
    with an accelerator, this process holds it or keeps off it (`place_processes`) and, when it
    holds it and `open_now`, starts opening it in the background. Returns the accelerator's
    platform, None on a CPU-only machine.

    Raises:
      ValueError: CLAIMS_COMPILATION_CACHE is neither on nor off.
      RuntimeError: JAX cannot start under this environment (the message says why).
    """
    _child.timeout_s = budget_s
    enable_compilation_cache(cache_dir)
    if try_start:
        error = jax_start_error()
        if error is not None:
            raise RuntimeError(
                f"JAX cannot start with XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}, "
                f"JAX_PLATFORMS={os.environ.get('JAX_PLATFORMS', '')!r}: {error}"
            )
    platform = _devices.place_processes(worker, workers)
    if platform and open_now and _devices.holds_accelerator(worker, workers):
        _devices.open_in_background()
    return platform
