"""Float-rounding twins: a run whose initial weights are moved by one float32 step.

Not part of any recipe. A twin follows the recipe exactly except that a random 5% of its
initial weights sit one float32 ulp higher, a perturbation of the size of one rounding. A
training that amplifies rounding ends elsewhere; one that does not gives the same figures.
The suite judges its claims over such twins beside the other valid orders (lib/orders/).
"""

from __future__ import annotations

import jax
import numpy as np
from flax import nnx


def nudge_params(module: nnx.Module, seed: int, *, fraction: float = 0.05) -> None:
    """Move a random ``fraction`` of the module's Param entries up by one float32 ulp, in
    place; the entries are chosen by ``numpy.random.default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    params = nnx.state(module, nnx.Param)
    leaves, treedef = jax.tree.flatten(params)
    nudged = []
    for leaf in leaves:
        a = np.asarray(leaf)
        up = np.nextafter(a, np.asarray(np.inf, dtype=a.dtype))
        nudged.append(jax.device_put(np.where(rng.random(a.shape) < fraction, up, a)))
    nnx.update(module, jax.tree.unflatten(treedef, nudged))
