"""claim_audit.render.drawing: what `draw_all` draws and reuses (the figure cache), what the
figures show, and the claims they are said to illustrate."""

import functools
import importlib.util
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from claim_audit.render import drawing
from claim_audit.render.documents import Document, FigureSpec
from claim_audit.render.drawing import draw_all, index
from fault_tools import child_env
from matplotlib.collections import LineCollection
from readings.calibration import document as calibration_document
from readings.calibration.figures import auroc_figure, confidence_figure
from readings.uncertainty import document as uncertainty_document
from readings.uncertainty.figures import uncertainty_band_figure

from uncertainty_claims.metrics import decompose_variance

REPO = Path(__file__).resolve().parents[1]


# The figures show the faithful order's results.
@pytest.fixture
def calibration(calibration):
    return calibration.faithful


@pytest.fixture
def uncertainty(uncertainty):
    return uncertainty.faithful


def test_no_documents_draws_nothing(tmp_path: Path) -> None:
    assert draw_all(tmp_path, []) == []
    assert list(tmp_path.iterdir()) == []


def test_a_document_that_misses_a_figure_data_is_rejected(tmp_path: Path) -> None:
    document = Document(
        "toy",
        figures=(FigureSpec("line.png", "A line.", (), line_figure),),
        figure_data=lambda _robustness: {"other.png": {}},
    )
    with pytest.raises(ValueError, match=r"figure_data gave \['other.png'\]"):
        draw_all(tmp_path, [document])
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- the cache

DRAWN: list[str] = []  # what line_figure drew, in order


def line_figure(data: dict):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    DRAWN.append(data["label"])
    fig = Figure(figsize=(2, 2), dpi=40)
    FigureCanvasAgg(fig)
    fig.add_subplot().plot(data["y"], label=data["label"])
    return fig


def toy(data: dict) -> Document:
    return Document(
        "toy",
        figures=(FigureSpec("line.png", "A line.", ("toy-1",), line_figure),),
        figure_data=lambda _robustness: {"line.png": data},
    )


