"""A worker done with its tests draws its documents' figures into the figure cache, for the
report to copy (lib/report/plugin.py, `_draw_ahead`), and never fails the run doing so."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from uncertainty_claims import cache
from uncertainty_claims.render.documents import Document, FigureSpec, Source
from uncertainty_claims.render.figure_cache import is_stored
from uncertainty_claims.report import plugin

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
    """A document whose one figure shows the robustness section's "shift" when given one."""
    return Document(
        "toy",
        Source("A toy", "note"),
        lambda: {},
        (FigureSpec("line.png", "The line.", ("toy-1",), draw),),
        lambda robustness: {"line.png": {"y": np.arange(3.0) + (robustness or {}).get("shift", 0)}},
    )


def no_section(config, documents, sweep):
    return None


def worker(
    documents_run: set[str],
    *,
    workers: int = 2,
    worker_id: str = "gw0",
    run: str = "run-1",
    no_report: bool = False,
    document=None,
    robustness=no_section,
):
    """The parts of a worker's pytest config that `_draw_ahead` reads."""
    config = SimpleNamespace(
        stash=pytest.Stash(),
        workerinput={"workerid": worker_id, "workercount": workers, "testrunuid": run},
        getoption=lambda name: {"--no-report": no_report, "--seeds": None}[name],
    )
    config.hook = SimpleNamespace(
        pytest_claims_audit_documents=lambda config: [[document or toy()]],
        pytest_claims_audit_robustness=robustness,
    )
    config.stash[plugin._DOCUMENTS_RUN] = documents_run
    return config


@pytest.fixture
def figure_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CLAIMS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(plugin.tempfile, "tempdir", str(tmp_path / "marks"))
    (tmp_path / "marks").mkdir()
    DRAWN.clear()
    return tmp_path / "figures"


def stored(figure_cache, shift: float = 0) -> bool:
    return is_stored(figure_cache, "line.png", line, {"y": np.arange(3.0) + shift})


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


def test_the_last_worker_to_finish_leaves_the_figures_to_the_report(figure_cache):
    plugin._draw_ahead(worker({"other"}, worker_id="gw0"))  # finished first, ran no toy claims
    plugin._draw_ahead(worker({"toy"}, worker_id="gw1"))
    assert not stored(figure_cache) and DRAWN == []
    assert not list((figure_cache.parent / "marks").iterdir())  # the last one cleared the marks


def test_the_robustness_section_is_drawn_ahead_when_its_results_are_stored(figure_cache):
    section = {"claims": {}, "shift": 1.0}
    plugin._draw_ahead(worker({"toy"}, robustness=lambda config, documents, sweep: section))
    assert stored(figure_cache, shift=1.0) and not stored(figure_cache)


def test_the_robustness_section_computes_nothing_ahead(figure_cache):
    """A section needing a result not yet stored is left to the report: the figures are drawn
    without it, and the result is not computed by the worker."""
    computed = []

    def section(config, documents, sweep):
        assert documents == ["toy"] and sweep is None
        entry = cache.cached("behind-the-section", {}, lambda: computed.append(1) or {})
        return {"claims": {}, "shift": float(len(entry.arrays))}

    plugin._draw_ahead(worker({"toy"}, robustness=section))
    assert stored(figure_cache) and computed == []
