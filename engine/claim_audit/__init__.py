"""claim-audit: judge a document's claims under pytest, once per valid float order."""

from .engine.claim import FAITHFUL, Claims, Orders, figure, over_seeds
from .engine.share import draws_to_conclude
from .engine.sweep import seed_section
from .engine.verdict import (
    Comparison,
    Effect,
    Judgement,
    Region,
    fact,
    ranking,
    satisfied,
    second_reading,
    within,
)
from .render.documents import Document, FigureSpec, Source

__version__ = "0.1.0"
__all__ = [
    "FAITHFUL",
    "Claims",
    "Comparison",
    "Document",
    "Effect",
    "FigureSpec",
    "Judgement",
    "Orders",
    "Region",
    "Source",
    "draws_to_conclude",
    "fact",
    "figure",
    "over_seeds",
    "ranking",
    "satisfied",
    "second_reading",
    "seed_section",
    "within",
]
