"""The report's figures, drawn from data: the calibration post's (seed 0), the uncertainty
guide's, and the robustness section's.

Each `*_figure(data)` turns plain data (arrays, numbers, dicts; gathered by the documents'
side, lib/calibration/report.py and lib/uncertainty/report.py) into a figure; nothing here
runs or loads an experiment. `draw_all(folder, documents)` writes every figure of the given
documents into `folder`, each as a PNG and, beside it, an SVG of the same name (for papers),
reusing the files of a figure whose data and code are unchanged (lib/report/figure_cache.py).
Figures are built on `matplotlib.figure.Figure` and saved through the Agg canvas, so no
global pyplot state (figure registry, interactive backend) is touched.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from uncertainty_claims import cache, metrics
from uncertainty_claims.report.documents import Document, FigureSpec
from uncertainty_claims.report.figure_cache import (
    cached_figure,
    figure_files,
    is_stored,
    stored_figure,
)

DPI = 110
T_RANGE = (0.05, 20.0)
SPARSE_BIN = 30  # reliability bins with fewer images get their count printed

NET_LABEL = {"yat": "Yat", "relu": "ReLU"}
NET_COLOUR = {"yat": "tab:blue", "relu": "tab:orange"}
TEST_LABEL = "Fashion-MNIST test (in-distribution)"
OOD_LABEL = "MNIST test (OOD)"
TEST_COLOUR = "tab:blue"
OOD_COLOUR = "tab:red"


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, path: Path) -> Path:
    """Write `fig` as the PNG `path` and as an SVG beside it; returns the PNG's path."""
    fig.savefig(path, dpi=DPI, format="png", metadata={"Software": None})
    # A fixed salt and no date: the same figure gives the same SVG bytes.
    with matplotlib.rc_context({"svg.hashsalt": "uncertainty-claims"}):
        fig.savefig(path.with_suffix(".svg"), format="svg", metadata={"Date": None})
    fig.clear()  # not registered with pyplot; clearing frees the artists at once
    return path


# --------------------------------------------------------------------------- calibration


def _reliability_panel(ax, probs: np.ndarray, labels: np.ndarray, title: str, n_bins: int) -> None:
    bins = metrics.reliability_bins(probs, labels, n_bins=n_bins)
    width = 1.0 / n_bins
    centres = (bins.edges[:-1] + bins.edges[1:]) / 2
    filled = bins.count > 0
    ax.bar(
        centres[filled],
        bins.accuracy[filled],
        width=width,
        color="tab:blue",
        edgecolor="black",
        linewidth=0.6,
        label="accuracy per bin",
    )
    gap_low = np.minimum(bins.accuracy, bins.mean_confidence)[filled]
    gap_high = np.maximum(bins.accuracy, bins.mean_confidence)[filled]
    ax.bar(
        centres[filled],
        gap_high - gap_low,
        bottom=gap_low,
        width=width,
        facecolor="none",
        edgecolor="tab:red",
        hatch="///",
        linewidth=0.8,
        label="gap to mean confidence",
    )
    for centre, count in zip(centres[filled], bins.count[filled], strict=True):
        if count < SPARSE_BIN:  # noisy bins: print their size at the foot of the bar
            ax.text(
                centre,
                0.02,
                f"n={count}",
                rotation=90,
                ha="center",
                va="bottom",
                fontsize="x-small",
                bbox={
                    "boxstyle": "round,pad=0.15",
                    "facecolor": "white",
                    "alpha": 0.8,
                    "linewidth": 0,
                },
            )
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", linewidth=1, label="perfect calibration")
    ax.set(xlim=(0, 1), ylim=(0, 1), title=title)
    ax.set_xlabel("confidence, max softmax probability (fraction)")
    ax.set_ylabel("accuracy (fraction correct)")
    ax.set_aspect("equal")


