"""What a document supplies to the report (the `pytest_claims_audit_documents` hook)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SCHEMA_VERSION = 2  # audit.json's layout, as `python -m claim_audit diff` reads it
RESERVED = frozenset(  # audit.json's top-level keys that are not a document's section
    {"schema_version", "partial", "missing", "claims", "robustness", "summary", "counts"}
) | {"metadata", "figures"}


@dataclass(frozen=True)
class Source:
    """A document as a reader would look it up (`url` None: no public address known); its
    sections link into it only where named: `anchors` (section -> the anchor at `url`) or
    `headings` (sections named as the document's headings, anchored by `heading_anchor`)."""

    title: str
    kind: str
    url: str | None = None
    anchors: Mapping[str, str] = field(default_factory=dict)
    headings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        mapping = isinstance(self.anchors, Mapping) and not isinstance(self.headings, str)
        named = [*self.anchors, *self.anchors.values(), *self.headings] if mapping else [None]
        if not all(isinstance(n, str) and n for n in named):
            raise ValueError(
                f"source {self.title!r}: anchors map section names to anchors and headings is a tuple of section names, all non-empty strings; got anchors={self.anchors!r}, headings={self.headings!r}"
            )
        if (self.anchors or self.headings) and not self.url:
            raise ValueError(f"source {self.title!r}: anchors and headings need the document's url")
        if both := sorted(set(self.anchors) & set(self.headings)):
            raise ValueError(f"source {self.title!r}: {both} given both an anchor and as a heading")


def heading_anchor(heading: str) -> str:
    """A heading's anchor as most site generators make it: lowercase, apostrophes dropped,
    every other run of characters but letters and digits one "-"."""
    return re.sub(r"[^a-z0-9]+", "-", re.sub("['’]", "", heading.lower())).strip("-")


@dataclass(frozen=True)
class FigureSpec:
    """A figure: its PNG file (an SVG twin beside it), caption, claims, and `draw`: data -> Figure."""

    file: str
    caption: str
    claims: tuple[str, ...]
    draw: Callable[[Any], Figure]

    def __post_init__(self) -> None:
        if Path(self.file).suffix != ".png" or Path(self.file).name != self.file:
            raise ValueError(f"a figure's file is a bare name like 'fit.png', not {self.file!r}")
        if isinstance(self.claims, str):
            raise TypeError(f"{self.file}: claims must be a tuple of ids, not {self.claims!r}")


@dataclass(frozen=True)
class Document:
    """A document: `name` (its claims' `document=`), `source`, `section` (its audit.json
    section), `figures` and `figure_data(robustness section or None)`: their data by file."""

    name: str
    source: Source | None = None
    section: Callable[[], dict] | None = None
    figures: tuple[FigureSpec, ...] = ()
    figure_data: Callable[[dict | None], Mapping[str, Any]] | None = None

    def __post_init__(self) -> None:
        if not self.name or self.name in RESERVED:
            raise ValueError(
                f"no document can be named {self.name!r} (reserved: {sorted(RESERVED)})"
            )
        if bool(self.figures) != (self.figure_data is not None):
            raise ValueError(f"document {self.name!r}: figures and figure_data go together")
        files = [spec.file for spec in self.figures]
        if len(set(files)) != len(files):
            raise ValueError(f"document {self.name!r} names a figure file twice: {files}")
