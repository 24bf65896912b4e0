"""The audit plugin end to end: verdicts, exit status, the table, audit.json's schema."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from claim_audit.engine.claim import ClaimRecord
from claim_audit.render.table import render

DEMO_TESTS = textwrap.dedent(
    """
    import pytest
    from claim_audit import Claims
    from claim_audit.engine.claim import Orders
    from claim_audit.engine.verdict import satisfied

    CLAIMS = Claims("demo")

    @CLAIMS("d-1", "Demo", "claim d-1", published="about 1.00")
    def test_holds():
        return satisfied(abs(1.004 - 1.00) <= 0.005, published="1.00", measured=1.004)

    @CLAIMS("d-2", "Demo", "claim d-2", published="about 2.0", finding="measured 2.5")
    def test_known_finding():
        return satisfied(abs(2.5 - 2.0) <= 0.1, published="2.0", measured=2.5)

    @CLAIMS("d-3", "Demo", "claim d-3", published="about 1.0")
    def test_errors():
        raise RuntimeError("experiment broke")

    @pytest.fixture
    def value():
        # Half the draws reproduce the figure: the claim depends on the order. (Each draw its
        # own value: draws equal to float noise would be one draw, copies by value.)
        others = {f"o{i}": 1.004 + i / 1e6 if i % 2 else 1.3 + i / 1000 for i in range(1, 40)}
        return Orders({"faithful": 1.004, **others})

    @CLAIMS("d-4", "Demo", "claim d-4")
    def test_sensitive(value):
        return satisfied(abs(value - 1.00) <= 0.005, published="1.00", measured=value)
    """
)
CLAIM_KEYS = {
    "id",
    "document",
    "section",
    "statement",
    "published",
    "measured",
    "tolerance",
    "verdict",
    "details",
    "origin",
    "expected_to_hold",
}


def flat(text: str) -> str:
    """`text` with each run of whitespace one space: the table wraps its summary and notes."""
    return " ".join(text.split())


# pytest with the plugin named, and no cache folder left behind.
PLUGIN_PYTEST = [
    sys.executable,
    "-m",
    "pytest",
    "-p",
    "claim_audit.report.plugin",
    "-p",
    "no:cacheprovider",
]


def run_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess:
    (folder / "test_demo.py").write_text(DEMO_TESTS)
    (folder / "pytest.ini").write_text("[pytest]\nmarkers =\n    claim: a documented claim\n")
    command = [*PLUGIN_PYTEST, "-q", *args]
    return subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, Path]:
    folder = tmp_path_factory.mktemp("demo")
    # A claim in error would send the audit to out/partial/ (test_audit_faults.py).
    return run_pytest(folder, "--report-dir", "out", "--report-errors-as-complete"), folder / "out"


def test_verdicts_and_exit_status(demo_run):
    """holds / refuted (known finding) / sensitive / error are reported; an error fails the
    run, a sensitive claim does not."""
    result, report_dir = demo_run
    claims = {c["id"]: c for c in json.loads((report_dir / "audit.json").read_text())["claims"]}
    assert {k: c["verdict"] for k, c in claims.items()} == {
        "d-1": "holds",
        "d-2": "refuted",
        "d-3": "error",
        "d-4": "sensitive",
    }
    assert claims["d-2"]["expected_to_hold"] is False
    assert claims["d-2"]["details"]["finding"] == "measured 2.5"
    assert "experiment broke" in claims["d-3"]["details"]["error"]
    orders = claims["d-4"]["details"]["orders"]
    assert orders["faithful"] == {"measured": 1.004, "holds": True}  # a number, not its print
    assert orders["o2"]["holds"] is False and f"{orders['o2']['measured']:.4g}" == "1.302"
    assert claims["d-4"]["details"]["holds_in_orders"] == [21, 40]
    assert claims["d-4"]["details"]["range_over_orders"] == [1.004, 1.338]
    assert result.returncode == 1
    assert (
        "4 document claims: 1 hold, 1 refuted (1 known findings), 1 sensitive, 0 unpinned, 0 inconclusive, 1 errors"
        in flat(result.stdout)
    )


def test_sensitive_and_findings_alone_pass(tmp_path):
    """A run whose only non-holding claims are sensitive or reproduced findings exits 0."""
    result = run_pytest(tmp_path, "--no-report", "-k", "not errors")
    assert result.returncode == 0, result.stdout


def test_audit_json_schema(demo_run):
    """audit.json is valid JSON with the contract's keys and per-claim fields."""
    _, report_dir = demo_run
    audit = json.loads((report_dir / "audit.json").read_text())
    assert {"schema_version", "claims", "summary", "metadata"} <= set(audit)
    assert all(set(c) == CLAIM_KEYS for c in audit["claims"])
    assert {"versions", "platform", "data_digests", "cache", "wall_s"} <= set(audit["metadata"])
    assert {"claim_audit", "python"} <= set(audit["metadata"]["versions"])
    provenance = {"git", "command", "device", "requirements_lock_sha256"}
    assert provenance <= set(audit["metadata"])
    assert "--report-dir" in audit["metadata"]["command"]
    assert {f["file"] for f in audit["figures"]} == set()  # a demo document has no figures
    assert (report_dir / "audit.md").read_text().startswith("# Claims audit")
    assert "claim-d-2" in (report_dir / "audit.html").read_text(encoding="utf-8")


