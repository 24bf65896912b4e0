"""Where a computation runs: on the host's CPU or an accelerator, in which arithmetic, in which
process. The recipes (uncertainty_claims.calibration, .uncertainty) compute; the code that
builds their orders chooses where, with these five names:

- `prepare_process`: what one process of a run sets up first (which process holds the
  accelerator, the compiled-program cache, the budget of child processes).
- `accelerator`: the accelerator JAX would open by default, found without opening it.
- `on_host`: the host's CPU as JAX's default device (where a faithful order computes).
- `host_process`: a function computed on the host's CPU, in a child process of its own
  beside an accelerator.
- `where`: where this thread computes now, for a cache key, and the runners that depend on
  it (`Where.spread`, `Where.side_by_side`).

On a CPU-only machine none of them changes a computed bit.
"""

from ._devices import accelerator_platform as accelerator
from ._devices import on_host
from ._devices import on_the_host as host_process
from ._process import prepare_process
from ._where import where

__all__ = ["accelerator", "host_process", "on_host", "prepare_process", "where"]
