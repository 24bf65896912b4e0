"""lib.report.figures: the document selection of `draw_all` (drawing itself needs the trained runs)."""

from pathlib import Path

import pytest

from lib.report.figures import draw_all


def test_no_documents_draws_nothing(tmp_path: Path) -> None:
    assert draw_all(tmp_path, set()) == []
    assert list(tmp_path.iterdir()) == []


def test_unknown_document_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown document"):
        draw_all(tmp_path, {"calibration", "nonsense"})
    assert list(tmp_path.iterdir()) == []
