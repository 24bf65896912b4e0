"""A figure to draw on, and how every figure of the report is saved: a PNG and an SVG twin.

Figures are built on `matplotlib.figure.Figure` and saved through the Agg canvas, so no
global pyplot state (figure registry, interactive backend) is touched. A document's drawing
code may start its figures with `new_figure` (any matplotlib `Figure` will do); the report
saves each with `save`, whose code is in every drawn figure's cache key
(engine/claim_audit/render/figure_cache.py).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

DPI = 110


def new_figure(width: float, height: float) -> Figure:
    """An empty figure of `width` x `height` inches at DPI, laid out by constrained layout."""
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save(fig: Figure, path: Path) -> Path:
    """Write `fig` as the PNG `path` and as an SVG beside it; returns the PNG's path."""
    fig.savefig(path, dpi=DPI, format="png", metadata={"Software": None})
    # A fixed salt and no date: the same figure gives the same SVG bytes.
    with matplotlib.rc_context({"svg.hashsalt": "claim-audit"}):
        fig.savefig(path.with_suffix(".svg"), format="svg", metadata={"Date": None})
    fig.clear()  # not registered with pyplot; clearing frees the artists at once
    return path
