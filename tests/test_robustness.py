"""Robustness beside the audit (claims/readings/suite.py and the documents' claims packages): its statistics read the claims' own definitions.

Not claims: these tests check that the intervals, the sensitivity variants and the sweep
are computed from the same figures and definitions as the faithful claims. The sweep tests
run only with --seeds; they train (or load) the sweep's runs on a worker, so the report,
written by the controller, reads them from the cache.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
import test_calibration
import test_uncertainty
from claim_audit.engine import sweep
from claim_audit.engine.sweep import MAX_SUBSETS, across_runs, across_seeds
from claim_audit.engine.verdict import Comparison, Effect, Region
from claim_audit.render import drawing, markdown, table
from fault_tools import REPO_ROOT, claim_body
from readings.calibration import bootstrap, sensitivity
from readings.calibration.measures import figure
from readings.suite import robustness_section

from uncertainty_claims.calibration.experiment import PUBLISHED_SEEDS

pytestmark = pytest.mark.robustness

COMPARISONS = {
    "calibration": test_calibration.COMPARISONS,
    "uncertainty": test_uncertainty.COMPARISONS,
}
BY_ID = {c.claim_id: c for c in test_calibration.COMPARISONS}


# The statistics beside the audit are about the faithful order's results.
@pytest.fixture
def calibration(calibration):
    return calibration.faithful


@pytest.fixture
def uncertainty(uncertainty):
    return uncertainty.faithful


def mean(calibration, net: str, name: str) -> float:
    return float(np.mean([figure(f, name) for f in calibration.per_seed[net]]))


def test_comparisons_give_the_audits_figures(calibration):
    """The robustness definitions of cal-02c, cal-03e, cal-10c, cal-11c recomputed directly."""
    expected = {
        "cal-02c": [mean(calibration, "yat", "ece") / mean(calibration, "relu", "ece")],
        "cal-03e": [
            mean(calibration, "yat", name) - mean(calibration, "relu", name)
            for name in ("ece", "nll", "brier")
        ],
        "cal-10c": [mean(calibration, "yat", "ece_T") / mean(calibration, "relu", "ece_T")],
        "cal-11c": [
            mean(calibration, "relu", "auroc.maxlogit") - mean(calibration, "yat", "auroc.kmax")
        ],
    }
    for claim_id, values in expected.items():
        got = BY_ID[claim_id].values(calibration.per_seed)
        assert got == pytest.approx(values, rel=1e-12), claim_id


def test_every_calibration_comparison_holds_on_the_published_seeds_as_in_the_audit(calibration):
    """As in the faithful audit: each comparison holds on the published seeds exactly when its
    claim's judge finds it holding in the faithful order."""
    for comparison in test_calibration.COMPARISONS:
        body = claim_body(test_calibration, comparison.claim_id)
        audit = body(calibration=calibration).holds
        assert comparison.judge(calibration.per_seed).holds == audit, comparison.claim_id


def test_the_posts_own_choices_reproduce_the_claims(calibration):
    """Each sensitivity variant marked as the post's choice gives the claim's own figure."""
    per_seed = sensitivity.with_binnings(calibration)
    chosen = [v for v in sensitivity.variants() if v.published]
    assert sorted(v.comparison.claim_id for v in chosen) == ["cal-02c", "cal-10c", "cal-11c"]
    for variant in chosen:
        claim = BY_ID[variant.comparison.claim_id]
        assert variant.comparison.values(per_seed) == claim.values(calibration.per_seed)


def test_unresampled_bootstrap_gives_the_figures(calibration):
    """With every image drawn once, the resampled figures are the evaluated ones."""
    run, split = calibration.runs["yat"], calibration.split
    figures = calibration.per_seed["yat"][1]
    terms = bootstrap.seed_terms(run, 1, split.test_y, figures["T"])
    sizes = {"test": 10000, "ood": 10000, "sub_test": 3000, "sub_ood": 1500}
    once = {name: np.ones((1, n)) for name, n in sizes.items()}
    got = {name: values[0] for name, values in bootstrap.resampled_figures(terms, once).items()}
    assert set(got) == set(bootstrap.RESAMPLED)
    for name, value in got.items():
        assert value == pytest.approx(figure(figures, name), rel=1e-12, abs=1e-15), name


