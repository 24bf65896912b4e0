"""The report's swap (engine/claim_audit/report/audit.py `_swap_in`) is all or nothing under any
interruption: Ctrl-C, `kill`, SIGKILL between two of its renames never leaves a report that
is half old, half new, nor loses an entry; and the report folder's `.staging-*` folders that
the report did not make are left alone.
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


# Writes the report anew (measured 5.4321) and sends this process SIGNAL right after the old
# figures folder was moved aside, before the new one is in: the worst moment.
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
        if Path(source) == report_dir / "figures":
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
    """SIGINT (Ctrl-C), SIGTERM or SIGKILL right after the old report/figures was moved aside:
    the report is whole, old or new, with the user's file in its figures folder. SIGINT and
    SIGTERM wait until the swap is done (SIGINT then raises KeyboardInterrupt, SIGTERM ends
    the process); after a SIGKILL the next writer puts the previous report back before it
    writes its own. Bug fixed: the KeyboardInterrupt went to `write_report`'s `finally`,
    which deleted the staging folder with the old figures in it: report/figures was gone,
    old and new, while audit.json stayed old (engine/claim_audit/report/audit.py `_swap_in`,
    `_signals_held`, `_roll_back`, `_recover`)."""
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
    """A `.staging-*` folder that the user made in the report folder: kept, with its files,
    while the report is written. Bug fixed: every `.staging-*` folder was taken for a killed
    writer's and deleted (engine/claim_audit/report/audit.py `_recover`: only folders holding the report's
    own mark are removed)."""
    report_dir = tmp_path / "report"
    mine = report_dir / ".staging-mine"
    mine.mkdir(parents=True)
    (mine / "draft.md").write_text("the user's draft")
    write(report_dir, "1.2345")
    assert (mine / "draft.md").read_text() == "the user's draft"
    assert measured_in(report_dir) == {"1.2345"}