def test_all_passing_run_exits_zero(tmp_path):
    result = run_pytest(tmp_path, "-k", "holds or known_finding", "--no-report")
    assert result.returncode == 0, result.stdout
    assert not (tmp_path / "report").exists()


def test_table_fits_80_columns():
    long = "x" * 200
    record = ClaimRecord(
        id="unc-06-ens-tails",
        document="d",
        section=long,
        statement=long,
        published=long,
        measured=long,
        tolerance=long,
        verdict="refuted",
        details={},
    )
    assert all(len(line) <= 80 for line in render([record], {record.id: True}))


def test_audit_keeps_other_files_in_the_report_folder(tmp_path):
    """Writing the audit replaces its own files only (e.g. report/bench.json survives)."""
    report_dir = tmp_path / "out"
    report_dir.mkdir()
    (report_dir / "bench.json").write_text("{}")
    for _ in range(2):  # a claim in error would send it to out/partial/
        run_pytest(tmp_path, "--report-dir", "out", "--report-errors-as-complete")
    assert (report_dir / "bench.json").read_text() == "{}"
    assert (report_dir / "audit.json").exists()
    assert not [p for p in report_dir.iterdir() if p.name.startswith(".")]


def table_records() -> tuple[list[ClaimRecord], dict[str, bool]]:
    long_figure = ", ".join(f"0.{i}234567" for i in range(8))
    records = [
        ClaimRecord(
            "H-cal-relu-converged", "demo", "S", "a", "< 0.05", long_figure, "-", "holds", {}
        ),
        ClaimRecord("d-2", "demo", "S", "b", "2.0", "2.5", "± 0.1", "refuted", {}),
    ]
    return records, {"H-cal-relu-converged": True, "d-2": False}


def test_table_follows_the_terminal_width_and_cuts_no_figure():
    """The table fits the terminal's width by wrapping each cell in its column: ids whole,
    and every figure of a long cell whole on some line, never cut with "…"."""
    records, expected = table_records()
    for width in (80, 120):
        lines = render(records, expected, width=width)
        assert max(len(line) for line in lines) <= width
        assert any(line.startswith("H-cal-relu-converged ") for line in lines)
        assert "…" not in "\n".join(lines)
        shown = " ".join(lines).replace(",", " ").split()
        assert all(figure in shown for figure in records[0].measured.split(", "))
    assert "refuted*" in lines[-1]  # the finding's footnote, as there is a finding


def test_verbose_table_cuts_no_cell():
    records, expected = table_records()
    text = "\n".join(render(records, expected, width=80, verbosity=1))
    assert records[0].measured in text and "…" not in text


