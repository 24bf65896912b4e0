"""The accelerator runs' table of docs/GPU.md: `scripts/bench.py --device-table` builds it from
bench JSON records, and the page shows what the records under docs/runs/ give."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RUNS = sorted((REPO / "docs" / "runs").glob("*.json"))


def bench():
    spec = importlib.util.spec_from_file_location("bench", REPO / "scripts" / "bench.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_page_shows_the_table_its_records_give():
    """Editing a record without regenerating the table (or the reverse) fails here."""
    assert RUNS, "no records under docs/runs/"
    table = bench().device_table(RUNS)
    assert table in (REPO / "docs" / "GPU.md").read_text()


def test_a_row_from_bench_pys_own_audit_record(tmp_path):
    """bench.py's audit section joins its pytest arguments unquoted and adds its own
    switches: the row gives the command as a user types it, and both timings."""
    record = {
        "machine": {"backend": "gpu", "devices": 2, "device_kind": "H200", "cores": 16},
        "audit": {
            "command": "pytest claims -n auto -m claim or health -p no:cacheprovider "
            "-p no:benchmark -q, CLAIMS_CACHE_DIR (results and compiled programs) in a new "
            "temporary folder (cold), then again on what it stored (warm)",
            "cold_s": 61.4,
            "warm_s": 9.6,
        },
    }
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(record))
    row = bench().device_row(path)
    assert (
        row
        == '| 2 x H200, 16 host cores | `pytest claims -n auto -m "claim or health"` | 61 | 10 |'
    )


def test_a_row_from_device_bench_without_a_warm_run(tmp_path):
    """device_bench.sh's bench-gpu.json holds the audit under `parts` and runs it cold only."""
    audit = {"command": "pytest claims -n 8 -m claim or health", "cold_s": 30.2}
    machine = {"backend": "cpu", "cores": 2, "cpu": "AMD EPYC 7B13"}
    path = tmp_path / "bench-gpu.json"
    path.write_text(json.dumps({"machine": machine, "parts": {"audit": {"audit": audit}}}))
    row = bench().device_row(path)
    assert (
        row
        == '| 2-core CPU (AMD EPYC 7B13) | `pytest claims -n 8 -m "claim or health"` | 30 | not measured |'
    )


@pytest.mark.parametrize(
    "text", ["{", json.dumps({"machine": {"backend": "cpu", "cores": 2}}), json.dumps([1])]
)
def test_a_file_that_is_no_audit_record_is_named(tmp_path, text):
    path = tmp_path / "other.json"
    path.write_text(text)
    with pytest.raises(
        ValueError, match=r"other\.json: not a bench record with a machine and a cold audit"
    ):
        bench().device_row(path)
