"""The gate and the verdicts are properties of the claims, not of one float order: the
audit computed with 128-bit vectors (`uncertainty_claims.numerics.NARROW_VECTORS_FLAG`: every
program of the suite in another valid float order on this CPU, a stand-in for another
machine) passes and gives every claim the verdict the audit gives in the default order
(docs/VERDICTS.md, `make order-check`). It fails when any claim's verdict differs: no record
excuses a difference, since every verdict comes from the run's own orders."""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from claim_audit.engine.claim import PROPERTY
from fault_tools import REPO_ROOT, child_env, pytest_command

from uncertainty_claims.numerics import NARROW_VECTORS_FLAG

# A cold audit in the narrow order takes about 100 s alone on 2 cores and runs beside the
# other xdist worker: a harness limit, not a figure of the test.
AUDIT_TIMEOUT_S = 900


class VerdictsDiffer(AssertionError):
    """The two audits give some claim different verdicts."""


def _records(tmp_path: Path, name: str, **env: str) -> tuple[dict[str, dict], int, str]:
    """Every claim's record in an audit run in a child process with `env` (over the suite's
    own result cache: the default order's results are the ones the claims use), the run's
    exit status and the end of its output."""
    junit = tmp_path / f"{name}.xml"
    environment = child_env(**env)
    if "XLA_FLAGS" not in env:  # as a shell starts the audit: the suite adds its own flags
        environment.pop("XLA_FLAGS", None)
    environment.pop("CLAIMS_COMPILATION_CACHE_DIR", None)
    run = subprocess.run(
        pytest_command(
            "claims", "-n", "0", "-m", "claim or health", "--no-report", f"--junitxml={junit}"
        ),
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=AUDIT_TIMEOUT_S,
    )
    records = [
        json.loads(prop.get("value"))
        for prop in ElementTree.parse(junit).iter("property")
        if prop.get("name") == PROPERTY
    ]
    return {record["id"]: record for record in records}, run.returncode, run.stdout[-4000:]


@pytest.mark.slow  # a cold audit in each of two float orders
@pytest.mark.gate
@pytest.mark.xfail(
    raises=VerdictsDiffer,
    strict=False,
    reason="measured on a 2-core Intel Xeon (2026-12-04): with one machine's 8 calibration and "
    "22 uncertainty orders the verdicts of 7 claims differ under 128-bit vectors (cal-02a, "
    "cal-09f, cal-04b, cal-10d, unc-05a, unc-05b, unc-10-ens-gap: docs/VERDICTS.md, 'One "
    "machine's orders are not all the orders'); any other failure of this test fails the run",
)
def test_the_audit_passes_with_the_same_verdicts_in_another_float_order(tmp_path):
    default, status, output = _records(tmp_path, "default")
    assert status == 0, f"the default audit failed:\n{output}"
    narrow, narrow_status, narrow_output = _records(
        tmp_path, "narrow", XLA_FLAGS=NARROW_VECTORS_FLAG
    )
    assert len(default) > 50, sorted(default)  # every claim of both documents
    assert narrow.keys() == default.keys()
    changed = {
        i: (default[i]["verdict"], narrow[i]["verdict"])
        for i in default
        if narrow[i]["verdict"] != default[i]["verdict"]
    }
    if changed:
        raise VerdictsDiffer(f"verdicts (default order, narrow vectors) that differ: {changed}")
    assert narrow_status == 0, f"the narrow-vector audit failed:\n{narrow_output}"
