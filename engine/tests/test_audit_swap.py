"""The report moves in entry by entry, audit.json last (engine/claim_audit/report/audit.py
`_move_in`): Ctrl-C or `kill` between two of its renames waits until the report is whole;
after a SIGKILL there the next writer writes a whole report; and folders in the report folder
that the report did not make are left alone.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from claim_audit.engine.claim import ClaimRecord
from claim_audit.report import audit
from fault_tools import REPO_ROOT, TIMEOUT_S

pytestmark = pytest.mark.fault


def write(report_dir: Path, measured: str) -> list[Path]:
    """A report of one claim measured as `measured` (no documents: no experiment runs)."""
    record = ClaimRecord("d-1", "demo", "Demo", "a claim", "1.0", measured, "± 0.1", "holds", {})
    return audit.write_report(
        report_dir, records=[record], expected={}, cache_events=[], wall_s=0.0
    )


MEASURED = (
    "1.2345",
    "5.4321",
    "9.8765",
)  # the first report's, the interrupted writer's, the next's


def measured_in(report_dir: Path) -> set[str]:
    """The measured figures the report's files hold: one when the report is whole."""
    found = {json.loads((report_dir / "audit.json").read_text())["claims"][0]["measured"]}
    for name in ("audit.md", "audit.html"):
        found |= {value for value in MEASURED if value in (report_dir / name).read_text()}
    return found


# Writes the report anew (measured 5.4321) and sends this process SIGNAL right after the new
# audit.md is in, before audit.html and audit.json: the worst moment.
INTERRUPTED_WRITER = """
    import os, signal, sys
    from pathlib import Path
    from claim_audit.engine.claim import ClaimRecord
    from claim_audit.report import audit

    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal
    report_dir = Path(sys.argv[1]).resolve()
    number = getattr(signal, sys.argv[2])
    rename = os.replace

    def replace(source, target):  # test-only hook: the signal comes between two renames
        rename(source, target)
        if Path(target) == report_dir / "audit.md":
            os.kill(os.getpid(), number)

    os.replace = replace
    record = ClaimRecord("d-1", "demo", "Demo", "a claim", "1.0", "5.4321", "± 0.1", "holds", {})
    try:
        audit.write_report(report_dir, records=[record], expected={}, cache_events=[], wall_s=0.0)
    except KeyboardInterrupt:
        print("interrupted")
"""


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGKILL"])
def test_a_signal_in_the_swap_leaves_one_whole_report(tmp_path, name):
    """SIGINT (Ctrl-C), SIGTERM or SIGKILL right after the new audit.md moved in: SIGINT and
    SIGTERM wait until the report is whole and new (SIGINT then raises KeyboardInterrupt,
    SIGTERM ends the process); after a SIGKILL (audit.json still the old one) the next writer
    writes a whole report, and leaves nothing of the killed one. The user's file in the
    figures folder stays throughout (engine/claim_audit/report/audit.py `_move_in`,
    `_signals_held`, `write_report`)."""
    report_dir = tmp_path / "report"
    write(report_dir, "1.2345")
    (report_dir / "figures" / "notes.txt").write_text("the user's notes")
    child = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(INTERRUPTED_WRITER), report_dir, name],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip
    if name == "SIGINT":
        assert child.returncode == 0 and child.stdout == "interrupted\n", child.stderr
    else:
        assert child.returncode == -getattr(signal, name), child.stderr
    if name == "SIGKILL":  # killed mid-swap: whole again once the next writer has run
        write(report_dir, "9.8765")
        assert measured_in(report_dir) == {"9.8765"}
    else:
        assert measured_in(report_dir) == {"5.4321"}
    assert (report_dir / "figures" / "notes.txt").read_text() == "the user's notes"
    assert sorted(p.name for p in report_dir.iterdir()) == [
        "audit.html",
        "audit.json",
        "audit.md",
        "figures",
    ]


def test_a_staging_folder_of_the_user_is_left_alone(tmp_path):
    """A `.staging-*` or `.claims-report-*` folder that the user made in the report folder:
    kept, with its files, while the report is written. Bug fixed: every `.staging-*` folder
    was taken for a killed writer's and deleted (engine/claim_audit/report/audit.py
    `write_report`: only folders holding the report's own mark are removed)."""
    report_dir = tmp_path / "report"
    for name in (".staging-mine", ".claims-report-mine"):
        (report_dir / name).mkdir(parents=True)
        (report_dir / name / "draft.md").write_text("the user's draft")
    write(report_dir, "1.2345")
    for name in (".staging-mine", ".claims-report-mine"):
        assert (report_dir / name / "draft.md").read_text() == "the user's draft"
    assert measured_in(report_dir) == {"1.2345"}
