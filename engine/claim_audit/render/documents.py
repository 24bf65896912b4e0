"""What a document supplies to the report (the `pytest_claims_audit_documents` hook)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

SCHEMA_VERSION = 2  # audit.json's layout, as `python -m claim_audit.report diff` reads it
RESERVED = frozenset(  # audit.json's top-level keys that are not a document's section
    {"schema_version", "partial", "missing", "claims", "robustness", "summary", "counts"}
) | {"metadata", "figures"}


@dataclass(frozen=True)
class Source:
    """A document as a reader would look it up (`url` None: no public address known)."""

    title: str
    kind: str
    url: str | None = None


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