def test_unchanged_data_reuses_the_files_and_changed_data_redraws(tmp_path: Path) -> None:
    cache, data = tmp_path / "cache", {"y": np.arange(4.0), "label": "first"}
    DRAWN.clear()
    for run in ("a", "b"):  # two reports from the same data: drawn once
        (tmp_path / run).mkdir()
        paths = draw_all(tmp_path / run, [toy(data)], cache_dir=cache)
    assert DRAWN == ["first"]
    assert paths == [tmp_path / "b" / "line.png"]
    entry = {"file": "line.png", "svg": "line.svg", "document": "toy", "caption": "A line."}
    assert index([toy(data)]) == [{**entry, "claims": ["toy-1"]}]
    for name in ("line.png", "line.svg"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    (tmp_path / "c").mkdir()
    changed = {"y": np.arange(4.0) * 2, "label": "first"}  # same label, other numbers
    draw_all(tmp_path / "c", [toy(changed)], cache_dir=cache)
    assert DRAWN == ["first", "first"]
    assert (tmp_path / "c" / "line.png").read_bytes() != (tmp_path / "a" / "line.png").read_bytes()


def test_a_half_written_entry_is_drawn_again(tmp_path: Path) -> None:
    """An entry missing a file (a writer killed between its two renames; one killed before
    them leaves only a .tmp- folder, never served) is drawn again."""
    cache, data = tmp_path / "cache", {"y": np.arange(3.0), "label": "x"}
    DRAWN.clear()
    draw_all(tmp_path, [toy(data)], cache_dir=cache)
    [png, svg] = sorted(p for p in cache.iterdir() if not p.name.startswith("."))
    good = png.read_bytes()
    svg.unlink()
    draw_all(tmp_path, [toy(data)], cache_dir=cache)
    assert DRAWN == ["x", "x"] and (tmp_path / "line.png").read_bytes() == good
    assert sorted(cache.iterdir()) == [png, svg]  # no staging folder left


def test_the_key_follows_the_drawing_code(tmp_path: Path, monkeypatch) -> None:
    """The code part of a key is derived from the drawing function's module: a change to
    that module's source gives another key."""
    module = tmp_path / "toy_drawing.py"
    module.write_text("def draw(data):\n    return data\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import toy_drawing

    before = drawing.figure_key("f.png", toy_drawing.draw, {"a": 1})
    assert before == drawing.figure_key("f.png", toy_drawing.draw, {"a": 1})
    assert before != drawing.figure_key("f.png", toy_drawing.draw, {"a": 2})
    module.write_text("def draw(data):\n    return data  # drawn otherwise\n")
    forget_code_digests()
    assert before != drawing.figure_key("f.png", toy_drawing.draw, {"a": 1})


def forget_code_digests() -> None:
    """As a new process would: the digests of source read once per process are read again."""
    drawing.cache.package_digest.cache_clear()


def load_module(name: str, path: Path, monkeypatch) -> types.ModuleType:
    """Import `path` as module `name`, as pytest imports each conftest.py as 'conftest'."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, name, module)
    return module


DRAW = "def draw(data, color='k'):\n    return data\n"


def test_the_key_follows_a_partial_draws_code_and_arguments(tmp_path, monkeypatch) -> None:
    """A `draw` that is a functools.partial is keyed by the function it wraps and by the
    arguments it binds. Bug fixed: its __module__ is 'functools', so functools' source was
    keyed and a changed drawing served the old figure
    (engine/claim_audit/render/drawing.py `figure_key`)."""
    module = tmp_path / "toy_partial.py"
    module.write_text(DRAW)
    draw = functools.partial(load_module("toy_partial", module, monkeypatch).draw, color="r")
    before = drawing.figure_key("f.png", draw, {"a": 1})
    assert before != drawing.figure_key("f.png", functools.partial(draw, color="b"), {"a": 1})
    module.write_text(DRAW + "# drawn otherwise\n")
    forget_code_digests()
    assert before != drawing.figure_key("f.png", draw, {"a": 1})
    with pytest.raises(TypeError, match=r"f.png's draw, a functools.partial: its arguments.* set"):
        drawing.figure_key("f.png", functools.partial(draw, color={1}), {"a": 1})


def test_the_key_follows_a_root_conftest_beside_another(tmp_path, monkeypatch) -> None:
    """A `draw` defined in the root conftest.py (as the starter's) of a project with a second
    conftest.py is keyed by the root one's file. Bug fixed: `sys.modules['conftest']` names
    the conftest imported last, whose file was keyed instead, so a changed drawing served the
    old figure (engine/claim_audit/render/drawing.py `figure_key`)."""
    root, other = tmp_path / "conftest.py", tmp_path / "tests" / "conftest.py"
    root.write_text(DRAW)
    other.parent.mkdir()
    other.write_text("NOTHING_DRAWN = True\n")
    draw = load_module("conftest", root, monkeypatch).draw
    load_module("conftest", other, monkeypatch)
    before = drawing.figure_key("f.png", draw, {"a": 1})
    root.write_text(DRAW + "# drawn otherwise\n")
    forget_code_digests()
    assert before != drawing.figure_key("f.png", draw, {"a": 1})


def test_the_key_follows_a_masked_arrays_mask() -> None:
    """Figure data holding a numpy masked array is keyed by its mask too (the mask hides
    points). Bug fixed: only its data bytes were digested, so a changed mask served the old
    figure (engine/claim_audit/render/drawing.py `_feed`)."""
    values = np.arange(3.0)
    keys = {
        drawing.data_digest({"y": np.ma.masked_array(values, mask=mask)})
        for mask in ([0, 0, 0], [0, 1, 0], [1, 0, 0])
    }
    assert len(keys) == 3
    assert drawing.data_digest({"y": values}) not in keys


def test_figure_data_of_an_unknown_type_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match=r"figure data\['nets'\]\[0\] is a set"):
        drawing.data_digest({"nets": [{1, 2}]})


# --------------------------------------------------------------------------- what they show


def test_auroc_figure_draws_the_intervals_it_is_given(calibration):
    """Each series gets one bar per seed, from its interval's low to its high end."""
    intervals = {
        net: [
            {
                "seed": seed["seed"],
                **{
                    f"{group}.{score}": {"low": value - 0.01, "high": value + 0.02}
                    for group in ("auroc", "auroc_subsample")
                    for score, value in seed[group].items()
                },
            }
            for seed in calibration.per_seed[net]
        ]
        for net in ("yat", "relu")
    }
    data = calibration_document.figure_data({"figure_intervals": intervals})["auroc_per_seed.png"]
    with_bars = auroc_figure(data)
    bars = [c for c in with_bars.axes[0].collections if isinstance(c, LineCollection)]
    assert len(bars) == 5  # one per series
    yat_kmax = [s["auroc"]["kmax"] for s in calibration.per_seed["yat"]]
    ends = {tuple(np.round(segment[:, 1], 9)) for bar in bars for segment in bar.get_segments()}
    assert {tuple(np.round((v - 0.01, v + 0.02), 9)) for v in yat_kmax} <= ends
    without = auroc_figure({**data, "intervals": None})
    assert not [c for c in without.axes[0].collections if isinstance(c, LineCollection)]


def test_confidence_histograms_do_not_mix_their_fills(calibration):
    """In-distribution: an opaque fill; OOD: hatching with no fill. No translucent fill that
    would blend the two into a third colour where they overlap."""
    fig = confidence_figure(calibration_document.figure_data(None)["confidence_hist.png"])
    for ax in fig.axes:
        fills = [p for p in ax.patches if p.get_fill()]
        faces = [p.get_facecolor() for p in fills]
        assert all(alpha in (0.0, 1.0) for *_, alpha in faces), faces
        assert sorted(alpha for *_, alpha in faces) == [0.0, 1.0]
        assert [p.get_hatch() for p in fills if p.get_facecolor()[3] == 0.0] == ["////"]


def test_uncertainty_band_shows_aleatoric_and_epistemic_variance(uncertainty):
    """The lower panels plot the decomposition itself: E[σ²] and Var[μ] over the grid."""
    fig = uncertainty_band_figure(uncertainty_document.figure_data(None)["uncertainty_band.png"])
    for ax, (means, variances) in zip(
        fig.axes[2:4],
        (
            (uncertainty.mc_grid_means, uncertainty.mc_grid_vars),
            (uncertainty.ens_grid_means, uncertainty.ens_grid_vars),
        ),
        strict=True,
    ):
        parts = decompose_variance(means, variances)
        lines = {line.get_label(): line for line in ax.get_lines()}
        aleatoric = next(v for k, v in lines.items() if k.startswith("aleatoric"))
        epistemic = next(v for k, v in lines.items() if k.startswith("epistemic"))
        np.testing.assert_allclose(aleatoric.get_ydata(), parts.aleatoric[:, 0])
        np.testing.assert_allclose(epistemic.get_ydata(), parts.epistemic[:, 0])


def test_every_claim_a_figure_illustrates_is_a_claim_of_the_suite(tmp_path):
    """The figure index names claims by id: each must be the id of a collected claim test."""
    (tmp_path / "list_claim_ids.py").write_text(
        "def pytest_collection_finish(session):\n"
        "    for item in session.items:\n"
        "        marker = item.get_closest_marker('claim')\n"
        "        if marker is not None:\n"
        "            print('CLAIM-ID', marker.args[0].id)\n"
    )
    env = child_env(PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))  # fmt: skip
    command = [sys.executable, "-m", "pytest", "claims", "--collect-only", "-q", "-s"]
    result = subprocess.run(
        [*command, "-p", "list_claim_ids", "-p", "no:cacheprovider"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env=env,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    collected = set(re.findall(r"^CLAIM-ID (\S+)$", result.stdout, flags=re.MULTILINE))
    assert len(collected) > 50
    documents = (calibration_document.DOCUMENT, uncertainty_document.DOCUMENT)
    named = {claim_id for document in documents for spec in document.figures for claim_id in spec.claims}  # fmt: skip
    assert named and named <= collected, sorted(named - collected)