def test_resampling_is_reproducible(calibration):
    def small() -> dict[str, np.ndarray]:
        runs = {"relu": calibration.runs["relu"]}
        return bootstrap.resample_figures(runs, calibration.split, calibration.per_seed, b=10)

    first, second = small().samples["relu"], small().samples["relu"]
    assert all(np.array_equal(first[name], second[name]) for name in first)


def test_report_of_a_sweep(calibration, tmp_path):
    """The report's sweep path, run on the published seeds themselves (cheap): the tables fit
    80 columns, the Markdown and the figure are drawn, and the JSON is strict."""
    section = robustness_section({"calibration"}, PUBLISHED_SEEDS, COMPARISONS)
    json.dumps(section, allow_nan=False)
    lines = table.render_robustness(section)
    assert all(len(line) <= 80 for line in lines)
    assert any(line.split()[:1] == ["cal-02c"] and "1/1" in line for line in lines)
    assert "### Across seeds 0, 1, 2" in "\n".join(markdown.render_robustness(section))
    if section["figure_intervals"]:  # audit.md holds them; the terminal says where
        assert "Per-seed figures with" in "\n".join(markdown.render_robustness(section))
        assert not any("Per-seed figures with" in line for line in lines)
        assert any("audit.md" in line for line in lines)
    [path] = drawing.draw_all(tmp_path, set(), robustness=section)
    assert path.stat().st_size > 10_000


@pytest.mark.parametrize(
    ("holding", "total", "seeds", "size", "expected"),
    [
        (14, 14, 14, None, "robust"),  # 14 unanimous draws show p >= 80% at 95%
        (13, 13, 13, None, "inconclusive"),  # 13 do not: 0.05 ** (1 / 13) < 0.8
        (0, 14, 14, None, "fails"),
        (5, 10, 10, None, "fragile"),  # an even split is confidently between 10% and 90%
        (1, 10, 10, None, "inconclusive"),  # once "fails" at 10%: the seeds cannot yet tell
        (9, 50, 50, None, "inconclusive"),  # once "fragile"
        (120, 120, 10, 3, "inconclusive"),  # 10 seeds hold 3 disjoint 3-seed subsets
        (math.comb(42, 3), math.comb(42, 3), 42, 3, "robust"),  # 14 disjoint subsets
    ],
)
def test_sweep_labels_follow_the_share_rule(holding, total, seeds, size, expected):
    """A sweep's label is the share rule's verdict on the count of seeds (or disjoint subsets)
    it holds on, not a fixed share of them."""
    got, (low, high) = sweep.share_label(holding, total, sweep.independent_draws(seeds, size))
    assert got == expected and 0 <= low <= holding / total <= high <= 1


@pytest.mark.parametrize(("holding", "seeds"), [(1, 10), (9, 50), (13, 13), (3, 5)])
def test_an_inconclusive_sweep_names_the_seeds_that_would_conclude_it(holding, seeds):
    """The seeds it names conclude the sweep at the same share; fewer would not."""
    needed = sweep.seeds_to_conclude(holding, seeds, seeds, None)
    assert needed is not None and needed > seeds
    share = holding / seeds
    assert sweep.share_label(round(share * needed), needed, needed)[0] != "inconclusive"
    before = needed - 1
    if before > seeds:
        assert sweep.share_label(round(share * before), before, before)[0] == "inconclusive"


