"""The documents' figures and robustness.png, each a PNG and an SVG drawn through Agg (no
pyplot state) and kept in the figure cache."""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.text import Text

from .. import cache
from .documents import Document, FigureSpec
from .reading import in_region

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


def data_digest(value: Any, where: str = "figure data") -> str:
    """sha256 of figure data (arrays, numbers, strings, None, lists and dicts of them): each
    node's kind and its children's digests."""
    if isinstance(value, np.ma.MaskedArray):  # the mask hides points: it changes the drawing
        kind, parts = "M", [data_digest(a, where) for a in (value.data, np.ma.getmaskarray(value))]
    elif isinstance(value, np.ndarray | np.generic) and not value.dtype.hasobject:
        data = hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()
        kind, parts = "A", [str(value.dtype.descr), str(value.shape), data]
    elif value is None or isinstance(value, bool | int | float | str):
        kind, parts = "V", [repr(value)]
    elif isinstance(value, list | tuple):
        kind, parts = "L", [data_digest(v, f"{where}[{i}]") for i, v in enumerate(value)]
    elif isinstance(value, dict):
        kind, parts = "D", []
        for k, v in value.items():
            parts += [data_digest(k, f"{where}'s key"), data_digest(v, f"{where}[{k!r}]")]
    else:
        of_objects = " of Python objects" if isinstance(value, np.ndarray) else ""
        raise TypeError(
            f"{where} is a {type(value).__name__}{of_objects}; expected arrays, numbers, strings, None, or lists and dicts of them"
        )
    return hashlib.sha256("\0".join([kind, *parts]).encode()).hexdigest()


def figure_key(file: str, draw: Callable[[Any], Any], data: Any) -> str:
    """Figure `file`'s cache key: its drawing code, the engine, matplotlib, `file` and `data`."""
    func, bound = draw, []
    while isinstance(func, functools.partial):  # its own __module__ is 'functools'
        bound.append([list(func.args), dict(func.keywords)])
        func = func.func
    package = (getattr(func, "__module__", None) or "").partition(".")[0]
    if hasattr(sys.modules.get(package), "__path__"):
        parts = [cache.package_digest(package)]
    else:
        # Not a package: each conftest.py is module 'conftest', so the defining file is keyed.
        code = getattr(inspect.unwrap(func), "__code__", None)
        if code is None or not Path(code.co_filename).is_file():
            raise TypeError(
                f"cannot tell which code draws figure {file}: {draw!r} is defined outside a package and not by a function in a source file"
            )
        parts = [hashlib.sha256(Path(code.co_filename).read_bytes()).hexdigest()]
    parts += [cache.package_digest(__name__.partition(".")[0]), matplotlib.__version__, file]
    parts += [data_digest(bound, f"figure {file}'s draw, a functools.partial: its arguments")]
    parts += [data_digest(data, f"figure {file}'s data")]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]


def figure_files(file: str) -> list[str]:
    """The files of figure `file` (a PNG): itself and its SVG twin."""
    return [file, str(Path(file).with_suffix(".svg"))]


def _from_cache(cache_dir: Path, spec: FigureSpec, data: Any, folder: Path) -> Path:
    """Copy figure `spec` (PNG and SVG) into `folder` from its cache entry, drawn first if none."""
    key = figure_key(spec.file, spec.draw, data)
    entry = {name: Path(cache_dir, key + Path(name).suffix) for name in figure_files(spec.file)}
    if not all(path.is_file() for path in entry.values()):
        with tempfile.TemporaryDirectory(prefix=".tmp-", dir=cache_dir) as staging:
            save(spec.draw(data), Path(staging) / spec.file)
            for name, path in entry.items():
                os.replace(Path(staging) / name, path)
    for name, path in entry.items():
        shutil.copyfile(path, folder / name)
    return folder / spec.file


def seed_range(seeds: list[int]) -> str:
    """ "0-9" for three or more consecutive seeds, else the seeds joined by commas."""
    if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2:
        return f"{seeds[0]}-{seeds[-1]}"
    return ",".join(map(str, seeds))


