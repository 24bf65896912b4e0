"""Command-line faults: a mistyped or incomplete option is a usage error before anything runs."""

from __future__ import annotations

import pytest
from fault_tools import REPO_ROOT, run_audit_pytest, run_pytest, write_test_folder

pytestmark = pytest.mark.fault

USAGE_ERROR = pytest.ExitCode.USAGE_ERROR  # 4


def test_unknown_option_is_a_usage_error():
    """`pytest claims --no-such-option`: exit 4 naming the option; nothing is collected or run."""
    result = run_pytest(REPO_ROOT, "claims", "--no-such-option", "-k", "nothing")
    assert result.returncode == USAGE_ERROR
    assert "unrecognized arguments: --no-such-option" in result.stderr
    assert "passed" not in result.stdout and "[claims] computing" not in result.stderr


def test_report_dir_without_a_folder_is_a_usage_error(tmp_path):
    """`--report-dir` given last, without its folder: exit 4 naming the option."""
    folder = write_test_folder(tmp_path, "def test_nothing():\n    pass\n")
    result = run_audit_pytest(folder, "--report-dir")
    assert result.returncode == USAGE_ERROR
    assert "--report-dir: expected one argument" in result.stderr
    assert not (folder / "report").exists()
