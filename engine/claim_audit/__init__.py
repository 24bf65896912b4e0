"""claim-audit: judge a document's claims under pytest, once per valid float order.

Every name a project imports is here (`__all__`, engine/API.md); `claim_audit.cache` and
`claim_audit.stats` are the package's two public modules (the disk cache, the bootstrap)."""

from __future__ import annotations

import importlib
from typing import Any

from .engine.claim import FAITHFUL, Claims, Orders, figure, over_seeds
from .engine.share import agree, draws_to_conclude
from .engine.sweep import METHOD as SEED_METHOD
from .engine.sweep import (
    Robustness,
    across_runs,
    across_seeds,
    labels_text,
    parse_seeds,
    seed_section,
    subsets_counted,
)
from .engine.verdict import (
    Comparison,
    Effect,
    Judgement,
    PerSeed,
    Region,
    SecondReading,
    Threshold,
    fact,
    ranking,
    safe_ratio,
    satisfied,
    second_reading,
    within,
)
from .render.documents import Document, FigureSpec, Source

# Imported when first asked for: drawing needs matplotlib (the `draw` extra), and the plugin
# module is pytest's to load.
_LATER = {"new_figure": ".render.drawing", "budget_s": ".report.plugin"}

__version__ = "0.1.0"
__all__ = [
    "FAITHFUL",
    "SEED_METHOD",
    "Claims",
    "Comparison",
    "Document",
    "Effect",
    "FigureSpec",
    "Judgement",
    "Orders",
    "PerSeed",
    "Region",
    "Robustness",
    "SecondReading",
    "Source",
    "Threshold",
    "across_runs",
    "across_seeds",
    "agree",
    "budget_s",
    "draws_to_conclude",
    "fact",
    "figure",
    "labels_text",
    "new_figure",
    "over_seeds",
    "parse_seeds",
    "ranking",
    "safe_ratio",
    "satisfied",
    "second_reading",
    "seed_section",
    "subsets_counted",
    "within",
]


def __getattr__(name: str) -> Any:
    if name in _LATER:
        return getattr(importlib.import_module(_LATER[name], __name__), name)
    raise AttributeError(f"module 'claim_audit' has no attribute {name!r}")
