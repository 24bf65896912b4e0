"""The report a reader takes in at a glance: figures shown to their published digits, each
verdict behind a mark, one sentence and a picture of the draws, the counts and the claims to
look at on top; audit.html opened in headless Chromium.

The audit here is the engine's own: each claim decided by `decide` over its orders, as a run
records it; the robustness section is `seed_section`'s.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from claim_audit import Comparison, Effect, Region, seed_section, within
from claim_audit.engine.claim import ClaimSpec, decide
from claim_audit.engine.verdict import Measured, satisfied
from claim_audit.render import drawing, markdown, reading, table
from claim_audit.report import audit as report

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
BROWSER_TIMEOUT_S = 120
LONG = "-3.78975572422"  # twelve digits, as a tutorial prints a statistic


def spec(claim_id: str, published, **kw) -> ClaimSpec:
    statement = f"The document says {published}." if published else "An identity."
    return ClaimSpec(
        claim_id, "tutorial", kw.pop("section", "One sample"), statement, published, **kw
    )


def figures(published: str, values) -> dict[str, Measured]:
    names = ["faithful", *(f"order-{i}" for i in range(1, len(values)))]
    return {n: Measured((published,), (float(v),)) for n, v in zip(names, values, strict=True)}


def thresholds(values, region: Region, name: str) -> dict:
    names = ["faithful", *(f"order-{i}" for i in range(1, len(values)))]
    return {n: within(v, region, name=name) for n, v in zip(names, values, strict=True)}


def records() -> tuple[list, dict[str, bool]]:
    """One claim of each kind and verdict, decided by the engine over its orders."""
    rng = np.random.default_rng(0)
    long = float(LONG) + rng.normal(0, 2e-12, 8)
    wide = 1.8 + rng.normal(0, 0.4, 3)
    out = [
        decide(spec("t-long", LONG), figures(LONG, long)),
        decide(spec("t-mean", "6.45"), figures("6.45", 6.45 + rng.normal(0, 0.15, 8))),
        decide(spec("t-off", "2.05"), figures("2.05", 1.999 + rng.normal(0, 0.001, 8))),
        decide(spec("t-found", "0.0858"), figures("0.0858", 0.05 + rng.normal(0, 1e-4, 8))),
        decide(spec("t-wide", "1.83"), figures("1.83", wide)),
        decide(
            spec("t-above", "p < 0.05"),
            thresholds(0.03 + rng.normal(0, 0.002, 8), Region(high=0.05), "p-value"),
        ),
        decide(
            spec("t-split", "p < 0.05"),
            thresholds(np.linspace(0.015, 0.085, 12), Region(high=0.05), "p-value"),
        ),
        decide(
            spec("t-once", None, once=True),
            {"faithful": satisfied(True, measured="shapes agree")},
        ),
    ]
    unpinned = decide(spec("t-unpinned", "0.25"), figures("0.25", 0.25 + rng.normal(0, 0.1, 8)))
    unpinned.verdict = "unpinned"  # a verdict word this engine does not give yet
    novel = decide(spec("t-novel", "0.5"), figures("0.5", 0.5 + rng.normal(0, 0.01, 8)))
    novel.verdict = "pending review"  # and one no report knows
    out += [unpinned, novel]
    return out, {"t-found": False}


def robustness() -> dict:
    two = Comparison(
        (
            Effect("gap", lambda run: run["gap"], Region(0.0)),
            Effect("level", lambda run: run["level"], Region(1.0, 2.0)),
        ),
    ).for_claim("t-two")
    rng = np.random.default_rng(1)
    runs = {
        seed: {"gap": float(rng.normal(0.5, 0.5)), "level": float(rng.normal(1.5, 0.4))}
        for seed in range(20)
    }
    return report.checked(seed_section([two], runs.__getitem__, published=[0], sweep=range(20)))


@pytest.fixture(scope="module")
def audit() -> dict:
    claims, expected = records()
    return report.build(claims, expected, [], 1.0, robustness=robustness())


def test_a_figure_shows_to_its_published_digits_in_every_table(audit):
    """A published -3.78975572422 is shown measured to as many digits, and its tolerance to
    the digits that keep its ends apart: in audit.md, audit.html and the terminal."""
    row = next(c for c in audit["claims"] if c["id"] == "t-long")
    assert row["measured"] == "-3.79"  # the record's own four digits: the reader sees more
    published, measured, tolerance = markdown.figure_cells(row)
    assert published == LONG and re.fullmatch(r"-3\.78975572422\d*", measured)
    low, high = re.fullmatch(r"\[(\S+), (\S+)\]", tolerance).groups()
    assert low != high and float(low) <= float(LONG) <= float(high)
    assert len(low) >= len(LONG) and len(high) >= len(LONG)
    for text in (markdown.render(audit, []), markdown.render_html(audit, {})):
        assert f"| {measured} | \\[{low}, {high}\\] |" in text or f"<td>{measured}</td>" in text
    claims, expected = records()
    lines = table.render(claims, expected, width=100)
    assert any(measured in line for line in lines) and "…" not in "\n".join(lines)


def test_audit_md_reads_as_text_with_marks_sentences_and_statistics(audit):
    text = markdown.render(audit, [])
    glance = text.split("## At a glance", 1)[1].split("###", 1)[0]
    assert "| verdict | tutorial |" in glance and "| claims | 10 |" in glance
    counts = {"✓ holds": 4, "✗ REFUTED": 1, "✗ refuted\\*": 1, "? inconclusive": 1}
    assert all(f"| {label} | {count} |" in glance for label, count in counts.items())
    assert "✗ REFUTED (1): [t-off](#claim-t-off)" in glance
    assert (
        "? inconclusive" in glance and "↔ unpinned (1): [t-unpinned](#claim-t-unpinned)" in glance
    )
    assert "• pending review (1)" in glance  # an unknown verdict word: a neutral mark
    assert "REFUTED: t-off" in audit["summary"]
    row = next(line for line in text.splitlines() if 'id="claim-t-mean"' in line)
    assert "✓ holds: the published 6.45 lies inside the recipe's range" in row
    assert "(statistics: 6.45: t = " in row and "<details>" not in text and "<svg" not in text
    findings = text.split("## Findings", 1)[1]
    assert "[t-off](#claim-t-off)" in findings.split("Claims that do not hold")[0]
    assert "[t-found](#claim-t-found)" not in findings  # a refutation the test did not record


def test_every_claim_judged_over_draws_has_a_picture_on_the_page(audit):
    page = markdown.render_html(audit, {})
    for claim in audit["claims"]:
        row = re.search(rf'<tr>\s*<td><a id="claim-{claim["id"]}">.*?</tr>', page, re.S)[0]
        mark = reading.mark(markdown.labels_of(audit)[claim["id"]])
        assert f"{mark.symbol} " in row and f"--c:{mark.colour}" in row
        drawn = len(reading.strips(claim))
        assert row.count('<svg class="draws"') == drawn
        assert drawn == (0 if claim["id"] == "t-once" else 1), claim["id"]
        assert "<details><summary>statistics</summary>" in row or claim["id"] == "t-once"


def test_a_threshold_picture_marks_each_draw_in_or_out_of_its_region(audit):
    claim = next(c for c in audit["claims"] if c["id"] == "t-split")
    [svg] = reading.pictures(claim)
    values = claim["details"]["effects"][0]["values"]
    inside = sum(v < 0.05 for v in values)
    assert svg.count('fill="#1a7f37" fill-opacity="0.8"') == inside
    assert svg.count('fill="#cf222e"') == len(values) - inside


def test_the_sweep_marks_its_claim_once_and_survives_without_a_tty(audit):
    text = "\n".join(markdown.render_robustness(audit["robustness"]))
    sweep = audit["robustness"]["claims"]["t-two"]["sweep"]
    label = reading.marked(sweep["label"])
    assert text.count(label) == 1 and "**" not in text.split("### Across seeds", 1)[1]
    lines = table.render_robustness(audit["robustness"], width=70)
    assert max(map(len, lines)) <= 70
    assert sum(label.split()[0] in line for line in lines) == 1


def chromium() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


# Measured in the page: what each table and the page need beyond their width, and what each
# claim row shows. Written into the DOM, which --dump-dom prints.
MEASURE = """<script>
const rows = [...document.querySelectorAll('tr')].filter(r => r.querySelector('a[id^="claim-"]'));
const out = {
  page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
  tables: [...document.querySelectorAll('table')].map(t => [t.scrollWidth, t.clientWidth,
    t.getBoundingClientRect().right, document.body.getBoundingClientRect().right]),
  rows: rows.map(r => {
    const mark = r.querySelector('.mark');
    const box = mark ? mark.getBoundingClientRect() : null;
    return {id: r.querySelector('a[id^="claim-"]').id, mark: mark ? mark.textContent : null,
      colour: mark ? getComputedStyle(mark).color : null, seen: box ? box.width * box.height : 0,
      pictures: [...r.querySelectorAll('svg.draws')].map(s => s.getBoundingClientRect().width)};
  }),
};
const pre = document.createElement('pre');
pre.id = 'measured';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"""


@pytest.mark.parametrize("width", [1280, 800])
def test_audit_html_in_headless_chromium(audit, tmp_path: Path, width: int):
    """The page as Chromium lays it out: every claim row shows its mark, coloured, and a
    picture where it is judged over draws; no table is wider than the page."""
    browser = chromium()
    if browser is None:
        pytest.skip(
            f"no Chromium on PATH (looked for {', '.join(BROWSERS)}); apt-get install chromium"
        )
    html = markdown.render_html(audit, {}).replace("</body>", MEASURE + "</body>")
    page = tmp_path / "audit.html"
    page.write_text(html, encoding="utf-8")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    flags += [f"--window-size={width},1000", f"--user-data-dir={tmp_path / 'profile'}"]
    done = subprocess.run(
        [browser, *flags, "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=BROWSER_TIMEOUT_S,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="measured">(.*?)</pre>', done.stdout, re.S)
    assert found, f"the page did not run to its end: {done.stdout[-500:]}"
    measured = json.loads(found[1].replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))
    scroll, client = measured["page"]
    assert scroll <= client, f"the page scrolls sideways: {scroll} > {client}"
    for scroll, client, right, body in measured["tables"]:
        assert scroll <= client + 1 and right <= body + 1, measured["tables"]
    labels = markdown.labels_of(audit)
    by_id = {c["id"]: c for c in audit["claims"]}
    assert {row["id"] for row in measured["rows"]} == {f"claim-{i}" for i in labels}
    for row in measured["rows"]:
        claim_id = row["id"].removeprefix("claim-")
        mark = reading.mark(labels[claim_id])
        assert row["mark"] == f"{mark.symbol} {labels[claim_id]}" and row["seen"] > 0, row
        assert row["colour"] != "rgb(31, 35, 40)", row  # the mark's colour, not the text's
        assert len(row["pictures"]) == len(reading.strips(by_id[claim_id])), row
        assert all(w > 50 for w in row["pictures"]), row


DIGITS_CLAIM = """

