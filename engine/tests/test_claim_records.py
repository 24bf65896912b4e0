"""A claim's record kept per the project's digest of what its claims read
(`pytest_claims_audit_inputs`): judged once per digest, read from the cache after, judged again
when the digest, the claim or the engine changes; a benchmark claim (`gates=False`) judged
every run. Runs with the engine installed alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from claim_audit.engine.claim import PROPERTY, ClaimRefuted, ClaimSpec, run_claim
from claim_audit.engine.verdict import satisfied

SPEC = ClaimSpec("toy-01", "toy", "Results", "The toy figure is positive.", "positive")


@pytest.fixture
def cache_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("CLAIMS_CACHE_DIR", str(tmp_path))
    return tmp_path


def counting_body(calls: list[int], value: float = 1.0):
    def body():
        calls.append(1)
        return satisfied(value > 0, measured=f"{value:g}")

    return body


def judged(spec: ClaimSpec, body, inputs: str | None) -> tuple[str, dict]:
    properties: list = []
    record = run_claim(spec, body, {}, properties, inputs)
    ((name, text),) = properties
    assert name == PROPERTY
    assert json.loads(text) == record.to_json()  # the record the test acts on is the one kept
    return text, record.to_json()


def test_judged_once_per_digest_and_read_after(cache_dir):
    calls: list[int] = []
    first, record = judged(SPEC, counting_body(calls), "digest-a")
    again, _ = judged(SPEC, counting_body(calls), "digest-a")
    assert calls == [1]
    assert again == first
    assert record["verdict"] == "holds"


def test_another_digest_judges_again(cache_dir):
    calls: list[int] = []
    judged(SPEC, counting_body(calls, 1.0), "digest-a")
    with pytest.raises(ClaimRefuted):
        judged(SPEC, counting_body(calls, -1.0), "digest-b")
    assert calls == [1, 1]


def test_each_claim_has_its_own_record(cache_dir):
    calls: list[int] = []
    other = ClaimSpec("toy-02", "toy", "Results", "Another toy figure.", "positive")
    judged(SPEC, counting_body(calls), "digest-a")
    judged(other, counting_body(calls), "digest-a")
    assert calls == [1, 1]


def test_without_a_digest_every_run_judges(cache_dir):
    calls: list[int] = []
    judged(SPEC, counting_body(calls), None)
    judged(SPEC, counting_body(calls), None)
    assert calls == [1, 1]
    assert not list(cache_dir.iterdir())


def test_a_benchmark_claim_is_judged_every_run(cache_dir):
    calls: list[int] = []
    timing = ClaimSpec("toy-03", "toy", "Results", "Fast.", "fast", gates=False)
    judged(timing, counting_body(calls), "digest-a")
    judged(timing, counting_body(calls), "digest-a")
    assert calls == [1, 1]


@pytest.mark.fault
def test_a_damaged_record_is_judged_again(cache_dir):
    """A kept record cut short (a full disk, a killed writer) is never served: the claim is
    judged again and the same record kept in its place."""
    calls: list[int] = []
    first, _ = judged(SPEC, counting_body(calls), "digest-a")
    (entry,) = cache_dir.glob("record-toy-toy-01-*.npz")
    entry.write_bytes(entry.read_bytes()[:40])
    again, _ = judged(SPEC, counting_body(calls), "digest-a")
    assert calls == [1, 1]
    assert again == first


PROJECT = {
    "conftest.py": """
import os

def pytest_claims_audit_inputs(config):
    return os.environ.get("TOY_INPUTS") or None
""",
    "test_toy.py": """
from pathlib import Path
from claim_audit import Claims, satisfied

CLAIMS = Claims("toy")


@CLAIMS("toy-01", "Results", "The toy figure is positive.", published="positive")
def test_positive():
    with Path("calls.txt").open("a") as calls:
        calls.write("judged\\n")
    return satisfied(True, measured="1")
""",
}


def test_a_run_reads_the_records_a_run_with_the_same_digest_kept(tmp_path):
    """Through the plugin, with xdist workers: the hook's digest (the controller's, handed to
    the workers) keys the records, so a second run with the same digest judges nothing and a
    third with another judges again."""
    pytest.importorskip("xdist")
    workers = ["-n", "2"]
    for name, text in PROJECT.items():
        (tmp_path / name).write_text(text)

    def run(inputs: str) -> None:
        env = {"TOY_INPUTS": inputs, "CLAIMS_CACHE_DIR": str(tmp_path / "cache"), "PATH": ""}
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr

    calls = tmp_path / "calls.txt"
    run("digest-a")
    run("digest-a")
    assert calls.read_text().splitlines() == ["judged"]
    run("digest-b")
    assert calls.read_text().splitlines() == ["judged", "judged"]
    audit = json.loads(Path(tmp_path / "report" / "audit.json").read_text())
    assert [c["verdict"] for c in audit["claims"]] == ["holds"]
