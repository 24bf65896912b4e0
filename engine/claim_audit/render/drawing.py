"""Draws the documents' figures into a folder, and keeps drawn figures for reuse.

A document supplies its figures as `FigureSpec`s and their data (claim_audit.render.documents);
`draw_all(folder, documents)` calls each figure's `draw` on its data and writes it as a
PNG with an SVG twin beside it (claim_audit.render.canvas), reusing the files of a figure whose
data and code are unchanged (claim_audit.render.figure_cache). Nothing here runs or loads an
experiment, and no document's drawing code is here: the report draws what it is given,
plus the robustness section's figure (claim_audit.render.robustness_figure), from the section.
"""

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
        (claim_audit.render.figure_cache); a figure found there is copied, not drawn. None, or a
        folder that cannot be written: every figure is drawn.

    Returns:
      The PNGs' paths, in the order of `index(documents, robustness)`.
    """
    documents = list(documents)
    specs = _specs(documents, robustness)  # checks `documents` before any data is gathered
    data = {spec.file: value for d in documents for spec, value in _data(d, robustness)}
    if robustness is not None:
        data[ROBUSTNESS.file] = robustness
    folder = Path(folder)
    if cache_dir is not None and not writable(cache_dir):
        cache_dir = None
    paths = []
    for _, spec, _ in specs:
        if cache_dir is None:
            paths.append(save(spec.draw(data[spec.file]), folder / spec.file))
        else:
            paths.append(cached_figure(cache_dir, spec.file, spec.draw, data[spec.file], save, folder)[0])  # fmt: skip
    return paths


def _data(document: Document, robustness: dict | None) -> list[tuple[FigureSpec, Any]]:
    data = document.data_of_figures(robustness)
    return [(spec, data[spec.file]) for spec in document.figures]
