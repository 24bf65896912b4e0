"""The calibration post's figures, drawn from data (seed 0 of the post, and the per-seed AUROCs).

Each `*_figure(data)` turns plain data (arrays, numbers, dicts; gathered by
claims/readings/calibration/document.py) into a matplotlib figure; nothing here runs or loads an
experiment. The report saves and caches them (engine/claim_audit/render/drawing.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from claim_audit import new_figure
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from uncertainty_claims import metrics

T_RANGE = (0.05, 20.0)
SPARSE_BIN = 30  # reliability bins with fewer images get their count printed

NET_LABEL = {"yat": "Yat", "relu": "ReLU"}
NET_COLOUR = {"yat": "tab:blue", "relu": "tab:orange"}
TEST_LABEL = "Fashion-MNIST test (in-distribution)"
OOD_LABEL = "MNIST test (OOD)"
TEST_COLOUR = "tab:blue"
OOD_COLOUR = "tab:red"


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
    fig = new_figure(8.4, 8.6)
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
    fig = new_figure(6.4, 4.4)
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
    fig = new_figure(9.6, 4.2)
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
    fig = new_figure(6.8, 4.4)
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
    fig = new_figure(7.6, 4.8)
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
