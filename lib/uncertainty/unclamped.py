"""The guide's recipe with its log-variance clamp removed: an addition beside the faithful
recipe (its fifth pitfall), never a change to it.

`unclamped_runs()` trains, from each of root keys 0..20, the MC-Dropout net and the
ensemble exactly as `lib.uncertainty.experiment.run(implementation="scan")` does (same
data, keys, initial weights, batches, resamples; on a CPU its MC-Dropout part is the
faithful order bit for bit), but with a model whose log-variance head is not clipped. It
keeps the training losses and the log-variances reached on the training inputs.
"""

from __future__ import annotations

import jax
import numpy as np
from flax import nnx

from lib.cache import cached, lib_sources, runtime_key, source_digest
from lib.numerics import full_precision
from lib.optimizers import adam
from lib.uncertainty.config import UncertaintyConfig
from lib.uncertainty.data import make_data, root_keys
from lib.uncertainty.model import GaussianMLP
from lib.uncertainty.training import _ensemble_scan, _mc_scan, bootstrap_indices

KEYS = tuple(range(21))
_CODE_DIGEST = source_digest(lib_sources(__name__))


class UnclampedMLP(GaussianMLP):
    """The guide's GaussianMLP (same layers, construction order, initial weights) without
    `jnp.clip` on the log-variance."""

    def __call__(self, x, train: bool = False):
        h = nnx.relu(self.l1(x))
        h = self.drop(h, deterministic=not train)
        h = nnx.relu(self.l2(h))
        h = self.drop(h, deterministic=not train)
        return self.mu_head(h), self.logvar_head(h)


@full_precision
def unclamped_run(root_seed: int, config: UncertaintyConfig = UncertaintyConfig()) -> dict:
    """Root key `root_seed`'s recipe without the clamp: losses and reached log-variances."""
    dkey, tkey, bkey = root_keys(root_seed)
    data = make_data(dkey)
    model = UnclampedMLP(dropout_rate=config.dropout_rate, rngs=nnx.Rngs(root_seed))
    graphdef, state = nnx.split((model, nnx.Optimizer(model, adam(config.lr), wrt=nnx.Param)))
    state, bkey, mc_loss = _mc_scan(
        graphdef, state, bkey, data.x, data.y, steps=config.mc_steps, batch=config.mc_batch
    )
    model, _ = nnx.merge(graphdef, state)
    _, mc_log_var = model(data.x, train=False)

    @nnx.vmap(in_axes=0, out_axes=0)
    def make_ensemble(key):
        member = UnclampedMLP(dropout_rate=config.dropout_rate, rngs=nnx.Rngs(key))
        return member, nnx.Optimizer(member, adam(config.lr), wrt=nnx.Param)

    ens_def, ens_state = nnx.split(make_ensemble(jax.random.split(tkey, config.members)))
    idx = bootstrap_indices(bkey, members=config.members, n=data.x.shape[0])
    ens_state, ens_loss = _ensemble_scan(
        ens_def, ens_state, data.x[idx], data.y[idx], steps=config.ensemble_steps
    )
    members, _ = nnx.merge(ens_def, ens_state)
    _, ens_log_var = nnx.vmap(lambda m, x: m(x), in_axes=(0, None))(members, data.x)
    return jax.device_get(
        {
            "mc_loss": mc_loss,
            "ens_loss": ens_loss,
            "mc_log_var": mc_log_var,
            "ens_log_var": ens_log_var,
        }
    )


def unclamped_runs(config: UncertaintyConfig = UncertaintyConfig()) -> dict[str, np.ndarray]:
    """`unclamped_run` for every key of KEYS, stacked over the keys (cached on disk)."""

    def compute() -> dict[str, np.ndarray]:
        runs = [unclamped_run(key, config) for key in KEYS]
        return {name: np.stack([np.asarray(r[name]) for r in runs]) for name in runs[0]}

    key = {"keys": list(KEYS), "config": config.__dict__, "code": _CODE_DIGEST, **runtime_key()}
    return cached("uncertainty-unclamped", key, compute).arrays
