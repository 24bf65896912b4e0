"""scripts/fetch_data.py against a local HTTP server on 127.0.0.1: good files, resumed and
retried transfers, a truncated file and a wrong file.

The server serves the MNIST test files the project ships (fixtures/mnist/), so these tests
need neither the internet nor Fashion-MNIST.
"""

from __future__ import annotations

import gzip
import http.server
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from fault_tools import child_env

from uncertainty_claims import data

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "fetch_data.py"
FIXTURES = REPO / "fixtures" / "mnist"
IMAGES = "t10k-images-idx3-ubyte.gz"
LABELS = "t10k-labels-idx1-ubyte.gz"
TIMEOUT_S = 60  # one run of the script, at most


@dataclass
class Route:
    """What the server sends for one path.

    body: the file's bytes. length: the Content-Length announced (default len(body)).
    drop_after: close the connection after this many bytes of the body, on the first
    `drops` requests. ranges: whether Range requests are honoured.
    """

    body: bytes
    length: int | None = None
    drop_after: int | None = None
    drops: int = 0
    ranges: bool = True
    trickle_s: float | None = None  # send one byte, then wait this long, and so on
    endless: bool = False  # send the body, then zeros until the client hangs up
    requests: list[str | None] = field(default_factory=list)  # the Range header of each


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        route = self.server.routes.get(self.path)  # type: ignore[attr-defined]
        if route is None:
            self.send_error(404)
            return
        asked = self.headers.get("Range")
        route.requests.append(asked)
        body, start = route.body, 0
        match = re.fullmatch(r"bytes=(\d+)-", asked or "")
        if match and route.ranges:
            start = int(match.group(1))
            if start >= len(body):
                self.send_error(416)
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        else:
            self.send_response(200)
        payload = body[start:]
        if not route.endless:
            self.send_header("Content-Length", str(route.length or len(payload)))
        self.end_headers()
        if route.drops > 0 and route.drop_after is not None:
            route.drops -= 1
            self.wfile.write(payload[: route.drop_after])
            self.close_connection = True
            return
        if route.endless:
            try:
                self.wfile.write(payload)
                while True:
                    self.wfile.write(bytes(1 << 16))
            except (BrokenPipeError, ConnectionResetError):  # the client gave up
                pass
            return
        if route.trickle_s is not None:
            try:
                for i in range(len(payload)):
                    self.wfile.write(payload[i : i + 1])
                    self.wfile.flush()
                    time.sleep(route.trickle_s)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up
                pass
            return
        self.wfile.write(payload)

    def log_message(self, *args) -> None:  # keep the test output clean
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, dict[str, Route]]]:
    """A threaded HTTP server on a free port of 127.0.0.1 serving `routes`; its base URL."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    httpd.routes = {}  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_port}", httpd.routes  # type: ignore[attr-defined]
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def serve_mnist(routes: dict[str, Route], **labels_route) -> bytes:
    """Serve the shipped MNIST test files; `labels_route` changes how the labels are served."""
    routes[f"/mnist/{IMAGES}"] = Route((FIXTURES / IMAGES).read_bytes())
    labels = (FIXTURES / LABELS).read_bytes()
    routes[f"/mnist/{LABELS}"] = Route(labels_route.pop("body", labels), **labels_route)
    return labels


def fetch(base_url: str, dest: Path, *args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, str(SCRIPT), "--dest", str(dest), "--base-url", base_url]
    command += ["--only", "mnist", "--backoff", "0", "--timeout", "10", *args]
    env = {k: v for k, v in child_env().items() if k not in (data.ENV_VAR, "CLAIMS_DATA_URL")}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=TIMEOUT_S, env=env, cwd=REPO
    )


def test_good_files_are_downloaded_verified_and_load(server, tmp_path, monkeypatch):
    base_url, routes = server
    serve_mnist(routes)
    result = fetch(base_url, tmp_path)
    assert result.returncode == 0, result.stderr
    for name in (IMAGES, LABELS):
        assert (tmp_path / "mnist" / name).read_bytes() == (FIXTURES / name).read_bytes()
    assert sorted(p.name for p in (tmp_path / "mnist").iterdir()) == [IMAGES, LABELS]
    assert "100%" in result.stderr  # progress
    monkeypatch.setenv(data.ENV_VAR, str(tmp_path))
    fetched = data.load_mnist_test()  # lib/data.py verifies it as it would any source
    assert fetched.source == str(tmp_path / "mnist")
    monkeypatch.delenv(data.ENV_VAR)
    np.testing.assert_array_equal(fetched.images, data.load_mnist_test().images)


def test_a_verified_file_already_there_is_kept(server, tmp_path):
    base_url, routes = server
    serve_mnist(routes)
    assert fetch(base_url, tmp_path).returncode == 0
    again = fetch(base_url, tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("already there, verified") == 2
    assert all(len(route.requests) == 1 for route in routes.values())


def test_a_partial_file_is_resumed_with_a_range_request(server, tmp_path):
    base_url, routes = server
    labels = serve_mnist(routes)
    part = tmp_path / "mnist" / f"{LABELS}.part"
    part.parent.mkdir()
    part.write_bytes(labels[:1000])
    result = fetch(base_url, tmp_path)
    assert result.returncode == 0, result.stderr
    assert routes[f"/mnist/{LABELS}"].requests == ["bytes=1000-"]
    assert (tmp_path / "mnist" / LABELS).read_bytes() == labels
    assert not part.exists()


def test_a_server_that_ignores_range_sends_the_whole_file_again(server, tmp_path):
    base_url, routes = server
    labels = serve_mnist(routes, ranges=False)
    part = tmp_path / "mnist" / f"{LABELS}.part"
    part.parent.mkdir()
    part.write_bytes(labels[:1000])
    result = fetch(base_url, tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "mnist" / LABELS).read_bytes() == labels


def test_a_dropped_connection_is_retried_and_resumed(server, tmp_path):
    base_url, routes = server
    labels = serve_mnist(routes, drop_after=2000, drops=1)
    result = fetch(base_url, tmp_path, "--retries", "2")
    assert result.returncode == 0, result.stderr
    assert routes[f"/mnist/{LABELS}"].requests == [None, "bytes=2000-"]
    assert (tmp_path / "mnist" / LABELS).read_bytes() == labels


@pytest.mark.fault
def test_a_connection_that_keeps_dropping_fails_and_keeps_the_part(server, tmp_path):
    """`scripts/fetch_data.py` against a connection that keeps dropping: exit 1 naming where it
    ended, after resuming once; the `.part` file is kept to resume later and never takes the
    final name."""
    base_url, routes = server
    serve_mnist(routes, drop_after=500, drops=10)
    result = fetch(base_url, tmp_path, "--retries", "1")
    assert result.returncode == 1
    assert routes[f"/mnist/{LABELS}"].requests == [None, "bytes=500-"]
    assert "ended at byte 1000" in result.stderr
    assert not (tmp_path / "mnist" / LABELS).exists()
    part = tmp_path / "mnist" / f"{LABELS}.part"
    assert f"kept {part} (1000 bytes) to resume" in result.stderr
    assert part.read_bytes() == (FIXTURES / LABELS).read_bytes()[:1000]


@pytest.mark.fault
def test_a_truncated_file_is_an_error_and_leaves_no_file(server, tmp_path):
    """The server consistently serves the first half of the labels file (with a matching
    length): exit 1 naming the file as not a complete gzip file; neither it nor a `.part` is
    left, and the other file is still fetched."""
    base_url, routes = server
    labels = (FIXTURES / LABELS).read_bytes()
    serve_mnist(routes, body=labels[: len(labels) // 2])
    result = fetch(base_url, tmp_path)
    assert result.returncode == 1
    assert f"mnist/{LABELS.removesuffix('.gz')}" in result.stderr
    assert "not a complete gzip file" in result.stderr
    assert not (tmp_path / "mnist" / LABELS).exists()
    assert not (tmp_path / "mnist" / f"{LABELS}.part").exists()
    assert (tmp_path / "mnist" / IMAGES).exists()  # the good file is still fetched


@pytest.mark.fault
def test_a_wrong_file_is_an_error_naming_the_digests(server, tmp_path):
    """The server serves other data under the file's name: exit 1 naming the expected digest;
    the wrong file never takes the final name and no `.part` is left."""
    base_url, routes = server
    serve_mnist(routes, body=gzip.compress(b"\x00\x00\x08\x01not the mnist labels"))
    result = fetch(base_url, tmp_path)
    assert result.returncode == 1
    expected = data.data_digests()[f"mnist/{LABELS.removesuffix('.gz')}"]
    assert expected in result.stderr
    assert "holds other data" in result.stderr
    assert not (tmp_path / "mnist" / LABELS).exists()
    assert not (tmp_path / "mnist" / f"{LABELS}.part").exists()


@pytest.mark.fault
def test_a_bad_file_under_the_final_name_is_replaced(server, tmp_path):
    """A bad (truncated) file already under the final name: the fetch says it is replacing it,
    and it is replaced once a download verifies."""
    base_url, routes = server
    labels = serve_mnist(routes)
    final = tmp_path / "mnist" / LABELS
    final.parent.mkdir()
    final.write_bytes(labels[:100])
    result = fetch(base_url, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "replacing it" in result.stdout
    assert final.read_bytes() == labels


@pytest.mark.fault
def test_a_missing_file_is_an_error(server, tmp_path):
    """A file missing on the server (404): exit 1 naming it; nothing is written under its name."""
    base_url, routes = server
    serve_mnist(routes)
    del routes[f"/mnist/{LABELS}"]
    result = fetch(base_url, tmp_path)
    assert result.returncode == 1
    assert "404" in result.stderr
    assert not (tmp_path / "mnist" / LABELS).exists()
    assert routes[f"/mnist/{IMAGES}"].requests == [None]


def test_the_digests_in_docs_data_md_are_the_ones_lib_data_checks():
    table = re.findall(r"^\| `([\w/-]+)` \| `([0-9a-f]{64})` \|$", (REPO / "docs" / "DATA.md").read_text(), flags=re.MULTILINE)  # fmt: skip
    assert dict(table) == data.data_digests()


def test_a_server_that_trickles_meets_the_deadline(server, tmp_path):
    """A server trickling one byte every 0.1 s: `--deadline` (default 1800 s) bounds each file,
    every retry included, and the fetch fails naming it in about the deadline. Bug fixed:
    `--timeout` is seconds without data, so it never timed out (scripts/fetch_data.py
    `download`, `fetch_file`)."""
    base_url, routes = server
    serve_mnist(routes, trickle_s=0.1)
    started = time.monotonic()
    result = fetch(base_url, tmp_path, "--deadline", "2")
    assert time.monotonic() - started < 20
    assert result.returncode == 1
    assert "at the deadline (--deadline 2 s for the file)" in result.stderr
    assert (tmp_path / "mnist" / IMAGES).is_file()  # the other file came whole
    assert not (tmp_path / "mnist" / LABELS).exists()


@pytest.mark.fault
def test_an_endless_response_or_a_gzip_bomb_is_refused_early(server, tmp_path):
    """A server that sends the labels' bytes and then zeros without end, or a gzip bomb in
    their place (a small file decompressing to 200 MB): exit 1 naming the file, within
    seconds, no `.part` left, and the other file still fetched. Bugs fixed: the endless
    response filled the disk (the .part kept), and the bomb was refused only after a minute
    of CPU (scripts/fetch_data.py `download`, `problem_with`, MAX_FILE_BYTES)."""
    base_url, routes = server
    labels = serve_mnist(routes, endless=True)
    result = fetch(base_url, tmp_path, "--retries", "2")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"the server sent more than {64 << 20} bytes" in result.stderr
    assert len(routes[f"/mnist/{LABELS}"].requests) == 1  # not asked again
    assert not (tmp_path / "mnist" / f"{LABELS}.part").exists()
    assert (tmp_path / "mnist" / IMAGES).exists()
    bomb = gzip.compress(labels + bytes(200 << 20), compresslevel=1)
    routes[f"/mnist/{LABELS}"] = Route(bomb)
    started = time.monotonic()
    result = fetch(base_url, tmp_path)
    assert result.returncode == 1 and "decompresses to more than" in result.stderr
    assert time.monotonic() - started < 30


@pytest.mark.fault
@pytest.mark.parametrize("url", ["http://[bad", "http://host:port/", "ftp://host/", "nohost"])
def test_a_base_url_that_is_no_url_is_a_usage_error(tmp_path, url):
    """`--base-url 'http://[bad'` (or a bad port, another scheme, no host): exit 2, one usage
    line naming it, nothing fetched. Bug fixed: a ValueError traceback
    (scripts/fetch_data.py `_url_problem`)."""
    result = fetch(url, tmp_path)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert f"--base-url {url!r}" in result.stderr
    assert not (tmp_path / "mnist").exists()
