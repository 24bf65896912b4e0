"""A worker done with its tests draws its documents' figures into the figure cache, for the
report to copy (lib/report/plugin.py, `_draw_ahead`), and never fails the run doing so."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from lib.report import plugin
from lib.report.documents import Document, FigureSpec, Source
from lib.report.figure_cache import is_stored

DRAWN: list[str] = []


def line(data: dict) -> Figure:
    DRAWN.append("line.png")
    fig = Figure(figsize=(2, 2), dpi=40)
    FigureCanvasAgg(fig)
    fig.add_subplot().plot(data["y"])
    return fig


def broken(data: dict) -> Figure:
    raise RuntimeError("no figure today")


def toy(draw=line) -> Document:
    return Document(
        "toy",
        Source("A toy", "note"),
        lambda: {},
        (FigureSpec("line.png", "The line.", ("toy-1",), draw),),
        lambda robustness: {"line.png": {"y": np.arange(3.0)}},
    )


def worker(documents_run: set[str], *, workers: int = 2, no_report: bool = False, document=None):
    """The parts of a worker's pytest config that `_draw_ahead` reads."""
    config = SimpleNamespace(
        stash=pytest.Stash(),
        workerinput={"workerid": "gw0", "workercount": workers},
        getoption=lambda name: {"--no-report": no_report}[name],
    )
    config.hook = SimpleNamespace(
        pytest_claims_audit_documents=lambda config: [[document or toy()]]
    )
    config.stash[plugin._DOCUMENTS_RUN] = documents_run
    return config


@pytest.fixture
def figure_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAIMS_CACHE_DIR", str(tmp_path))
    DRAWN.clear()
    return tmp_path / "figures"


def stored(figure_cache) -> bool:
    return is_stored(figure_cache, "line.png", line, {"y": np.arange(3.0)})


def test_a_worker_draws_the_figures_of_the_documents_it_ran(figure_cache):
    plugin._draw_ahead(worker({"toy"}))
    assert stored(figure_cache) and DRAWN == ["line.png"]
    plugin._draw_ahead(worker({"toy"}))  # already there: not drawn again
    assert DRAWN == ["line.png"]


@pytest.mark.parametrize(
    "config",
    [
        worker({"other"}),  # another document's claims only
        worker(set()),  # no claims at all
        worker({"toy"}, workers=1),  # the only worker: the report draws side by side
        worker({"toy"}, no_report=True),
    ],
    ids=["other-document", "no-claims", "one-worker", "no-report"],
)
def test_nothing_is_drawn_when_the_report_will_not_use_it(figure_cache, config):
    plugin._draw_ahead(config)
    assert not stored(figure_cache) and DRAWN == []


def test_a_failing_figure_is_said_and_left_to_the_report(figure_cache, monkeypatch):
    said = []
    monkeypatch.setattr(plugin.cache, "progress_writer", said.append)
    plugin._draw_ahead(worker({"toy"}, document=toy(broken)))
    assert said == [
        "[claims] drawing the figures ahead failed (RuntimeError: no figure today); "
        "the report draws them"
    ]
