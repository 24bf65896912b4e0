"""`new_figure` to draw on and `save`: a PNG and its SVG twin, through Agg, no pyplot state."""

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
    """Write `fig` as the PNG `path` and an SVG beside it, control characters escaped; `path`."""
    for text in fig.findobj(Text):
        text.set_text(_CONTROL.sub(lambda m: repr(m[0])[1:-1], text.get_text()))
    fig.savefig(path, dpi=DPI, format="png", metadata={"Software": None})
    # A fixed salt and no date: the same figure gives the same SVG bytes.
    with matplotlib.rc_context({"svg.hashsalt": "claim-audit"}):
        fig.savefig(path.with_suffix(".svg"), format="svg", metadata={"Date": None})
    fig.clear()  # not registered with pyplot; clearing frees the artists at once
    return path
