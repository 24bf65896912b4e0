"""The uncertainty guide's figure, drawn from data: both methods' bands on the grid.

`uncertainty_band_figure(data)` turns plain data (arrays, numbers; gathered by
claims/readings/uncertainty/document.py) into a matplotlib figure; nothing here runs or loads an
experiment. The report saves and caches it (engine/claim_audit/render/drawing.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from claim_audit import new_figure
from matplotlib.figure import Figure

from uncertainty_claims import metrics

ALEATORIC_COLOUR = "tab:orange"
EPISTEMIC_COLOUR = "tab:blue"
TOTAL_FILL = "#fdd9b5"  # a light tint of ALEATORIC_COLOUR, opaque: the outer band
EPISTEMIC_FILL = "#9ecae1"  # opaque: the inner band, drawn over the outer one


def _clusters(ax, clusters: list[tuple[float, float]]) -> None:
    for i, (low, high) in enumerate(clusters):
        name = "training clusters" if i == 0 else None
        ax.axvspan(low, high, color="gold", alpha=0.15, linewidth=0, label=name, zorder=0)


def _band_panels(top, bottom, data: dict, means: np.ndarray, variances: np.ndarray, method: str):
    """Top: the predictive mean with two nested ±2σ bands, the total predictive variance
    (outer) and its epistemic part (inner). Bottom: the two parts of the variance along x,
    with the true noise variance at the training points."""
    grid = np.asarray(data["grid"], dtype=np.float64)[:, 0]
    truth, x, y = data["truth"], data["x"][:, 0], data["y"][:, 0]
    parts = metrics.decompose_variance(means, variances)
    mean, aleatoric, epistemic = parts.mean[:, 0], parts.aleatoric[:, 0], parts.epistemic[:, 0]
    total_sd, epistemic_sd = np.sqrt(aleatoric + epistemic), np.sqrt(epistemic)

    top.fill_between(grid, mean - 2 * total_sd, mean + 2 * total_sd, color=TOTAL_FILL, linewidth=0, label="mean ± 2σ, total (aleatoric + epistemic)", zorder=1)  # fmt: skip
    top.fill_between(grid, mean - 2 * epistemic_sd, mean + 2 * epistemic_sd, color=EPISTEMIC_FILL, linewidth=0, label="mean ± 2σ, epistemic only", zorder=2)  # fmt: skip
    top.scatter(x, y, s=10, color="dimgrey", label="training points", zorder=3)  # fmt: skip
    top.plot(grid, truth, color="black", linestyle="--", linewidth=1.2, label=data["truth_label"], zorder=4)  # fmt: skip
    top.plot(grid, mean, color="navy", linewidth=2, label="predictive mean", zorder=5)
    in_cluster = float(epistemic[data["in_cluster"]].mean())
    away = float(epistemic[data["away"]].mean())
    top.set_title(
        f"{method}\nmean epistemic variance: in clusters {in_cluster:.4f}, away {away:.4f}"
    )
    top.set_xlim(grid.min(), grid.max())
    # Frame the data and the epistemic band; the total band may run past the frame (its size
    # is read off the bottom panel), which the panel then says.
    shown = np.concatenate([mean - 2 * epistemic_sd, mean + 2 * epistemic_sd, y, truth])  # fmt: skip
    low, high = float(shown.min()), float(shown.max())
    pad = 0.15 * (high - low)
    top.set_ylim(low - pad, high + pad)
    if np.any(mean - 2 * total_sd < low - pad) or np.any(mean + 2 * total_sd > high + pad):
        top.text(0.01, 0.98, "total band runs past the frame", transform=top.transAxes, ha="left", va="top", fontsize="small", color="saddlebrown", bbox={"facecolor": "white", "alpha": 0.8, "linewidth": 0})  # fmt: skip
    top.grid(True, alpha=0.3)

    _clusters(bottom, data["clusters"])  # not on the top panel: its opaque bands would hide it
    bottom.plot(grid, aleatoric, color=ALEATORIC_COLOUR, linewidth=2, label="aleatoric E[σ²] (predicted noise)")  # fmt: skip
    bottom.plot(grid, epistemic, color=EPISTEMIC_COLOUR, linewidth=2, label="epistemic Var[μ] (disagreement)")  # fmt: skip
    order = np.argsort(x)
    bottom.plot(x[order], data["noise_std"][order, 0] ** 2, linestyle="none", marker=".", color="black", markersize=4, label="true noise variance at the training points")  # fmt: skip
    bottom.set_yscale("log")
    bottom.set_xlim(grid.min(), grid.max())
    bottom.set_xlabel("input x (dimensionless)")
    bottom.grid(True, which="major", alpha=0.3)


def uncertainty_band_figure(data: dict[str, Any]) -> Figure:
    """MC-Dropout and the ensemble on the grid: the predictive mean with its total and
    epistemic ±2σ bands (top), aleatoric and epistemic variance along x (bottom).

    data: `root_seed`; the training points `x`, `y`, `noise_std` ([n, 1]); the `grid` ([g, 1])
    with the `truth` on it and its `truth_label`; boolean masks `in_cluster` and `away` of
    the grid; the training `clusters` as (low, high) pairs; and the per-pass (per-member)
    predictive means and variances on the grid, `mc_means`, `mc_vars`, `ens_means`, `ens_vars`.
    """
    fig = new_figure(11.0, 7.6)
    axes = fig.subplots(2, 2, sharex=True, height_ratios=(3, 2))
    methods = (
        (f"MC-Dropout ({data['mc_means'].shape[0]} stochastic passes)", data["mc_means"], data["mc_vars"]),
        (f"Deep ensemble ({data['ens_means'].shape[0]} members)", data["ens_means"], data["ens_vars"]),
    )  # fmt: skip
    for column, (method, means, variances) in enumerate(methods):
        _band_panels(axes[0, column], axes[1, column], data, means, variances, method)
    axes[0, 0].set_ylabel("target y (dimensionless)")
    axes[1, 0].set_ylabel("variance of y (log scale)")
    handles, names = [], []
    for ax in axes[:, 0]:
        more_handles, more_names = ax.get_legend_handles_labels()
        handles += more_handles
        names += more_names
    fig.legend(handles, names, loc="outside lower center", ncols=3, frameon=False)
    fig.suptitle(
        f"Aleatoric and epistemic uncertainty on the toy regression, root seed {data['root_seed']}\n"
        "(over passes / members: aleatoric = mean predicted variance, epistemic = variance of the means)"
    )
    return fig
