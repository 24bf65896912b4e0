"""A figure to draw on, and how every figure of the report is saved: a PNG and an SVG twin.

Figures are built on `matplotlib.figure.Figure` and saved through the Agg canvas, so no
global pyplot state (figure registry, interactive backend) is touched. A document's drawing
code may start its figures with `new_figure` (any matplotlib `Figure` will do); the report
saves each with `save`, whose code is in every drawn figure's cache key
(claim_audit.render.figure_cache).
"""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

DPI = 110
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # a newline breaks a label's line


def new_figure(width: float, height: float) -> Figure:
    """An empty figure of `width` x `height` inches at DPI, laid out by constrained layout."""
    fig = Figure(figsize=(width, height), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def save(fig: Figure, path: Path) -> Path:
    """Write `fig` as the PNG `path` and as an SVG beside it; returns the PNG's path. A
    control character in a text (a label, a title) is written escaped ("\\r"): no font
    has a glyph for it, and matplotlib's warning would stop the report."""
    for text in fig.findobj(Text):
        if _CONTROL.search(text.get_text()):
            text.set_text(_CONTROL.sub(lambda m: repr(m[0])[1:-1], text.get_text()))
    fig.savefig(path, dpi=DPI, format="png", metadata={"Software": None})
    # A fixed salt and no date: the same figure gives the same SVG bytes.
    with matplotlib.rc_context({"svg.hashsalt": "claim-audit"}):
        fig.savefig(path.with_suffix(".svg"), format="svg", metadata={"Date": None})
    fig.clear()  # not registered with pyplot; clearing frees the artists at once
    return path
