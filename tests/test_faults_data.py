"""Data faults beyond tests/test_data.py::TestBadData: a data folder that is a file or cannot be
read, and broken data met by a whole audit run (which must fail with the data error, not crash).
"""

from __future__ import annotations

import gzip
import shutil

import pytest
from claim_audit.report import audit
from fault_tools import (
    REPO_ROOT,
    child_env,
    permission_honouring_prefix,
    run_pytest,
    run_python,
)

from uncertainty_claims import data
from uncertainty_claims.data import DataError, load_mnist_test

pytestmark = pytest.mark.fault

MNIST_FIX = "git checkout -- fixtures/mnist"


def test_data_dir_that_is_a_file_is_a_data_error(tmp_path, monkeypatch):
    """CLAIMS_DATA_DIR naming a regular file: a DataError naming it, no fallback elsewhere."""
    not_a_folder = tmp_path / "data.tar"
    not_a_folder.write_bytes(b"an archive, not a folder")
    monkeypatch.setenv(data.ENV_VAR, str(not_a_folder))
    with pytest.raises(DataError, match="is not a directory") as info:
        load_mnist_test()
    assert str(not_a_folder) in str(info.value)
    assert MNIST_FIX in str(info.value)


LOAD_CHILD = """
    from uncertainty_claims import data
    try:
        data.load_mnist_test()
    except data.DataError as error:
        print("DataError:", error)
"""


@pytest.mark.parametrize(
    "unreadable",
    ["", "mnist", "mnist/t10k-labels-idx1-ubyte.gz"],
    ids=["data-dir", "dataset-folder", "file"],
)
def test_unreadable_data_is_a_data_error(tmp_path, unreadable):
    """A data folder, data set folder or file the user may not read (chmod 000): a DataError
    with the path, the OS error and the fix (as root the child runs under `setpriv` without
    CAP_DAC_OVERRIDE, or the test is skipped saying why). Bug fixed: it was a bare
    PermissionError from the folder search (lib/data.py `_load`)."""
    prefix = permission_honouring_prefix(tmp_path / "probe")
    root = tmp_path / "data"
    (root / "mnist").mkdir(parents=True)
    for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        shutil.copyfile(REPO_ROOT / "fixtures" / "mnist" / name, root / "mnist" / name)
    target = root / unreadable
    target.chmod(0o000)
    try:
        child = run_python(LOAD_CHILD, env=child_env(CLAIMS_DATA_DIR=str(root)), prefix=prefix)
    finally:
        target.chmod(0o755)
    assert child.returncode == 0, child.stderr
    assert child.stdout.startswith("DataError:")
    assert "Permission denied" in child.stdout
    assert str(root) in child.stdout
    assert MNIST_FIX in child.stdout


def test_broken_data_fails_the_audit_with_the_data_error_and_keeps_the_report(tmp_path):
    """A real `pytest claims` run whose data folder is empty: every selected claim is an ERROR
    naming the missing folder and the fix, "report not written: cannot build the report
    (DataError ...)", exit 1, the previous report and the cache untouched (this run names a
    file, so its audit goes to report/partial/). Bug fixed: the run crashed at the end with a
    raw traceback from writing the report, without the claims table or an error summary
    (engine/claim_audit/report/audit.py `write_report` turns any failure while building into ReportError)."""
    report_dir = tmp_path / "report"
    audit.write_report(report_dir, records=[], expected={}, cache_events=[], wall_s=0.0)

    def complete_report() -> dict[str, bytes]:
        files = (p for p in report_dir.rglob("*") if p.is_file() and "partial" not in p.parts)
        return {str(p.relative_to(report_dir)): p.read_bytes() for p in files}

    before = complete_report()
    empty = tmp_path / "data"
    empty.mkdir()
    env = child_env(CLAIMS_DATA_DIR=str(empty), CLAIMS_CACHE_DIR=str(tmp_path / "cache"))
    result = run_pytest(
        REPO_ROOT,
        "claims/test_calibration.py",
        "-k",
        "relu_ece",
        f"--report-dir={report_dir}",
        env=env,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert f"CLAIMS_DATA_DIR={empty} has no fashion-mnist/ subdirectory" in output
    assert "apt-get install dataset-fashion-mnist" in output
    assert "partial run (only part of the suite named: claims/test_calibration.py" in output
    assert "INTERNALERROR" not in output and "Traceback (most recent call last)" not in output
    assert complete_report() == before
    assert not list((tmp_path / "cache").glob("*.npz"))


def test_data_dir_in_a_symlink_loop_is_a_data_error(tmp_path, monkeypatch):
    """A CLAIMS_DATA_DIR in a symlink loop: a DataError naming the variable. Bug fixed: it was a
    RuntimeError ("Symlink loop") from `Path.resolve` (lib/data.py `_find_directory`)."""
    loop = tmp_path / "data"
    loop.symlink_to(tmp_path / "other")
    (tmp_path / "other").symlink_to(loop)
    monkeypatch.setenv(data.ENV_VAR, str(loop))
    with pytest.raises(DataError, match=r"cannot be resolved|is not a directory") as info:
        load_mnist_test()
    assert str(loop) in str(info.value)


def test_gzip_bomb_is_a_data_error_naming_the_file(tmp_path, monkeypatch):
    """A gzip bomb in the images' place: decompression stops one byte past the largest IDX file
    read, a DataError naming the file. Bug fixed: it was a MemoryError naming nothing
    (lib/data.py `_parse_idx`)."""
    folder = tmp_path / "mnist"
    folder.mkdir()
    shutil.copy(REPO_ROOT / "fixtures/mnist/t10k-labels-idx1-ubyte.gz", folder)
    bomb = folder / "t10k-images-idx3-ubyte.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as out:
        zeros = bytes(1 << 20)
        for _ in range(64):  # 64 MB decompressed, 64 KB on disk
            out.write(zeros)
    monkeypatch.setenv(data.ENV_VAR, str(tmp_path))
    with pytest.raises(DataError, match="decompresses to more than") as info:
        load_mnist_test()
    assert str(bomb) in str(info.value)
