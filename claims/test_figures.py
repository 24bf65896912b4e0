"""lib.report.figures: the document selection of `draw_all`, what the figures show, and the
claims they are said to illustrate."""

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.collections import LineCollection

from lib.metrics import decompose_variance
from lib.report.figures import (
    FIGURES,
    auroc_figure,
    confidence_figure,
    draw_all,
    uncertainty_band_figure,
)

REPO = Path(__file__).resolve().parents[1]


# The figures show the faithful order's results.
@pytest.fixture
def calibration(calibration):
    return calibration.faithful


@pytest.fixture
def uncertainty(uncertainty):
    return uncertainty.faithful


def test_no_documents_draws_nothing(tmp_path: Path) -> None:
    assert draw_all(tmp_path, set()) == []
    assert list(tmp_path.iterdir()) == []


def test_unknown_document_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown document"):
        draw_all(tmp_path, {"calibration", "nonsense"})
    assert list(tmp_path.iterdir()) == []


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
    with_bars = auroc_figure(calibration, intervals)
    bars = [c for c in with_bars.axes[0].collections if isinstance(c, LineCollection)]
    assert len(bars) == 5  # one per series
    yat_kmax = [s["auroc"]["kmax"] for s in calibration.per_seed["yat"]]
    ends = {tuple(np.round(segment[:, 1], 9)) for bar in bars for segment in bar.get_segments()}
    assert {tuple(np.round((v - 0.01, v + 0.02), 9)) for v in yat_kmax} <= ends
    without = auroc_figure(calibration)
    assert not [c for c in without.axes[0].collections if isinstance(c, LineCollection)]


def test_confidence_histograms_do_not_mix_their_fills(calibration):
    """In-distribution: an opaque fill; OOD: hatching with no fill. No translucent fill that
    would blend the two into a third colour where they overlap."""
    fig = confidence_figure(calibration)
    for ax in fig.axes:
        fills = [p for p in ax.patches if p.get_fill()]
        faces = [p.get_facecolor() for p in fills]
        assert all(alpha in (0.0, 1.0) for *_, alpha in faces), faces
        assert sorted(alpha for *_, alpha in faces) == [0.0, 1.0]
        assert [p.get_hatch() for p in fills if p.get_facecolor()[3] == 0.0] == ["////"]


def test_uncertainty_band_shows_aleatoric_and_epistemic_variance(uncertainty):
    """The lower panels plot the decomposition itself: E[σ²] and Var[μ] over the grid."""
    fig = uncertainty_band_figure(uncertainty)
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
        "            print('CLAIM-ID', marker.kwargs['id'])\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))}  # fmt: skip
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
    named = {claim_id for spec in FIGURES for claim_id in spec.claims}
    assert named and named <= collected, sorted(named - collected)
