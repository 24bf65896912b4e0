"""Download the original IDX files of Fashion-MNIST and the MNIST test set, verified.

    python scripts/fetch_data.py [--dest DIR] [--base-url URL] [--only DATASET]

Needs no root. The files go to `DIR/fashion-mnist/` and `DIR/mnist/`, where DIR is `--dest`,
else `$CLAIMS_DATA_DIR`, else the per-user folder lib/data.py searches last
(`~/.cache/uncertainty-claims/data`, under `$XDG_CACHE_HOME` when that is set).

Sources: Zalando's Fashion-MNIST bucket and Yann LeCun's MNIST page (with the copy PyTorch's
torchvision downloads as a fallback). `--base-url URL` (or `$CLAIMS_DATA_URL`) replaces them
with one server laid out like the destination: `URL/fashion-mnist/<file>.gz`,
`URL/mnist/<file>.gz`.

Every file is checked against the sha256 of its decompressed bytes that lib/data.py holds,
the same check the suite makes when it loads the data. A file is written as `<name>.part`,
verified, then renamed, so the final name only ever holds a verified file. An interrupted
download is resumed from its `.part` (HTTP Range) on the next attempt or the next run; a
network error is retried (`--retries`, with a growing pause); a file that downloads
completely but fails the check is deleted, and a resumed one is downloaded once more from the
start before the next source is tried. Exit status 0 when every file is in place, 1 if not.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import http.client
import math
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path

from uncertainty_claims import data

SOURCES: dict[str, tuple[str, ...]] = {
    data.FASHION: ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",),
    data.MNIST: (
        "https://yann.lecun.com/exdb/mnist/",
        "https://ossci-datasets.s3.amazonaws.com/mnist/",
    ),
}
BASE_URL_ENV = "CLAIMS_DATA_URL"
CHUNK = 1 << 16
# No file of either data set is near this, compressed or not (the largest decompresses to
# 47,040,016 bytes): a server sending more, or a file decompressing to more, is not serving it.
MAX_FILE_BYTES = 64 << 20
# HTTP statuses worth another attempt at the same URL; any other error status is final for it.
TRANSIENT_STATUS = {408, 425, 429, 500, 502, 503, 504}


class FetchError(RuntimeError):
    """A file could not be downloaded and verified from any source."""


class BadFile(Exception):
    """A complete download whose contents fail the check."""


class TooLarge(OSError):
    """A response longer than any file of the data sets (MAX_FILE_BYTES)."""


def files(datasets: Iterable[str]) -> list[str]:
    """The files to fetch, `"<dataset>/<file>"` as lib/data.py names them, for `datasets`."""
    wanted = set(datasets)
    return [key for key in data.data_digests() if key.split("/")[0] in wanted]


def problem_with(path: Path, key: str) -> str | None:
    """Why `path` is not the file `key`, or None when its decompressed sha256 matches."""
    digest = hashlib.sha256()
    try:
        with gzip.open(path, "rb") as stream:
            size = 0
            while chunk := stream.read(CHUNK):
                digest.update(chunk)
                size += len(chunk)
                if size > MAX_FILE_BYTES:  # a gzip bomb: stop before it costs a minute of CPU
                    return f"it decompresses to more than {MAX_FILE_BYTES} bytes: not {key}"
    except (OSError, EOFError, zlib.error) as error:
        return f"it is not a complete gzip file, e.g. truncated ({error})"
    expected = data.data_digests()[key]
    if digest.hexdigest() != expected:
        return (
            f"the sha256 of its decompressed bytes is {digest.hexdigest()}, expected {expected} "
            f"for {key}: it holds other data"
        )
    return None


# --------------------------------------------------------------------------- progress


class Progress:
    """Progress of one file on stderr: one rewritten line on a terminal, else every 25%."""

    def __init__(self, name: str, stream=sys.stderr):
        self.name, self.stream = name, stream
        self.tty = stream.isatty()
        self.last_quarter = -1

    def __call__(self, done: int, total: int | None) -> None:
        size = f"{done / 1e6:.1f} MB" + ("" if total is None else f" of {total / 1e6:.1f} MB")
        if self.tty:
            percent = "" if not total else f" ({100 * done // total}%)"
            self.stream.write(f"\r  {self.name}: {size}{percent}\x1b[K")
        elif total and total >= 1_000_000:  # small files: the "downloaded" line says enough
            quarter = 4 * done // total
            if quarter > self.last_quarter:
                self.last_quarter = quarter
                self.stream.write(f"  {self.name}: {size} ({25 * quarter}%)\n")
        self.stream.flush()

    def end(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


# --------------------------------------------------------------------------- download


def _content_range_start(header: str | None) -> int | None:
    match = re.fullmatch(r"bytes (\d+)-\d+/(\d+|\*)", (header or "").strip())
    return int(match.group(1)) if match else None


class DeadlineExceeded(TimeoutError):
    """A file's transfer ran past its total deadline (--deadline)."""


