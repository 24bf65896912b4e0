"""The guide's Gaussian NLL written two ways, for its fifth pitfall: with `exp(-log_var)`
(the recipe's `gaussian_nll`) and dividing by the variance `exp(log_var)` (the form the
pitfall advises against). An addition beside the recipe, never a change to it.

`accuracy_over_log_var` evaluates both forms and their gradients in float32 on a grid of
log-variances, against the same quantities computed in float64 from their closed forms,
and says where each form is accurate.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .model import gaussian_nll

FLOAT32_TINY = float(np.finfo(np.float32).tiny)
ACCURATE = 2.0**-18
"""A float32 result is accurate when it lies within 2^-18 (32 float32 units in the last
place) of the float64 value, relative to the size of the terms it sums: a few operations'
rounding is far below this, a failure (inf, NaN, a result flushed to 0) far above."""


def divided_nll(mu: jax.Array, log_var: jax.Array, y: jax.Array) -> jax.Array:
    """`gaussian_nll` with the squared residual divided by the variance exp(log_var)."""
    return 0.5 * jnp.mean(log_var + (y - mu) ** 2 / jnp.exp(log_var))


FORMS = {"exp(-log_var)": gaussian_nll, "divided by exp(log_var)": divided_nll}


def _reference(log_var: np.ndarray, residual: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The loss and its gradients in mu and log_var at one point, in float64 from their
    closed forms, each with the size of the terms it sums (the scale of its accuracy)."""
    lv = log_var.astype(np.float64)
    term = residual**2 * np.exp(-lv)  # (y - mu)^2 / variance
    d_mu = -residual * np.exp(-lv)
    return {
        "loss": (0.5 * (lv + term), 0.5 * (np.abs(lv) + term)),
        "d loss / d log_var": (0.5 * (1 - term), 0.5 * (1 + term)),
        "d loss / d mu": (d_mu, np.abs(d_mu)),
    }


def _float32(form, log_var: np.ndarray, residual: float) -> dict[str, np.ndarray]:
    """The loss and its gradients of `form` at one point (mu = 0, y = residual), in float32,
    for each log-variance."""
    y = jnp.full(1, residual, jnp.float32)

    def loss(mu, lv):
        return form(jnp.full(1, mu, jnp.float32), jnp.full(1, lv, jnp.float32), y)

    lv = jnp.asarray(log_var, jnp.float32)
    zero = jnp.zeros_like(lv)
    value = jax.vmap(loss)(zero, lv)
    d_mu, d_lv = jax.vmap(jax.grad(loss, argnums=(0, 1)))(zero, lv)
    out = {"loss": value, "d loss / d log_var": d_lv, "d loss / d mu": d_mu}
    return {name: np.asarray(array, np.float64) for name, array in out.items()}


def accuracy_over_log_var(log_var: np.ndarray, residual: float) -> dict[str, dict[str, np.ndarray]]:
    """form -> quantity -> [len(log_var)] bool: where the float32 value is finite and
    within `ACCURATE` of the float64 one (relative to its terms' size, and at least
    float32's smallest normal number, below which any float32 value reads 0)."""
    reference = _reference(log_var, residual)
    accurate = {}
    for name, form in FORMS.items():
        got = _float32(form, log_var, residual)
        accurate[name] = {
            quantity: np.isfinite(got[quantity])
            & (np.abs(got[quantity] - want) <= ACCURATE * scale + FLOAT32_TINY)
            for quantity, (want, scale) in reference.items()
        }
    return accurate
