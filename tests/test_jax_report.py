"""This suite's word on JAX in the report (claims/jax_report.py, the hook
`pytest_claims_audit_environment`): JAX settings from the environment that change no figure
leave the audit complete, and those that can change one make it partial, naming them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from fault_tools import REPO_ROOT, TIMEOUT_S, write_test_folder
from test_plugin_faults import audit_run, snapshot

pytestmark = pytest.mark.fault


JAX_MODULE = """
    import jax.numpy as jnp
    from claim_audit import Claims

    CLAIMS = Claims("demo")

    @CLAIMS("c-1", "Demo", "a claim", published="3.0")
    def test_sum():
        return float(jnp.ones(3).sum())
"""


def jax_audit_run(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """`audit_run` of a project whose tests use JAX, with this suite's word on JAX in the
    report (claims/jax_report.py, the hook `pytest_claims_audit_environment`)."""
    claims = str(REPO_ROOT / "claims")
    return audit_run(folder, "-p", "running.jax_report", *args, PYTHONPATH=claims, **env)


def test_jax_tracebacks_from_the_environment_leave_the_audit_complete(tmp_path):
    """JAX_TRACEBACK_FILTERING=off changes how errors are shown, never a number: the run is
    complete and records no JAX setting. Bug fixed: every such run was partial, and the
    option in the cache key recomputed everything (lib/jax_facts.py
    `_NEUTRAL_JAX_OPTIONS`)."""
    folder = write_test_folder(tmp_path / "project", JAX_MODULE)
    result = jax_audit_run(
        folder, "--report-dir", "out", JAX_PLATFORMS="cpu", JAX_TRACEBACK_FILTERING="off"
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "partial run" not in result.stdout
    written = json.loads((folder / "out" / "audit.json").read_text())
    assert written["metadata"]["jax_environment"] == {}


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_jax_defaults_spelled_out_in_the_environment_leave_the_audit_complete(tmp_path, workers):
    """JAX_ENABLE_X64=0 and JAX_DEBUG_NANS=false, JAX's defaults spelled out, cannot change a
    figure: the run is complete and records no JAX setting, while JAX_DEFAULT_MATMUL_PRECISION
    beside them is still named. Bug fixed: any JAX_* option that can change a number made
    every run partial, whatever its value (lib/jax_facts.py
    `beyond_jax_defaults`)."""
    folder = write_test_folder(tmp_path / "project", JAX_MODULE)
    defaults = {"JAX_PLATFORMS": "cpu", "JAX_ENABLE_X64": "0", "JAX_DEBUG_NANS": "false"}
    result = jax_audit_run(folder, "--report-dir", "out", *workers, **defaults)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "partial run" not in result.stdout
    written = json.loads((folder / "out" / "audit.json").read_text())
    assert written["metadata"]["jax_environment"] == {}
    result = jax_audit_run(
        folder, "--report-dir", "out", *workers, **defaults, JAX_DEFAULT_MATMUL_PRECISION="highest"
    )
    assert "partial run (JAX set from the environment: JAX_DEFAULT_MATMUL_PRECISION (" in (
        result.stdout
    ), result.stdout
    written = json.loads((folder / "out" / "partial" / "audit.json").read_text())
    assert written["metadata"]["jax_environment"] == {"jax_default_matmul_precision": "highest"}


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one-process", "xdist"])
def test_jax_settings_from_the_environment_never_become_the_complete_report(tmp_path, workers):
    """JAX_ENABLE_X64=1 and JAX_DEFAULT_MATMUL_PRECISION (they change the documents'
    figures): the run is partial, saying which settings, its audit.json records them
    (metadata `jax_environment`) and the complete audit is kept byte for byte; settings that
    change no number (where compiled programs are kept, the platform) are not recorded. Bug
    fixed: an x64 run replaced report/audit.json, and neither its metadata nor the diff named
    x64 (lib/jax_facts.py `jax_environment`, claims/jax_report.py, engine/claim_audit/report/plugin.py
    `_partial_reasons`)."""
    folder = write_test_folder(tmp_path / "project", JAX_MODULE)
    complete = jax_audit_run(folder, "--report-dir", "out", *workers, JAX_PLATFORMS="cpu")
    assert complete.returncode == 0, complete.stdout + complete.stderr
    assert (
        json.loads((folder / "out" / "audit.json").read_text())["metadata"]["jax_environment"] == {}
    )
    kept = snapshot(folder / "out")
    x64 = {"JAX_ENABLE_X64": "1", "JAX_DEFAULT_MATMUL_PRECISION": "highest"}
    neutral = {"JAX_PLATFORMS": "cpu", "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "jit")}
    result = jax_audit_run(folder, "--report-dir", "out", *workers, **x64, **neutral)
    assert result.returncode == 0, result.stdout + result.stderr
    says = "JAX set from the environment: JAX_DEFAULT_MATMUL_PRECISION (jax_default_matmul_precision='highest'), JAX_ENABLE_X64 (jax_enable_x64=True)"
    assert f"partial run ({says}" in result.stdout, result.stdout
    assert {
        k: v for k, v in snapshot(folder / "out").items() if not k.startswith("partial/")
    } == kept
    written = json.loads((folder / "out" / "partial" / "audit.json").read_text())
    assert written["partial"][0].startswith(says)
    assert written["metadata"]["jax_environment"] == {
        "jax_default_matmul_precision": "highest",
        "jax_enable_x64": True,
    }
    diff = subprocess.run(
        [
            sys.executable,
            "-m",
            "claim_audit",
            "diff",
            "out/audit.json",
            "out/partial/audit.json",
        ],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert "jax_environment.jax_enable_x64: (absent) -> true" in diff.stdout, diff.stdout
