"""Draws the documents' figures into a folder (claim_audit.render.documents says what a
document supplies), each a PNG with an SVG twin (claim_audit.render.canvas), reusing those whose
data and code are unchanged (claim_audit.render.figure_cache); and the robustness section's
figure (claim_audit.render.robustness_figure). No document's drawing code is here."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .canvas import save
from .documents import Document, FigureSpec
from .figure_cache import cached_figure, figure_files, writable
from .robustness_figure import robustness_claims, robustness_figure

ROBUSTNESS = FigureSpec(
    "robustness.png",
    "Each comparative claim's effect on the published seeds with the 95% interval its "
    "project computes, the region where the claim holds shaded; after --seeds, also across seeds.",
    (),  # the claims of the robustness section: `robustness_claims`
    robustness_figure,
)


def figure_names(documents: Iterable[Document]) -> set[str]:
    """The names of every file the report can write into the figures folder (PNG and SVG)
    for these documents, the robustness figure included."""
    specs = [ROBUSTNESS, *(spec for document in documents for spec in document.figures)]
    return {name for spec in specs for name in figure_files(spec.file)}


def _specs(
    documents: list[Document], robustness: dict | None
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
        {"file": spec.file, "svg": figure_files(spec.file)[1], "document": document}
        | {"caption": spec.caption, "claims": claims}
        for document, spec, claims in _specs(list(documents), robustness)
    ]


def draw_all(
    folder: Path,
    documents: Iterable[Document],
    *,
    robustness: dict | None = None,
    cache_dir: Path | None = None,
) -> list[Path]:
    """Write the figures of `documents` into `folder` (an existing directory), each a PNG and
    an SVG beside it, and the `robustness` section's figure last when it has claims to draw.
    Each document's data (its `figure_data`) is checked to cover its figures before any
    drawing. A figure found in `cache_dir` (claim_audit.render.figure_cache) is copied, not
    drawn; None, or a folder that cannot be written: every figure is drawn.

    Returns:
      The PNGs' paths, in the order of `index(documents, robustness)`.
    """
    documents = list(documents)
    specs = _specs(documents, robustness)  # checks `documents` before any data is gathered
    data = {ROBUSTNESS.file: robustness}
    for document in documents:
        data |= document.data_of_figures(robustness)
    if cache_dir is None or not writable(cache_dir):
        return [save(spec.draw(data[spec.file]), Path(folder) / spec.file) for _, spec, _ in specs]
    return [
        cached_figure(cache_dir, spec.file, spec.draw, data[spec.file], Path(folder))
        for _, spec, _ in specs
    ]