@claims("toy-6", "Fit", "The fit prints the intercept to twelve digits.", published="{published}")
def test_intercept_digits(fit):
    return fit.intercept
"""


@pytest.mark.slow
@pytest.mark.parametrize("columns", [70, 160])
def test_the_terminal_tables_fit_columns_and_cut_no_figure(tmp_path: Path, columns: int):
    """The starter with the guide's comparative claim and a figure printed to twelve digits,
    run as a user runs it with COLUMNS set: the claims and robustness tables fit the width,
    nothing is cut with "…", the figure shows to its digits, the sweep's label once."""
    from fault_tools import pytest_command, starter_project, user_env
    from test_sweep import guide_blocks

    folder = starter_project(tmp_path / "paper")
    printed = "import toy; print(f'{toy.fit(*toy.points()).intercept:.12f}')"
    intercept = subprocess.run(
        [sys.executable, "-c", printed], cwd=folder, env=user_env(),
        capture_output=True, text=True, check=True, timeout=BROWSER_TIMEOUT_S,
    ).stdout.strip()  # fmt: skip
    claim, hook = guide_blocks()
    with (folder / "test_toy.py").open("a") as claims:
        claims.write("\n" + claim + DIGITS_CLAIM.format(published=intercept))
    with (folder / "conftest.py").open("a") as conftest:
        conftest.write("\n" + hook)
    done = subprocess.run(
        pytest_command("-p", "no:xdist", "--report-dir=report", "--seeds", "0-3"),
        cwd=folder, env={**user_env(), "COLUMNS": str(columns)},
        capture_output=True, text=True, timeout=BROWSER_TIMEOUT_S,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    tables = done.stdout.split("CLAIMS AUDIT", 1)[1].split("wrote ", 1)[0]
    assert max(map(len, tables.splitlines())) <= columns and "…" not in tables
    assert re.search(rf"toy-6 .*{re.escape(intercept)}", tables), tables
    robustness = tables.split("ROBUSTNESS", 1)[1]
    assert sum(line.lstrip().startswith("toy-5") for line in robustness.splitlines()) == 1


def test_robustness_png_colours_each_dot_by_its_own_effect(audit):
    """In each effect's panel a seed's dot is green exactly when that effect lies in its
    region (the shaded band), whatever the claim's other effects do: no red dot in the band."""
    from matplotlib.collections import PathCollection
    from matplotlib.colors import to_rgba

    section = audit["robustness"]
    figure = drawing.robustness_figure(section)
    sweep = section["claims"]["t-two"]["sweep"]
    panels = [ax for ax in figure.axes if ax.get_visible() and ax.collections]
    assert len(panels) == len(sweep["effects"]) == 2
    mixed = 0
    for k, ax in enumerate(panels):
        [dots] = [c for c in ax.collections if isinstance(c, PathCollection)]
        values = [v[k] for v in sweep["subset_values"]]
        inside = [reading.in_region(v, sweep["regions"][k]) for v in values]
        colours = [
            to_rgba(drawing.HOLDS_COLOUR if i else drawing.FAILS_COLOUR, 0.7) for i in inside
        ]
        assert np.allclose(dots.get_facecolors(), colours)
        mixed += sum(i and not h for i, h in zip(inside, sweep["subset_holds"], strict=True))
    assert mixed > 0  # some seeds hold one effect and not the claim: green in that panel