HOLDS_COLOUR, FAILS_COLOUR, SWEEP_COLOUR = "tab:green", "tab:red", "tab:blue"


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


def _robustness_panel(ax, claim_id: str, k: int, claim: dict) -> None:
    """Rows from the bottom: sweep subsets, all sweep seeds, the published seeds, with CIs."""
    published, sweep = claim["published"], claim.get("sweep")
    labels, drawn = [], []
    if sweep is not None:
        values, region = [v[k] for v in sweep["subset_values"]], sweep["regions"][k]
        # Each dot is this effect's: green where it lies in its region, red where not (the
        # claim's count, over all its effects, is the title's).
        inside = [in_region(v, region) for v in values]
        inside = [h if i is None else i for i, h in zip(inside, sweep["subset_holds"], strict=True)]
        colours = [HOLDS_COLOUR if i else FAILS_COLOUR for i in inside]
        jitter = np.linspace(-0.25, 0.25, len(values)) if len(values) > 1 else np.zeros(1)
        ax.scatter(values, jitter, s=12, c=colours, alpha=0.7, linewidths=0, zorder=2)
        labels.append(f"{sweep['unit']}: {sum(inside)}/{sweep['total']} in region")
        drawn += values
        interval = sweep["intervals"][k]
        drawn += _interval_bar(ax, len(labels), sweep["values"][k], interval, SWEEP_COLOUR)
        labels.append(f"sweep {seed_range(sweep['seeds'])}")
    interval = (published.get("intervals") or [None] * (k + 1))[k]
    drawn += _interval_bar(ax, len(labels), published["values"][k], interval, "black")
    labels.append(f"published {seed_range(published['seeds'])}")
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
    low, high = (xlim[i] if bounds[i] is None else bounds[i] for i in (0, 1))
    ax.axvspan(low, high, color=HOLDS_COLOUR, alpha=0.12, linewidth=0)
    for bound in bounds:
        if bound is not None:
            ax.axvline(bound, color=HOLDS_COLOUR, linestyle="--", linewidth=1.2)
    ax.set_yticks(range(len(labels)), labels, fontsize="small")
    ax.set_ylim(-0.6, len(labels) - 0.4)
    title = f"{claim_id}: {published['effects'][k]}, holds {published['regions'][k]}"
    if sweep is not None and len(published["effects"]) > 1:
        title += f"\n(the claim, all {len(published['effects'])} effects: {sweep['holding']}/{sweep['total']}, {sweep['label']})"
    elif sweep is not None:
        title += f" ({sweep['label']})"
    ax.set_title(title, fontsize="medium", loc="left")
    ax.set_xlabel(published["units"][k], fontsize="small", labelpad=1)
    ax.tick_params(axis="x", labelsize="small")
    ax.grid(True, axis="x", alpha=0.3)


def robustness_claims(section: dict) -> list[str]:
    """The claims robustness.png draws: those published on several seeds, or swept."""
    claims = section["claims"].items()
    return [i for i, claim in claims if len(claim["published"]["seeds"]) > 1 or "sweep" in claim]