def download(
    url: str,
    part: Path,
    *,
    timeout: float,
    progress: Callable[[int, int | None], None],
    deadline: float = math.inf,
) -> bool:
    """Fetch `url` into `part`, continuing an existing `part` with an HTTP Range request.

    `timeout`: seconds without data; `deadline`: the `time.monotonic()` by which the
    transfer must be done, however steadily data trickles in.

    Returns whether the download resumed earlier bytes. Raises OSError (URLError, timeouts,
    DeadlineExceeded), http.client.HTTPException or ConnectionError when the transfer fails
    or ends short; what arrived stays in `part` for the next attempt.
    """
    have = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={have}-"} if have else {}
    request = urllib.request.Request(url, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        if error.code == 416 and have:  # nothing after `have`: the part is whole, or too long
            error.close()
            return True
        raise
    with response:
        resumed = have > 0 and response.status == 206
        if resumed and _content_range_start(response.headers.get("Content-Range")) != have:
            raise http.client.HTTPException(
                f"asked for bytes from {have}, the server answered "
                f"Content-Range {response.headers.get('Content-Range')!r}"
            )
        if not resumed:
            have = 0  # the server sent the whole file (it ignores Range): start over
        length = response.headers.get("Content-Length")
        expected = None if length is None else have + int(length)
        if expected is not None and expected > MAX_FILE_BYTES:
            raise TooLarge(f"the server announces {expected} bytes, more than any data file")
        done = have
        with open(part, "ab" if resumed else "wb") as out:
            progress(done, expected)
            while chunk := response.read1(CHUNK):  # what has arrived, not a full chunk
                out.write(chunk)
                done += len(chunk)
                progress(done, expected)
                if done > MAX_FILE_BYTES:  # an endless response would fill the disk
                    raise TooLarge(f"the server sent more than {MAX_FILE_BYTES} bytes")
                if time.monotonic() > deadline:
                    raise DeadlineExceeded(f"still transferring at byte {done} at the deadline")
    if expected is not None and done != expected:
        raise ConnectionError(f"the transfer ended at byte {done} of {expected}")
    return resumed


def _is_final(error: Exception) -> bool:
    """An HTTP error status, or a response too long, that another attempt at the same URL
    would get again."""
    if isinstance(error, TooLarge):
        return True
    return isinstance(error, urllib.error.HTTPError) and error.code not in TRANSIENT_STATUS


def fetch_file(
    key: str,
    dest: Path,
    bases: Iterable[str],
    *,
    retries: int = 3,
    timeout: float = 60.0,
    deadline: float = 1800.0,
    backoff: float = 2.0,
    log: Callable[[str], None] = print,
) -> Path:
    """Put the verified file `key` ("<dataset>/<file>") at `dest/<dataset>/<file>.gz`.

    `timeout`: seconds without data before a retry; `deadline`: seconds for the whole file,
    every source and retry included.

    A verified file already there is kept; one that fails the check is replaced once a
    download verifies. Raises FetchError naming every source's problem; the final name then
    holds no file of this run.
    """
    dataset, name = key.split("/")
    final = dest / dataset / f"{name}.gz"
    part = final.with_name(final.name + ".part")
    if final.exists():
        problem = problem_with(final, key)
        if problem is None:
            log(f"{final}: already there, verified")
            return final
        log(f"{final}: replacing it, {problem}")
    final.parent.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    ends = time.monotonic() + deadline
    for base in bases:
        url = f"{base.rstrip('/')}/{name}.gz"
        if time.monotonic() >= ends:
            errors.append(f"{url}: not tried, the file's --deadline of {deadline:g} s had passed")
            continue
        attempt = 0
        while attempt <= retries and time.monotonic() < ends:
            attempt += 1
            log(f"{final}: downloading {url}" + (f" (attempt {attempt})" if attempt > 1 else ""))
            progress = Progress(f"{key}.gz")
            try:
                resumed = download(url, part, timeout=timeout, progress=progress, deadline=ends)
            except (OSError, http.client.HTTPException) as error:
                progress.end()
                if isinstance(error, TooLarge):
                    part.unlink(missing_ok=True)  # no file's start: nothing to resume
                if isinstance(error, DeadlineExceeded):
                    error = DeadlineExceeded(f"{error} (--deadline {deadline:g} s for the file)")
                if _is_final(error) or attempt > retries or time.monotonic() >= ends:
                    errors.append(f"{url}: {error} (attempt {attempt} of {retries + 1})")
                    break
                time.sleep(backoff * attempt)
                continue
            progress.end()
            problem = problem_with(part, key)
            if problem is None:
                os.replace(part, final)
                log(f"{final}: downloaded and verified")
                return final
            part.unlink()
            errors.append(f"{url}: downloaded, but {problem}")
            if not resumed:
                break  # the server serves this file: asking again gets the same bytes
    kept = f"; kept {part} ({part.stat().st_size} bytes) to resume" if part.exists() else ""
    if final.exists():  # the file that failed the check above, left as it was
        kept += f"; {final} still holds the earlier file, which fails the check"
    raise FetchError(f"{key}: no verified copy could be downloaded: {'; '.join(errors)}{kept}")


def sources(base_url: str | None) -> dict[str, tuple[str, ...]]:
    """Per dataset, the base URLs to try in order; one server for all when `base_url` is set."""
    if base_url:
        return {dataset: (f"{base_url.rstrip('/')}/{dataset}/",) for dataset in SOURCES}
    return SOURCES


def fetch(
    dest: Path,
    datasets: Iterable[str] = tuple(SOURCES),
    *,
    base_url: str | None = None,
    **options,
) -> list[Path]:
    """Fetch every file of `datasets` into `dest`; `options` go to `fetch_file`.

    Raises FetchError after trying every file, naming each that failed.
    """
    urls = sources(base_url)
    written, failures = [], []
    for key in files(datasets):
        try:
            written.append(fetch_file(key, dest, urls[key.split("/")[0]], **options))
        except FetchError as error:
            failures.append(str(error))
    if failures:
        raise FetchError("\n".join(failures))
    return written


def _url_problem(url: str) -> str | None:
    """Why `url` cannot be a base URL to download from, or None."""
    try:
        parts = urllib.parse.urlsplit(url)
        parts.port  # noqa: B018 (raises ValueError for a port that is no number)
    except ValueError as error:
        return str(error)
    if parts.scheme not in ("http", "https", "file") or (
        parts.scheme != "file" and not parts.netloc
    ):
        return "expected an http://, https:// or file:// URL"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--dest",
        type=Path,
        default=None,
        help=f"folder to fill (default: ${data.ENV_VAR}, else {data.user_data_dir()})",
    )
    parser.add_argument(
        "--base-url",
        default=os.environ.get(BASE_URL_ENV) or None,
        help=f"one server holding fashion-mnist/ and mnist/ instead of the original sources "
        f"(default: ${BASE_URL_ENV})",
    )
    parser.add_argument(
        "--only",
        choices=tuple(SOURCES),
        action="append",
        help="fetch only this data set (repeatable; default: both)",
    )
    parser.add_argument("--retries", type=int, default=3, help="retries per source (default 3)")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds without data before a retry"
    )
    parser.add_argument(
        "--deadline",
        type=float,
        default=1800.0,
        help="seconds for each whole file, every retry included (default 1800)",
    )
    parser.add_argument(
        "--backoff", type=float, default=2.0, help="pause before retry n is n times this"
    )
    args = parser.parse_args(argv)
    if args.base_url is not None:
        problem = _url_problem(args.base_url)
        if problem:
            parser.error(f"--base-url {args.base_url!r}: {problem}")
    if args.retries < 0 or args.timeout <= 0 or args.deadline <= 0 or args.backoff < 0:
        parser.error("--retries and --backoff must be >= 0, --timeout and --deadline > 0")
    dest = args.dest or Path(os.environ.get(data.ENV_VAR) or data.user_data_dir())
    try:
        fetch(
            dest.expanduser(),
            args.only or tuple(SOURCES),
            base_url=args.base_url,
            retries=args.retries,
            timeout=args.timeout,
            deadline=args.deadline,
            backoff=args.backoff,
        )
    except FetchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except OSError as error:  # e.g. the destination cannot be created or written
        print(f"error: cannot write to {dest}: {error}", file=sys.stderr)
        return 1
    print(f"data ready in {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