def reliability_figure(data: dict[str, Any]) -> Figure:
    """2x2 reliability diagrams: Yat / ReLU (rows), before / after temperature scaling.

    data: `seed`, `n_bins`, the test `labels`, and per net of `nets` ("yat", "relu") its
    test `logits`, fitted temperature `T`, `ece` and `ece_T` (fractions)."""
    fig = _figure(8.4, 8.6)
    axes = fig.subplots(2, 2)
    labels, n_bins = data["labels"], data["n_bins"]
    for row, (net, figures) in enumerate(data["nets"].items()):
        logits = figures["logits"]
        temperature = figures["T"]
        _reliability_panel(
            axes[row, 0],
            metrics.softmax(logits),
            labels,
            f"{NET_LABEL[net]}, before scaling (T = 1)\nECE = {100 * figures['ece']:.2f} %",
            n_bins,
        )
        _reliability_panel(
            axes[row, 1],
            metrics.softmax(metrics.scale_logits(logits, temperature)),
            labels,
            f"{NET_LABEL[net]}, after scaling (T = {temperature:.3f})\n"
            f"ECE = {100 * figures['ece_T']:.2f} %",
            n_bins,
        )
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, loc="outside lower center", ncols=3, frameon=False)
    fig.suptitle(
        f"Reliability on Fashion-MNIST test, seed {data['seed']}"
        f"\n({n_bins} equal-width bins; n = images in a bin, shown where below {SPARSE_BIN})"
    )
    return fig