def robustness_figure(section: dict) -> Figure:
    """Each comparative claim's effect on the published seeds and, after a sweep, across seeds."""
    claims = section["claims"]
    panels = [
        (claim_id, k, claims[claim_id])
        for claim_id in robustness_claims(section)
        for k in range(len(claims[claim_id]["published"]["effects"]))
    ]
    rows, swept = -(-len(panels) // 2), section["sweep_seeds"] is not None
    fig = new_figure(13.0, 1.3 + rows * (1.6 if swept else 1.15))
    axes = fig.subplots(rows, 2, squeeze=False).ravel()
    for ax, panel in zip(axes, panels, strict=False):
        _robustness_panel(ax, *panel)
    axes[-1].set_visible(len(panels) % 2 == 0)  # an odd count leaves the last one empty
    handles = [
        Patch(color=HOLDS_COLOUR, alpha=0.25, label="the effect's region (where it holds)"),
        Line2D([], [], color="black", marker="o", linewidth=2.4, label="published seeds, 95% CI"),
    ]
    if swept:
        handles += [
            Line2D([], [], color=colour, marker="o", label=label, **line)
            for colour, label, line in (
                (SWEEP_COLOUR, "all sweep seeds, 95% CI over seeds", {"linewidth": 2.4}),
                (HOLDS_COLOUR, "a seed or subset: the effect in its region", {"linestyle": "none"}),
                (FAILS_COLOUR, "... outside it", {"linestyle": "none"}),
            )
        ]
    fig.legend(handles=handles, loc="outside lower center", ncols=3, frameon=False)
    published = section["published_seeds"]
    seeds = f"seed{'s' if len(published) > 1 else ''} {seed_range(published)}"
    title = f"Comparative claims {'beyond' if swept else 'on'} the published {seeds}{'' if swept else ', 95% CI'}"
    no_ci = ", or the most extreme seed" if swept else "; --seeds 0-9 adds other seeds"
    fig.suptitle(f"{title}\n(no CI: the effect reads figures that are not resampled{no_ci})")
    return fig


ROBUSTNESS = FigureSpec(
    "robustness.png",
    "Each comparative claim's effect on the published seeds with the 95% interval its "
    "project computes, the region where the claim holds shaded; after --seeds, also across seeds.",
    (),  # the claims of the robustness section: `robustness_claims`
    robustness_figure,
)


def figure_names(documents: Iterable[Document]) -> set[str]:
    """Every file the report can write into the figures folder for these documents."""
    specs = [ROBUSTNESS, *(spec for document in documents for spec in document.figures)]
    return {name for spec in specs for name in figure_files(spec.file)}


def index(documents: Iterable[Document], robustness: dict | None = None) -> list[dict[str, Any]]:
    """audit.json's `figures`: the figures drawn, the documents' then robustness.png."""
    drawn = [(d.name, spec, list(spec.claims)) for d in documents for spec in d.figures]
    if robustness is not None and (claims := robustness_claims(robustness)):
        drawn.append(("robustness", ROBUSTNESS, claims))
    return [
        {"file": spec.file, "svg": figure_files(spec.file)[1], "document": document}
        | {"caption": spec.caption, "claims": claims}
        for document, spec, claims in drawn
    ]


def draw_all(
    folder: Path,
    documents: Iterable[Document],
    *,
    robustness: dict | None = None,
    cache_dir: Path | None = None,
) -> list[Path]:
    """Write `index(documents, robustness)`'s figures into `folder` (all data checked first),
    reusing those in `cache_dir` (None, or not writable: all drawn); the PNGs' paths."""
    documents = list(documents)
    specs, data = {ROBUSTNESS.file: ROBUSTNESS}, {ROBUSTNESS.file: robustness}
    for d in documents:  # each document's data covers exactly its figures
        given = dict(d.figure_data(robustness)) if d.figure_data else {}
        if set(given) != (declared := {spec.file for spec in d.figures}):
            raise ValueError(
                f"document {d.name!r}: figure_data gave {sorted(given)}, its figures are {sorted(declared)}"
            )
        data |= given
        specs |= {spec.file: spec for spec in d.figures}
    drawn = [specs[figure["file"]] for figure in index(documents, robustness)]
    try:  # figures are kept only where the cache folder can be written
        if cache_dir is not None:
            Path(cache_dir).mkdir(parents=True, exist_ok=True)
            tempfile.TemporaryDirectory(prefix=".tmp-", dir=cache_dir).cleanup()
    except OSError as error:
        cache.progress_writer(
            f"[claims] figure cache {cache_dir} is not writable ({error}); drawing the figures without it"
        )
        cache_dir = None
    if cache_dir is None:
        return [save(spec.draw(data[spec.file]), Path(folder) / spec.file) for spec in drawn]
    return [_from_cache(cache_dir, spec, data[spec.file], Path(folder)) for spec in drawn]
