"""The starter (`python -m claim_audit new`) and the plugin's options on the command line:
a starter that cannot be written leaves nothing, an incomplete option is a usage error."""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest
from claim_audit.starter import write_starter
from fault_tools import (
    REPO_ROOT,
    TIMEOUT_S,
    child_env,
    run_audit_pytest,
    write_test_folder,
)

pytestmark = pytest.mark.fault

USAGE_ERROR = pytest.ExitCode.USAGE_ERROR  # 4


def test_report_dir_without_a_folder_is_a_usage_error(tmp_path):
    """`--report-dir` given last, without its folder: a usage error, exit 4, "expected one
    argument"."""
    folder = write_test_folder(tmp_path, "def test_nothing():\n    pass\n")
    result = run_audit_pytest(folder, "--report-dir")
    assert result.returncode == USAGE_ERROR
    assert "--report-dir: expected one argument" in result.stderr
    assert not (folder / "report").exists()


def run_new(*args: str) -> subprocess.CompletedProcess:
    """`python -m claim_audit new ARGS` in a child, from the repository root."""
    return subprocess.run(
        [sys.executable, "-m", "claim_audit", "new", *args],
        cwd=REPO_ROOT, env=child_env(), capture_output=True, text=True, timeout=TIMEOUT_S,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("name", "folder", "says"),
    [
        ("my_paper", "a-file/sub", "nothing written: [Errno 20] Not a directory"),
        ("a" * 300, "new", "File name too long"),
        ("conftest", "new", "names the starter's own conftest.py"),
        ("pytest", "new", "'pytest' is a name the starter's code uses already"),
        ("numpy", "new", "'numpy' is a name the starter's code uses already"),
        ("json", "new", "a module 'json' exists already"),
    ],
    ids=["folder-under-a-file", "name-too-long", "conftest", "pytest", "numpy", "json"],
)
def test_a_starter_that_cannot_be_written_is_one_line_and_nothing(tmp_path, name, folder, says):
    """`python -m claim_audit new NAME FOLDER` where FOLDER cannot be made, NAME is too long
    for a file name, names the starter's own conftest.py or a module the starter imports:
    exit 2, one line naming the problem, nothing written (not even the folder). Bugs fixed:
    an OSError was a traceback; `new conftest` wrote 3 of 4 files, exit 0; `new pytest` and
    `new numpy` wrote a starter that failed at collection (engine/claim_audit/__main__.py,
    engine/claim_audit/starter/__init__.py `starter_files`, `write_starter`)."""
    (tmp_path / "a-file").write_text("a file, not a folder")
    result = run_new(name, str(tmp_path / folder))
    assert result.returncode == 2, result.stdout + result.stderr
    assert says in result.stderr and result.stderr.count("\n") == 1, result.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["a-file"]


def test_a_starter_that_fails_halfway_leaves_nothing_and_can_be_written_again(
    tmp_path, monkeypatch
):
    """A failure after the first file is in place (here: the disk fills on the third): the
    OSError is raised, the files already in place are taken back, and the same command then
    writes the whole starter. Bug fixed: the files before the failure stayed, and the next
    run refused to overwrite them (engine/claim_audit/starter/__init__.py `write_starter`)."""
    real_open, created = Path.open, []

    def disk_fills_on_the_third(path: Path, mode: str = "r", *args, **kwargs):
        if mode == "x":  # a starter file created
            if len(created) == 2:
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
            created.append(path)
        return real_open(path, mode, *args, **kwargs)

    folder = tmp_path / "audit"
    folder.mkdir()
    monkeypatch.setattr(Path, "open", disk_fills_on_the_third)
    with pytest.raises(OSError, match="No space left"):
        write_starter("my_paper", folder)
    assert len(created) == 2 and list(folder.iterdir()) == []
    monkeypatch.setattr(Path, "open", real_open)
    assert sorted(p.name for p in write_starter("my_paper", folder)) == [
        "conftest.py", "my_paper.py", "pytest.ini", "test_my_paper.py"
    ]  # fmt: skip
