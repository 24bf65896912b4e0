"""The robustness section's figure, drawn from the section alone (audit.json's `robustness`,
as the `pytest_claims_audit_robustness` hook returns it; claim_audit.report.hooks gives its keys)."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .canvas import new_figure
from .robustness import seed_range

HOLDS_COLOUR = "tab:green"
FAILS_COLOUR = "tab:red"
SWEEP_COLOUR = "tab:blue"
PANEL_HEIGHT = 1.6  # inches per claim effect


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
    all sweep seeds with their seed interval, the published seeds with the project's own."""
    published, sweep = claim["published"], claim.get("sweep")
    labels, drawn = [], []
    if sweep is not None:
        values = [v[k] for v in sweep["subset_values"]]
        colours = [HOLDS_COLOUR if h else FAILS_COLOUR for h in sweep["subset_holds"]]
        jitter = np.linspace(-0.25, 0.25, len(values)) if len(values) > 1 else np.zeros(1)
        ax.scatter(values, jitter, s=12, c=colours, alpha=0.7, linewidths=0, zorder=2)
        labels.append(f"{sweep['unit']}: {sweep['holding']}/{sweep['total']} hold")
        drawn += values
        interval = sweep["intervals"][k]
        drawn += _interval_bar(ax, len(labels), sweep["values"][k], interval, SWEEP_COLOUR)
        labels.append(f"sweep {seed_range(sweep['seeds'], ',')}")
    interval = (published.get("intervals") or [None] * (k + 1))[k]
    drawn += _interval_bar(ax, len(labels), published["values"][k], interval, "black")
    labels.append(f"published {seed_range(published['seeds'], ',')}")
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
    """The claims robustness.png draws: those published on several seeds, and the others
    after a sweep (on one seed alone they have no spread)."""
    return [
        claim_id
        for claim_id, claim in section["claims"].items()
        if len(claim["published"]["seeds"]) > 1 or "sweep" in claim
    ]


def robustness_figure(section: dict) -> Figure:
    """Every comparative claim's effect: on the published seeds with its project's interval
    and, after a sweep (--seeds), on all the sweep's seeds with a seed interval and on each
    subset of them the claim is judged on (its sweep's `unit`)."""
    panels = [
        (claim_id, k, section["claims"][claim_id])
        for claim_id in robustness_claims(section)
        for k in range(len(section["claims"][claim_id]["published"]["effects"]))
    ]
    columns = 2
    rows = -(-len(panels) // columns)
    swept = section["sweep_seeds"] is not None
    fig = new_figure(13.0, 1.3 + rows * (PANEL_HEIGHT if swept else 1.15))
    axes = fig.subplots(rows, columns, squeeze=False).ravel()
    for ax, (claim_id, k, claim) in zip(axes, panels, strict=False):
        _robustness_panel(ax, claim_id, k, claim)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    handles = [
        Patch(color=HOLDS_COLOUR, alpha=0.25, label="where the claim holds"),
        Line2D([], [], color="black", marker="o", linewidth=2.4, label="published seeds, 95% CI"),
    ]
    if swept:
        handles += [
            Line2D(
                [],
                [],
                color=SWEEP_COLOUR,
                marker="o",
                linewidth=2.4,
                label="all sweep seeds, 95% CI over seeds",
            ),
            Line2D(
                [],
                [],
                color=HOLDS_COLOUR,
                marker="o",
                linestyle="none",
                label="a subset where it holds",
            ),
            Line2D(
                [],
                [],
                color=FAILS_COLOUR,
                marker="o",
                linestyle="none",
                label="... where it does not",
            ),
        ]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False)
    published = section["published_seeds"]
    seeds = f"seed{'s' if len(published) > 1 else ''} {seed_range(published, ',')}"
    title = (
        f"Comparative claims beyond the published {seeds}\n"
        "(no CI: the effect reads figures that are not resampled, or the most extreme seed)"
    )
    if not swept:
        title = f"Comparative claims on the published {seeds}, 95% CI\n(no CI: the effect reads figures that are not resampled; --seeds 0-9 adds other seeds)"
    fig.suptitle(title)
    return fig