def test_the_docs_give_the_smallest_sweep_the_code_computes():
    """docs/VERDICTS.md's minimum sweep sizes are `fewest_seeds`'s."""
    text = " ".join((REPO_ROOT / "docs" / "VERDICTS.md").read_text().split())
    one, three = sweep.fewest_seeds(), sweep.fewest_seeds(3)
    assert f"has {one} seeds (root keys) all agreeing, {three} seeds for a claim" in text
    assert sweep.share_label(one, one, one)[0] == "robust"
    assert sweep.share_label(one - 1, one - 1, one - 1)[0] == "inconclusive"


def test_a_sweep_counts_each_effect_and_the_claim_once():
    """Two effects: each effect's count of seeds in its region, and the claim's count (a seed
    counts when both hold) on one row of its own; a seed marked only where its effect is out."""
    comparison = Comparison(
        (Effect("a", lambda r: r["a"], Region(0.0)), Effect("b", lambda r: r["b"], Region(0.0))),
    ).for_claim("two")
    runs = [{"a": 1.0, "b": 1.0}, {"a": -1.0, "b": 1.0}, {"a": 1.0, "b": -1.0}]
    judged = across_runs(comparison, runs, (0, 1, 2)).to_json()
    assert judged["effect_holding"] == [2, 2] and judged["holding"] == 1
    header, rows, _ = markdown.sweep_rows({"two": {"sweep": judged}})
    assert header.split(" | ")[3] == "holds on" and "✗: outside the effect's region" in header
    claim_rows = [row for row in rows if row[0] == "two"]
    assert len(claim_rows) == 1 and "not on 1, 2" in claim_rows[0]
    assert "1/3 seeds" in claim_rows[0] and claim_rows[0][-1].startswith("? inconclusive")
    effect_a, effect_b = (row for row in rows if row[0] == "")
    assert effect_a[3] == "2/3" and effect_a[6] == "1, -1 ✗, 1"
    assert effect_b[3] == "2/3" and effect_b[6] == "1, 1, -1 ✗"
    assert all(row[-1] == "" for row in (effect_a, effect_b))  # the label once, on the claim


def test_seeds_option_rejects_bad_syntax(tmp_path):
    """`--seeds 9-0`: a usage error (exit 4) that says why, before anything runs."""
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    plugin = ["-p", "claim_audit.report.plugin", "-p", "no:cacheprovider"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", *plugin, "--seeds", "9-0", "-q"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "argument --seeds: range '9-0' in '9-0' runs backwards" in result.stderr
    assert "passed" not in result.stdout


# --- the sweep (--seeds) -------------------------------------------------------------------


def test_calibration_sweep(sweep_seeds):
    """Train (or load) both nets on the sweep's seeds; every claim is judged on every subset."""
    results = bootstrap.calibration_on(sweep_seeds)
    per_seed = sensitivity.with_binnings(results)
    n = len(sweep_seeds)
    for comparison in test_calibration.COMPARISONS:
        robustness = across_seeds(comparison, per_seed, sweep_seeds, size=3)
        assert (
            robustness.total == min(math.comb(n, 3), MAX_SUBSETS) and 0 <= robustness.fraction <= 1
        )
        if comparison.per_seed:
            assert len(robustness.per_seed_values) == n
        assert all(math.isfinite(v) for v in robustness.values), comparison.claim_id


def test_uncertainty_sweep(sweep_seeds, uncertainty):
    """Run (or load) the guide's recipe from every root key of the sweep (in the scan order,
    as the sweep does); key 0 in that order gives the sweep's values."""
    from uncertainty_claims.orders.uncertainty import uncertainty_result

    runs = [uncertainty_result(key, implementation="scan") for key in sweep_seeds]
    for comparison in test_uncertainty.COMPARISONS:
        robustness = across_runs(comparison, runs, sweep_seeds, unit="root keys")
        assert robustness.total == len(sweep_seeds)
        if 0 in sweep_seeds:
            on_key_0 = list(robustness.per_seed_values[sweep_seeds.index(0)])
            scan = uncertainty_result(0, implementation="scan")
            assert on_key_0 == comparison.values(scan), comparison.claim_id
