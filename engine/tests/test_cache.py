"""The trained-results cache: never serves a stale, foreign or half-written entry."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from claim_audit import cache

pytestmark = pytest.mark.fault


def compute_counter():
    calls = []

    def compute():
        calls.append(1)
        return {"x": np.arange(6.0).reshape(2, 3)}

    return compute, calls


def shape_check(arrays):
    if arrays["x"].shape != (2, 3):
        raise ValueError(f"x has shape {arrays['x'].shape}")


def test_second_call_is_a_hit(tmp_path):
    """The same key twice: the second call is a hit with the same arrays, computed once."""
    compute, calls = compute_counter()
    first = cache.cached("entry", {"a": 1}, compute, cache_dir=tmp_path)
    second = cache.cached("entry", {"a": 1}, compute, cache_dir=tmp_path)
    assert (first.status, second.status, len(calls)) == ("computed", "hit", 1)
    np.testing.assert_array_equal(first.arrays["x"], second.arrays["x"])


def test_other_key_is_other_entry(tmp_path):
    """Another key: another entry, computed."""
    compute, calls = compute_counter()
    cache.cached("entry", {"a": 1}, compute, cache_dir=tmp_path)
    assert cache.cached("entry", {"a": 2}, compute, cache_dir=tmp_path).status == "computed"
    assert len(calls) == 2


@pytest.mark.parametrize("keep", [0, 10, 200, -1])
def test_truncated_entry_is_recomputed(tmp_path, keep):
    """An entry truncated (to 0, 10 or 200 bytes, or one byte short): the read fails and the
    entry is recomputed."""
    compute, calls = compute_counter()
    path = cache.cached("entry", {"a": 1}, compute, cache_dir=tmp_path).path
    data = path.read_bytes()
    path.write_bytes(data[:keep] if keep >= 0 else data[:-1])
    again = cache.cached("entry", {"a": 1}, compute, cache_dir=tmp_path)
    assert again.status == "computed" and len(calls) == 2


def test_flipped_byte_fails_checksum(tmp_path):
    """One flipped byte in an entry's payload: its checksum fails and it is recomputed."""
    compute, _ = compute_counter()
    path = cache.cached("entry", {"a": 1}, compute, cache_dir=tmp_path).path
    raw = bytearray(path.read_bytes())
    # np.savez stores uncompressed: flip a byte inside the payload of "x" (not the zip headers).
    offset = raw.find(np.arange(6.0).reshape(2, 3).tobytes())
    raw[offset + 3] ^= 0xFF
    path.write_bytes(bytes(raw))
    assert cache.cached("entry", {"a": 1}, compute, cache_dir=tmp_path).status == "computed"


def test_entry_of_another_configuration_is_not_served(tmp_path):
    """The entry of another configuration copied into place: its embedded key differs, so it is
    recomputed, never served."""
    compute, _ = compute_counter()
    here = cache.cached("entry", {"a": 1}, compute, cache_dir=tmp_path).path
    other = cache.cached(
        "entry", {"a": 2}, lambda: {"x": np.zeros((2, 3))}, cache_dir=tmp_path
    ).path
    here.write_bytes(other.read_bytes())  # e.g. a copy from another version or recipe config
    result = cache.cached("entry", {"a": 1}, compute, cache_dir=tmp_path)
    assert result.status == "computed"
    np.testing.assert_array_equal(result.arrays["x"], np.arange(6.0).reshape(2, 3))


def test_wrong_shapes_are_recomputed(tmp_path):
    """An entry with the wrong array shapes: its validator fails and it is recomputed."""
    key = {"a": 1}
    cache.cached("entry", key, lambda: {"x": np.zeros(4)}, cache_dir=tmp_path)
    compute, _ = compute_counter()
    result = cache.cached("entry", key, compute, validate=shape_check, cache_dir=tmp_path)
    assert result.status == "computed" and result.arrays["x"].shape == (2, 3)


def test_unwritable_path_runs_uncached(tmp_path, monkeypatch):
    """A cache folder under a regular file: the computation runs uncached and says "running
    without a cache"."""
    said = []
    monkeypatch.setattr(cache, "progress_writer", said.append)
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    compute, calls = compute_counter()
    result = cache.cached("entry", {"a": 1}, compute, cache_dir=blocker / "cache")
    assert result.status == "uncached" and len(calls) == 1
    assert any("running without a cache" in line for line in said)


def test_racing_processes_compute_once(tmp_path):
    """Three processes racing for one entry: it is computed once, the other two hit."""
    script = textwrap.dedent(
        f"""
        import time, numpy as np
        from claim_audit import cache
        def compute():
            with open({str(tmp_path / "computed.log")!r}, "a") as log:
                log.write("x\\n")
            time.sleep(1.0)
            return {{"x": np.ones(3)}}
        print(cache.cached("race", {{"k": 1}}, compute, cache_dir={str(tmp_path)!r}).status)
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
        for _ in range(3)
    ]
    statuses = sorted(p.communicate(timeout=120)[0].strip() for p in procs)
    assert statuses == ["computed", "hit", "hit"]
    assert (tmp_path / "computed.log").read_text().count("x") == 1


def test_racing_threads_compute_once(tmp_path):
    """Three threads of one process racing for one entry (claims/running/ahead.py computes a
    document's experiments in threads while its tests ask for them): computed once."""
    compute, calls = compute_counter()

    def slow():
        time.sleep(0.5)
        return compute()

    with ThreadPoolExecutor(max_workers=3) as pool:
        entries = list(
            pool.map(lambda _: cache.cached("race", {"k": 1}, slow, cache_dir=tmp_path), range(3))
        )
    assert sorted(entry.status for entry in entries) == ["computed", "hit", "hit"]
    assert len(calls) == 1


def test_killed_writer_leaves_no_entry(tmp_path):
    """A process killed (SIGKILL) during the computation, its lock held: no entry is left, and
    the next call computes it."""
    script = textwrap.dedent(
        f"""
        import os, signal, numpy as np
        from claim_audit import cache
        def compute():
            os.kill(os.getpid(), signal.SIGKILL)  # dies mid-computation, lock held
        cache.cached("killed", {{"k": 1}}, compute, cache_dir={str(tmp_path)!r})
        """
    )
    assert subprocess.run([sys.executable, "-c", script]).returncode == -9
    compute, calls = compute_counter()
    result = cache.cached("killed", {"k": 1}, compute, cache_dir=tmp_path)
    assert result.status == "computed" and len(calls) == 1


def test_an_entry_locked_too_long_elsewhere_is_computed_uncached(tmp_path, monkeypatch):
    """Another process holding an entry's lock past the lock timeout (a hung run): the entry
    is computed here, not stored, and the run says why instead of waiting on."""
    from filelock import FileLock

    compute, calls = compute_counter()
    first = cache.cached("entry", {"a": 1}, compute, cache_dir=tmp_path)
    said = []
    monkeypatch.setattr(cache, "progress_writer", said.append)
    monkeypatch.setattr(cache, "lock_timeout_s", 0.1)
    with FileLock(str(first.path) + ".lock"):  # another holder: its own open file
        result = cache.cached("entry", {"a": 1}, compute, cache_dir=tmp_path)
    assert result.status == "uncached" and len(calls) == 2
    assert any(f"{first.path}.lock has been held by " in line for line in said), said