def test_quiet_tables():
    """-q lists only the claims that do not hold; -qq prints the summary line alone; a run
    without findings has no findings footnote."""
    records, expected = table_records()
    quiet = "\n".join(render(records, expected, verbosity=-1))
    assert "d-2" in quiet and "H-cal-relu-converged" not in quiet
    assert render(records, expected, verbosity=-2) == [
        "2 document claims: 1 hold, 1 refuted (1 known findings), 0 sensitive, 0 unpinned, 0 inconclusive, 0 errors"
    ]
    holding = render(records[:1], {"H-cal-relu-converged": True})
    assert not any(line.startswith("refuted*") for line in holding)


def test_markdown_names_the_documents_and_places_each_figure_by_its_claims():
    from claim_audit.render import markdown

    claim = {
        "id": "cal-02a",
        "document": "calibration",
        "section": "The forecaster's test, in code",
        "statement": "s",
        "published": "1.5",
        "measured": "1.8",
        "tolerance": "± 0.2",
        "verdict": "holds",
        "details": {},
        "expected_to_hold": True,
    }
    audit = {
        "claims": [claim],
        "summary": "1 claims: 1 hold",
        "metadata": {
            "versions": dict.fromkeys(("jax", "flax", "optax", "numpy", "python"), "1"),
            "platform": {"system": "x", "jax_backend": "cpu"},
            "cache": {"hits": 0, "computed": 0},
            "wall_s": 1.0,
            "created_unix": 0.0,
            "git": {"commit": "0123456789abcdef", "dirty": True},
            "documents": {
                "calibration": {
                    "title": "Calibrating a Bounded Net, in JAX/Flax NNX",
                    "kind": "blog post",
                    "url": "https://tahabouhsine.com/blog/calibration-of-a-bounded-net-jax-flax-nnx/",
                    "headings": ["The forecaster's test, in code"],
                }
            },
        },
        "figures": [
            {"file": "reliability_seed0.png", "caption": "Reliability.", "claims": ["cal-02a"]}
        ],
    }
    text = markdown.render(audit, ["reliability_seed0.png"])
    assert "https://tahabouhsine.com/blog/calibration-of-a-bounded-net-jax-flax-nnx/" in text
    assert "Commit 0123456789ab (uncommitted changes), 1970-01-01 00:00 UTC." in text
    row = next(
        line for line in text.splitlines() if line.startswith('| <a id="claim-cal-02a"></a>cal-02a')
    )
    assert "[reliability\\_seed0.png](#figure-reliability_seed0)" in row
    assert "#the-forecasters-test-in-code" in text
    # The figure sits right after its section's table, with its caption, not at the end.
    after_table = text.split(row, 1)[1]
    assert after_table.index('<a id="figure-reliability_seed0">') < 40
    assert "*Reliability.* Claims: [cal-02a](#claim-cal-02a)." in after_table
    assert "More figures" not in text


def test_documents_claims_and_suite_checks_are_counted_apart(tmp_path):
    """A suite check (origin="suite") is counted apart from the documents' claims, in the
    summary and in audit.json's counts, and each record says which it is."""
    (tmp_path / "test_origin.py").write_text(
        textwrap.dedent(
            """
            from claim_audit import Claims, satisfied

            CLAIMS = Claims("demo")

            @CLAIMS("o-1", "S", "a claim", published="1.0")
            def test_claim():
                return 1.0

            @CLAIMS("o-2", "Health", "a check", published="ok", origin="suite")
            def test_check():
                return satisfied(True, measured="ok")
            """
        )
    )
    result = subprocess.run(
        [*PLUGIN_PYTEST, "-q", "--report-dir", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout
    summary = "1 document claim: 1 hold, 0 refuted (0 known findings), 0 sensitive, 0 unpinned, 0 inconclusive, 0 errors; 1 suite check: 1 hold"
    assert summary in flat(result.stdout)
    audit = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert {c["id"]: c["origin"] for c in audit["claims"]} == {"o-1": "document", "o-2": "suite"}
    assert audit["counts"]["document"]["total"] == audit["counts"]["suite"]["holds"] == 1
