"""The guide's Gaussian MLP (mean and log-variance heads, dropout) and its NLL loss."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import nnx

LOG_VAR_MIN = -6.0
LOG_VAR_MAX = 4.0


class GaussianMLP(nnx.Module):
    """MLP that outputs (mu, log_var) with dropout for MC sampling (the guide's model, verbatim).

    Construction order (l1, l2, drop, mu_head, logvar_head) decides which key each layer
    draws from ``rngs``; the single Dropout module forks its own stream and is applied after
    both hidden layers, so one forward pass with ``train=True`` advances it twice.
    """

    def __init__(self, in_features=1, hidden=64, dropout_rate=0.1, *, rngs: nnx.Rngs):
        self.l1 = nnx.Linear(in_features, hidden, rngs=rngs)
        self.l2 = nnx.Linear(hidden, hidden, rngs=rngs)
        self.drop = nnx.Dropout(dropout_rate, rngs=rngs)
        self.mu_head = nnx.Linear(hidden, 1, rngs=rngs)
        self.logvar_head = nnx.Linear(hidden, 1, rngs=rngs)

    def __call__(self, x, train: bool = False):
        h = nnx.relu(self.l1(x))
        h = self.drop(h, deterministic=not train)
        h = nnx.relu(self.l2(h))
        h = self.drop(h, deterministic=not train)
        mu = self.mu_head(h)
        log_var = jnp.clip(self.logvar_head(h), LOG_VAR_MIN, LOG_VAR_MAX)
        return mu, log_var


def gaussian_nll(mu: jax.Array, log_var: jax.Array, y: jax.Array) -> jax.Array:
    """Mean Gaussian negative log-likelihood (drops the constant term)."""
    inv_var = jnp.exp(-log_var)
    return 0.5 * jnp.mean(log_var + (y - mu) ** 2 * inv_var)
