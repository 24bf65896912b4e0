"""A warm audit runs in one process (claims/running/warm_audit.py, claims/conftest.py): the stamp a
complete run leaves, what cools it, and `-n auto` choosing no workers over a warm cache."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from claim_audit import cache
from fault_tools import REPO_ROOT, TIMEOUT_S, child_env, pytest_command
from running import warm_audit

AUDIT = {"args": ["claims"], "markexpr": "claim or health", "keyword": "", "seeds": None}
SUITE = {**AUDIT, "markexpr": ""}
# What conftest.py puts in the environment when a run starts (compile cache, GPU flags).
_SET_BY_THE_SUITE = ("CLAIMS_COMPILATION_CACHE_DIR", "XLA_FLAGS")
WORKERS = re.compile(r"^created: \d+/\d+ workers", re.MULTILINE)  # xdist's line


def test_a_complete_run_warms_the_same_selection_only(tmp_path):
    assert not warm_audit.is_warm(warm_audit.fingerprint(AUDIT), tmp_path)
    warm_audit.record_warm(AUDIT, warm_audit.fingerprint(AUDIT), tmp_path)
    assert warm_audit.is_warm(warm_audit.fingerprint(AUDIT), tmp_path)
    assert not warm_audit.is_warm(warm_audit.fingerprint(SUITE), tmp_path)
    assert not warm_audit.is_warm(
        warm_audit.fingerprint({**AUDIT, "seeds": (0, 1, 2, 3)}), tmp_path
    )


def test_a_failed_run_withdraws_its_own_stamp_only(tmp_path):
    warm_audit.record_warm(AUDIT, warm_audit.fingerprint(AUDIT), tmp_path)
    warm_audit.record_warm(SUITE, warm_audit.fingerprint(SUITE), tmp_path)
    warm_audit.forget_warm(SUITE, tmp_path)
    assert warm_audit.is_warm(warm_audit.fingerprint(AUDIT), tmp_path)
    assert not warm_audit.is_warm(warm_audit.fingerprint(SUITE), tmp_path)


def test_the_environment_that_reaches_jax_cools_the_cache(tmp_path, monkeypatch):
    warm_audit.record_warm(AUDIT, warm_audit.fingerprint(AUDIT), tmp_path)
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=true")
    assert not warm_audit.is_warm(warm_audit.fingerprint(AUDIT), tmp_path)


def test_an_edited_source_changes_the_fingerprint(tmp_path):
    """Code, fixtures and the stack pins are read whole: any edit is a new fingerprint."""
    for name in ("lib/a.py", "claims/test_b.py", "fixtures/t.json", "requirements.lock"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x = 1\n")
    before = warm_audit.fingerprint(AUDIT, tmp_path)
    assert warm_audit.fingerprint(AUDIT, tmp_path) == before
    for name in ("lib/a.py", "claims/test_b.py", "fixtures/t.json", "requirements.lock"):
        (tmp_path / name).write_text("x = 2\n")
        assert warm_audit.fingerprint(AUDIT, tmp_path) != before, name
        (tmp_path / name).write_text("x = 1\n")
    (tmp_path / "lib" / "new.py").write_text("")
    assert warm_audit.fingerprint(AUDIT, tmp_path) != before


def test_a_stamp_that_cannot_be_written_is_said_not_raised(tmp_path, monkeypatch):
    """The stamp's folder cannot be written (here below a regular file; a full disk alike): the
    stamp is skipped with one line saying so, and the run that ends is not disturbed. Bug
    fixed: the write, at the session's end after every claim ran, raised: a traceback, no
    claims table (claims/running/warm_audit.py `_write`)."""
    said: list[str] = []
    monkeypatch.setattr(cache, "progress_writer", said.append)
    (tmp_path / "blocker").write_text("a regular file")
    folder = tmp_path / "blocker" / "cache"
    warm_audit.record_warm(AUDIT, warm_audit.fingerprint(AUDIT), folder)
    warm_audit.forget_warm(AUDIT, folder)
    assert len(said) == 2 and all("cannot stamp the cache as warm" in line for line in said), said
    assert not warm_audit.is_warm(warm_audit.fingerprint(AUDIT), folder)


@pytest.mark.parametrize("text", ["", "{half", '["a list"]', '{"f": 3}'])
def test_a_damaged_stamp_is_cold_and_is_replaced(tmp_path, text):
    (tmp_path / warm_audit.STAMP_NAME).write_text(text)
    assert not warm_audit.is_warm(warm_audit.fingerprint(AUDIT), tmp_path)
    warm_audit.record_warm(AUDIT, warm_audit.fingerprint(AUDIT), tmp_path)
    assert warm_audit.is_warm(warm_audit.fingerprint(AUDIT), tmp_path)


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = child_env(CLAIMS_CACHE_DIR=str(tmp_path / "cache"))
    for name in _SET_BY_THE_SUITE:  # a shell's environment, before the suite's settings
        env.pop(name, None)
    return subprocess.run(
        pytest_command("-n", "auto", f"--report-dir={tmp_path / 'report'}", *args),
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


@pytest.mark.slow  # three pytest runs, each with two workers
def test_auto_workers_become_none_once_the_audit_completed(tmp_path):
    """The same `-n auto` audit twice over a fresh cache folder (one cheap claim, unc-08a):
    the first starts xdist's workers and stamps the folder, the second runs in one process.
    A run that is not an audit (not selected by the claim and health marks alone) neither
    stamps nor skips the workers: its other tests do their work every run."""
    suite = _run(tmp_path, "tests/test_warm_audit.py", "-k", "same_selection_only")
    assert suite.returncode == 0, suite.stdout[-3000:]
    assert not (tmp_path / "cache" / warm_audit.STAMP_NAME).exists()
    audit = ("claims/test_uncertainty.py", "-m", "claim or health", "-k", "defaulted_scalar")
    first = _run(tmp_path, *audit)
    assert first.returncode == 0, first.stdout[-3000:]
    assert WORKERS.search(first.stdout) and "one process" not in first.stdout, first.stdout[-3000:]
    second = _run(tmp_path, *audit)
    assert second.returncode == 0, second.stdout[-3000:]
    assert "the cache holds this run's results" in second.stdout, second.stdout[-3000:]
    assert not WORKERS.search(second.stdout), second.stdout[-3000:]


@pytest.mark.slow  # one pytest run of one cheap claim
def test_an_audit_whose_stamp_cannot_be_written_ends_with_its_table_and_report(tmp_path):
    """A whole audit (one cheap claim, unc-08a) over a cache folder whose stamp cannot be
    written (a folder stands in its place; a full disk alike): the session ends green, with
    the claims table, its (partial) report written and one line saying the stamp was
    skipped. Bug fixed: the stamp's write at the session's end raised after every claim ran,
    so the run ended in a traceback (claims/running/warm_audit.py `_write`)."""
    (tmp_path / "cache" / warm_audit.STAMP_NAME).mkdir(parents=True)
    run = _run(
        tmp_path,
        "-n",
        "0",
        "claims/test_uncertainty.py",
        "-m",
        "claim or health",
        "-k",
        "defaulted_scalar",
    )
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    assert "cannot stamp the cache as warm" in out, out[-3000:]
    assert "unc-08a" in run.stdout and "Traceback" not in out, out[-3000:]
    assert (tmp_path / "report" / "partial" / "audit.json").is_file()  # one claim: partial