def heldout_nll_figure(data: dict[str, Any]) -> Figure:
    """Held-out NLL against temperature for both nets, the fitted T marked.

    data: `seed`, the held-out `labels`, and per net of `nets` its held-out `logits` and
    fitted temperature `T`."""
    fig = _figure(6.4, 4.4)
    ax = fig.subplots()
    temperatures = np.geomspace(*T_RANGE, 121)
    labels = data["labels"]
    for net, run in data["nets"].items():
        logits = run["logits"]
        fitted = run["T"]
        curve = metrics.heldout_nll_curve(logits, labels, temperatures)
        at_fit = metrics.heldout_nll_curve(logits, labels, np.array([fitted]))[0]
        colour = NET_COLOUR[net]
        ax.plot(temperatures, curve, color=colour, label=f"{NET_LABEL[net]}")
        ax.axvline(fitted, color=colour, linestyle=":", linewidth=1)
        ax.plot(
            [fitted],
            [at_fit],
            marker="o",
            color=colour,
            linestyle="none",
            label=f"{NET_LABEL[net]} fitted T = {fitted:.3f} (NLL {at_fit:.3f})",
        )
    ax.axvline(1.0, color="grey", linestyle="--", linewidth=1, label="T = 1 (no scaling)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(*T_RANGE)
    ax.set_xlabel("temperature T (logits divided by T, dimensionless; log scale)")
    ax.set_ylabel("held-out NLL (nats per image; log scale)")
    ax.set_title(f"Temperature fit on the {len(labels):,} held-out images, seed {data['seed']}")
    plain = FuncFormatter(lambda value, _: f"{value:g}")
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.tick_params(axis="y", which="minor", labelsize="small")
    ax.legend(fontsize="small")
    ax.grid(True, which="major", alpha=0.3)
    return fig


TEST_FILL = "#c6dbef"  # a light tint of TEST_COLOUR, opaque


def _fraction_hist(ax, values: np.ndarray, bins: np.ndarray, *, ood: bool) -> None:
    """One distribution as the fraction of images per bin. The in-distribution one is an
    opaque light fill under its outline; the OOD one an outline with red hatching and no
    fill, drawn on top: where they overlap both stay readable and no colour mixes."""
    style = (
        {"facecolor": "none", "edgecolor": OOD_COLOUR, "hatch": "////", "zorder": 3}
        if ood
        else {"facecolor": TEST_FILL, "edgecolor": TEST_COLOUR, "zorder": 2}
    )
    ax.hist(
        values,
        bins=bins,
        weights=np.full(values.shape, 1.0 / values.size),
        histtype="stepfilled",
        linewidth=1.4,
        label=OOD_LABEL if ood else TEST_LABEL,
        **style,
    )


def confidence_figure(data: dict[str, Any]) -> Figure:
    """Max-softmax confidence on Fashion test vs MNIST, one panel per net.

    data: `seed`, and per net of `nets` its `logits_test`, `logits_ood` and `auroc_msp`."""
    fig = _figure(9.6, 4.2)
    axes = fig.subplots(1, 2, sharey=True)
    bins = np.linspace(0.0, 1.0, 41)
    for ax, (net, run) in zip(axes, data["nets"].items(), strict=True):
        test = metrics.msp_score(run["logits_test"])
        ood = metrics.msp_score(run["logits_ood"])
        _fraction_hist(ax, test, bins, ood=False)
        _fraction_hist(ax, ood, bins, ood=True)
        ax.set_yscale("log")
        ax.set_xlim(0, 1)
        ax.set_xlabel("max softmax probability (fraction)")
        ax.set_title(f"{NET_LABEL[net]} (AUROC of MSP = {run['auroc_msp']:.3f})")
    axes[0].set_ylabel("fraction of images per bin (log scale)")
    axes[0].legend(loc="upper left", fontsize="small")
    fig.suptitle(
        f"Softmax confidence, in-distribution vs OOD, seed "
        f"{data['seed']} (before temperature scaling)"
    )
    return fig


def kmax_figure(data: dict[str, Any]) -> Figure:
    """Distribution of the Yat layer's largest kernel score, Fashion test vs MNIST.

    data: `seed`, the scores `test` and `ood`, and `auroc_kmax`."""
    test, ood = data["test"], data["ood"]
    both = np.concatenate([test, ood])
    fig = _figure(6.8, 4.4)
    ax = fig.subplots()
    log_x = bool(np.all(both > 0))
    if log_x:
        bins = np.geomspace(both.min(), both.max(), 61)
    else:
        bins = np.linspace(both.min(), both.max(), 61)
    _fraction_hist(ax, test, bins, ood=False)
    _fraction_hist(ax, ood, bins, ood=True)
    for values, colour, name in ((test, TEST_COLOUR, "test"), (ood, OOD_COLOUR, "MNIST")):
        median = float(np.median(values))
        ax.axvline(
            median,
            color=colour,
            linestyle="--",
            linewidth=1.5,
            label=f"median {name}: {median:.1f}",
        )
    if log_x:
        ax.set_xscale("log")
    scale = ", log scale" if log_x else ""
    ax.set_xlabel(f"kmax, largest Yat kernel score of an image (dimensionless{scale})")
    ax.set_ylabel("fraction of images per bin")
    ax.set_title(
        f"Yat field magnitude kmax, seed {data['seed']} (AUROC = {data['auroc_kmax']:.3f})"
    )
    ax.legend(fontsize="small")
    return fig


def auroc_figure(data: dict[str, Any]) -> Figure:
    """Per-seed AUROC: Yat kmax vs Yat MSP (post's subsample and full set), ReLU max logit.

    data: `per_seed` (per net, each seed's figures as in the calibration section),
    `subsample` (the numbers of test and MNIST images of the post's subsample) and
    `intervals`: None, or the robustness section's `figure_intervals` (per net and seed, the
    95% test-image bootstrap interval of each figure), drawn as bars.
    """
    per_seed, intervals = data["per_seed"], data["intervals"]
    subsample_test, subsample_ood = data["subsample"]

    series = [
        ("Yat kmax (field), subsample", "yat", "auroc_subsample.kmax", "tab:blue", "o", True),
        ("Yat MSP (softmax), subsample", "yat", "auroc_subsample.msp", "tab:green", "s", True),
        ("Yat kmax (field), full set", "yat", "auroc.kmax", "tab:blue", "o", False),
        ("Yat MSP (softmax), full set", "yat", "auroc.msp", "tab:green", "s", False),
        ("ReLU max logit, full set", "relu", "auroc.maxlogit", "tab:orange", "D", False),
    ]  # fmt: skip
    seeds = [s["seed"] for s in per_seed["yat"]]
    fig = _figure(7.6, 4.8)
    ax = fig.subplots()
    offsets = np.linspace(-0.28, 0.28, len(series))
    positions = np.arange(len(seeds), dtype=np.float64)
    drawn: list[float] = []
    with_bars = False
    for offset, (label, net, name, colour, marker, filled) in zip(offsets, series, strict=True):
        group, key = name.split(".")
        values = [s[group][key] for s in per_seed[net]]
        x = positions + offset
        ax.plot(
            x,
            values,
            marker=marker,
            markersize=8,
            linestyle="none",
            color=colour,
            markerfacecolor=colour if filled else "white",
            markeredgewidth=1.6,
            label=label,
            zorder=3,
        )
        drawn += values
        ends = _auroc_interval(intervals, net, name, seeds)
        if ends is not None:  # drawn from its ends: a BC interval need not contain the value
            with_bars = True  # on top of the marker: some intervals are narrower than it
            ax.vlines(x, ends[0], ends[1], color=colour, linewidth=1.4, zorder=4)
            for end in ends:
                ax.plot(x, end, marker="_", markersize=9, markeredgewidth=1.6, linestyle="none", color=colour, zorder=4)  # fmt: skip
            drawn += ends[0] + ends[1]
    ax.set_ylim(max(0.0, min(drawn) - 0.05), min(1.0, max(drawn) + 0.03))
    ax.set_xticks(positions, [f"seed {seed}" for seed in seeds])
    ax.set_xlim(-0.6, len(seeds) - 0.4)
    ax.set_xlabel("training seed")
    ax.set_ylabel("AUROC, Fashion test vs MNIST (fraction)")
    bars_note = "\nbars: 95% CI over the test images (bootstrap)" if with_bars else ""
    ax.set_title(
        "OOD detection per seed: field vs softmax channel\n"
        f"(subsample: {subsample_test:,} test / {subsample_ood:,} MNIST images, rounded scores)"
        f"{bars_note}",
        fontsize="medium",
    )
    for boundary in positions[:-1] + 0.5:
        ax.axvline(boundary, color="grey", linewidth=0.8, alpha=0.5)
    ax.grid(True, axis="y", alpha=0.3)
    fig.legend(loc="outside right center", fontsize="small", frameon=False)
    return fig


def _auroc_interval(
    intervals: dict[str, list[dict]] | None, net: str, name: str, seeds: list[int]
) -> tuple[list[float], list[float]] | None:
    """The low and high ends of figure `name`'s interval on each seed, or None when the
    intervals do not cover every seed."""
    entries = {e["seed"]: e for e in (intervals or {}).get(net, [])}
    if not all(seed in entries and name in entries[seed] for seed in seeds):
        return None
    return (
        [entries[seed][name]["low"] for seed in seeds],
        [entries[seed][name]["high"] for seed in seeds],
    )


# --------------------------------------------------------------------------- uncertainty


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
    fig = _figure(11.0, 7.6)
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


# --------------------------------------------------------------------------- robustness

HOLDS_COLOUR = "tab:green"
FAILS_COLOUR = "tab:red"
SWEEP_COLOUR = "tab:blue"
PANEL_HEIGHT = 1.6  # inches per claim effect


def _seed_range(seeds: list[int]) -> str:
    contiguous = seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2
    return f"{seeds[0]}-{seeds[-1]}" if contiguous else ",".join(map(str, seeds))


def _interval_bar(ax, y: float, value: float, interval: dict | None, colour: str) -> list[float]:
    """A dot at `value` and the interval as a bar; returns the x values drawn."""
    ax.plot([value], [y], marker="o", color=colour, markersize=6, zorder=4)
    if interval is None:
        return [value]
    ax.plot([interval["low"], interval["high"]], [y, y], color=colour, linewidth=2.4, zorder=3)
    for end, arrow in (("low", "<"), ("high", ">")):
        if interval[f"{end}_at_edge"]:  # that end lies beyond every resample: point outwards
            ax.plot([interval[end]], [y], marker=arrow, color=colour, markersize=7, zorder=4)
    return [value, interval["low"], interval["high"]]


def _region(ax, bounds: list[float | None], xlim: tuple[float, float]) -> None:
    low = xlim[0] if bounds[0] is None else bounds[0]
    high = xlim[1] if bounds[1] is None else bounds[1]
    ax.axvspan(low, high, color=HOLDS_COLOUR, alpha=0.12, linewidth=0)
    for bound in bounds:
        if bound is not None:
            ax.axvline(bound, color=HOLDS_COLOUR, linestyle="--", linewidth=1.2)


def _robustness_panel(ax, claim_id: str, k: int, claim: dict) -> None:
    """Rows from the bottom: each subset of the sweep (dots, green where the claim holds),
    all sweep seeds with their seed interval, the published seeds with the test-image one."""
    published, sweep = claim["published"], claim.get("sweep")
    labels, drawn = [], []
    if sweep is not None:
        values = [v[k] for v in sweep["subset_values"]]
        colours = [HOLDS_COLOUR if h else FAILS_COLOUR for h in sweep["subset_holds"]]
        jitter = np.linspace(-0.25, 0.25, len(values)) if len(values) > 1 else np.zeros(1)
        ax.scatter(values, jitter, s=12, c=colours, alpha=0.7, linewidths=0, zorder=2)
        unit = "3-seed set" if claim["document"] == "calibration" else "root key"
        labels.append(f"each {unit}, {sweep['holding']}/{sweep['total']} hold")
        drawn += values
        interval = sweep["intervals"][k]
        drawn += _interval_bar(ax, len(labels), sweep["values"][k], interval, SWEEP_COLOUR)
        what = "all" if claim["document"] == "calibration" else "mean over"
        labels.append(f"{what} {_seed_range(sweep['seeds'])}")
    interval = (published.get("intervals") or [None] * (k + 1))[k]
    drawn += _interval_bar(ax, len(labels), published["values"][k], interval, "black")
    labels.append(f"published {_seed_range(published['seeds'])}")
    bounds = published["region_bounds"][k]
    span = drawn + [b for b in bounds if b is not None]
    left, right = min(span), max(span)
    if left > 0 and right / left > 30:
        ax.set_xscale("log")
        xlim = (left / 1.3, right * 1.3)
    else:
        pad = 0.06 * ((right - left) or abs(right) or 1.0)
        xlim = (left - pad, right + pad)
    ax.set_xlim(*xlim)
    _region(ax, bounds, xlim)
    ax.set_yticks(range(len(labels)), labels, fontsize="small")
    ax.set_ylim(-0.6, len(labels) - 0.4)
    ax.set_title(
        f"{claim_id}: {published['effects'][k]}, holds {published['regions'][k]}",
        fontsize="medium",
        loc="left",
    )
    ax.set_xlabel(published["units"][k], fontsize="small", labelpad=1)
    ax.tick_params(axis="x", labelsize="small")
    ax.grid(True, axis="x", alpha=0.3)


def robustness_claims(section: dict) -> list[str]:
    """The claims robustness.png draws: the calibration post's comparative claims, and the
    uncertainty guide's after a sweep (on its one root key alone they have no spread)."""
    return [
        claim_id
        for claim_id, claim in section["claims"].items()
        if claim["document"] == "calibration" or "sweep" in claim
    ]


def robustness_figure(section: dict) -> Figure:
    """Every comparative claim's effect: on the published seeds with its test-image interval
    and, after a sweep (--seeds), on all the sweep's seeds with a seed interval and on each
    3-seed subset (calibration) or root key (uncertainty)."""
    panels = [
        (claim_id, k, section["claims"][claim_id])
        for claim_id in robustness_claims(section)
        for k in range(len(section["claims"][claim_id]["published"]["effects"]))
    ]
    columns = 2
    rows = -(-len(panels) // columns)
    swept = section["sweep_seeds"] is not None
    fig = _figure(13.0, 1.3 + rows * (PANEL_HEIGHT if swept else 1.15))
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    for ax, (claim_id, k, claim) in zip(axes, panels, strict=False):
        _robustness_panel(ax, claim_id, k, claim)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    handles = [
        Patch(color=HOLDS_COLOUR, alpha=0.25, label="where the claim holds"),
        Line2D([], [], color="black", marker="o", linewidth=2.4, label=f"published seeds{' (key 0)' if swept else ''}, 95% CI over test images"),
    ]  # fmt: skip
    if swept:
        handles += [
            Line2D([], [], color=SWEEP_COLOUR, marker="o", linewidth=2.4, label="all sweep seeds, 95% CI over seeds"),
            Line2D([], [], color=HOLDS_COLOUR, marker="o", linestyle="none", label="a 3-seed set / key where it holds"),
            Line2D([], [], color=FAILS_COLOUR, marker="o", linestyle="none", label="... where it does not"),
        ]  # fmt: skip
    fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False)
    seeds = _seed_range(section["published_seeds"])
    title = (
        f"Comparative claims beyond the published seeds {seeds} (calibration) and key 0 (uncertainty)\n"
        "(no CI: the effect reads figures that are not resampled, or the most extreme seed)"
    )
    if not swept:
        title = f"Comparative claims of the calibration post on seeds {seeds}, 95% CI over test images\n(no CI: the effect reads figures that are not resampled; --seeds 0-9 adds other seeds)"
    fig.suptitle(title)
    return fig


# --------------------------------------------------------------------------- entry point

ROBUSTNESS = FigureSpec(
    "robustness.png",
    "Each comparative claim's effect on the published seeds with its 95% test-image "
    "interval, the region where the claim holds shaded; after --seeds, also across seeds.",
    (),  # the claims of the robustness section: `robustness_claims`
    robustness_figure,
)


def figure_names(documents: Iterable[Document]) -> set[str]:
    """The names of every file the report can write into the figures folder (PNG and SVG)
    for these documents, the robustness figure included."""
    specs = [ROBUSTNESS, *(spec for document in documents for spec in document.figures)]
    return {name for spec in specs for name in figure_files(spec.file)}


def _specs(
    documents: Iterable[Document], robustness: dict | None
) -> list[tuple[str, FigureSpec, list[str]]]:
    """(document, spec, claims) of every figure drawn, in order: each document's, then the
    robustness figure when the section has claims to draw."""
    if not all(isinstance(d, Document) for d in documents):
        raise TypeError(f"documents must be Document objects; got {documents!r}")
    specs = [(d.name, spec, list(spec.claims)) for d in documents for spec in d.figures]
    if robustness is not None and robustness_claims(robustness):
        specs.append(("robustness", ROBUSTNESS, robustness_claims(robustness)))
    return specs


def index(documents: Iterable[Document], robustness: dict | None = None) -> list[dict[str, Any]]:
    """audit.json's `figures` index of what `draw_all` writes: per figure its file, SVG twin,
    document ("robustness" for the robustness figure), caption and claim ids."""
    return [
        {
            "file": spec.file,
            "svg": str(Path(spec.file).with_suffix(".svg")),
            "document": document,
            "caption": spec.caption,
            "claims": claims,
        }
        for document, spec, claims in _specs(documents, robustness)
    ]


def draw_all(
    folder: Path,
    documents: Iterable[Document],
    *,
    robustness: dict | None = None,
    cache_dir: Path | None = None,
) -> list[Path]:
    """Write the figures of `documents` into `folder`, each a PNG and an SVG beside it.

    Args:
      folder: an existing directory.
      documents: the documents whose figures are drawn, in this order (each one's data is
        gathered by its own `figure_data`, checked to cover its figures before any drawing).
      robustness: the report's robustness section, drawn as robustness.png (last) when it
        has claims to draw.
      cache_dir: where drawn figures are kept by the digest of their data and code
        (lib/report/figure_cache.py); a figure found there is copied, not drawn. None: every
        figure is drawn.

    Returns:
      The PNGs' paths, in the order of `index(documents, robustness)`.
    """
    documents = list(documents)
    specs = _specs(documents, robustness)  # checks `documents` before any data is gathered
    data = {spec.file: value for d in documents for spec, value in _data(d, robustness)}
    if robustness is not None:
        data[ROBUSTNESS.file] = robustness
    folder = Path(folder)
    if cache_dir is not None:
        _store_side_by_side(cache_dir, [(spec, data[spec.file]) for _, spec, _ in specs])
    paths = []
    for _, spec, _ in specs:
        if cache_dir is None:
            paths.append(_save(spec.draw(data[spec.file]), folder / spec.file))
        else:
            paths.append(cached_figure(cache_dir, spec.file, spec.draw, data[spec.file], _save, folder)[0])  # fmt: skip
    return paths


def draw_ahead(
    cache_dir: Path, documents: Iterable[Document], robustness: dict | None = None
) -> None:
    """Draw the figures of `documents` that `cache_dir` lacks into it, one after another in
    this process, as `draw_all` would draw them with the `robustness` section: the
    robustness figure too when given one that has claims to draw. A figure drawn without
    the section's intervals is drawn again by a report that has them. Only documents whose
    figure data the cache already holds are drawn: nothing is computed here."""
    data = {}
    stored = []
    for document in documents:
        try:  # from stored results only: a worker drawing ahead never trains
            with cache.stored_only():
                data |= {spec.file: value for spec, value in _data(document, robustness)}
            stored.append(document)
        except cache.NotStored:
            continue  # the report draws it once the results are there
    data[ROBUSTNESS.file] = robustness
    for _, spec, _ in _specs(stored, robustness):
        if not is_stored(cache_dir, spec.file, spec.draw, data[spec.file]):
            _store(cache_dir, spec, data[spec.file])


def _store(cache_dir: Path, spec: FigureSpec, data: Any) -> None:
    stored_figure(cache_dir, spec.file, spec.draw, data, _save)


def _store_side_by_side(cache_dir: Path, figures: list[tuple[FigureSpec, Any]]) -> None:
    """Draw the figures the cache lacks into it, in processes side by side: drawing is
    matplotlib's single-threaded work, seconds per figure, and at the end of an audit the
    cores are free. Spawned, not forked: the caller may hold JAX's threads. A figure whose
    drawing function cannot be sent to another process (a lambda) is left to the caller."""
    missing = [
        (spec, data)
        for spec, data in figures
        if _sendable(spec.draw) and not is_stored(cache_dir, spec.file, spec.draw, data)
    ]
    processes = min(len(missing), os.cpu_count() or 1)
    if processes < 2:
        return
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(processes, mp_context=context) as pool:
        for done in [pool.submit(_store, cache_dir, spec, data) for spec, data in missing]:
            done.result()


def _sendable(draw: Any) -> bool:
    try:
        pickle.dumps(draw)
    except (pickle.PicklingError, AttributeError, TypeError):
        return False
    return True


def _data(document: Document, robustness: dict | None) -> list[tuple[FigureSpec, Any]]:
    data = document.data_of_figures(robustness)
    return [(spec, data[spec.file]) for spec in document.figures]
