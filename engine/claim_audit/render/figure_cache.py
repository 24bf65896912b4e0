"""Drawn figures kept on disk, keyed by a digest of their file name, their data and the code
that draws them (its package, or the file defining `draw` outside a package, the arguments a
`functools.partial` binds, this engine and matplotlib's version). An entry is KEY.png and
KEY.svg, each drawn aside and os.replace'd into place: whole, or absent and drawn again."""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np

from .. import cache
from ..cache import package_digest

_ENGINE = __name__.partition(".")[0]


def data_digest(data: Any) -> str:
    """sha256 of `data`: arrays, numbers, strings, None, and lists, tuples and str-keyed dicts
    of them (dict order counts). Raises TypeError naming the path of any other value."""
    digest = hashlib.sha256()
    _feed(digest, data, "data")
    return digest.hexdigest()


def _feed(digest: Any, value: Any, where: str) -> None:
    if isinstance(value, np.ma.MaskedArray):  # the mask hides points: it changes the drawing
        digest.update(b"M")
        _feed(digest, [np.ma.getdata(value), np.ma.getmaskarray(value)], where)
    elif isinstance(value, np.ndarray | np.generic):
        array = np.ascontiguousarray(value)
        if array.dtype.hasobject:
            raise TypeError(f"figure data {where} is an array of Python objects")
        digest.update(f"A{array.dtype.str}{array.shape}".encode() + array.tobytes())
    elif value is None or isinstance(value, bool | int | float):
        digest.update(f"{type(value).__name__}:{value!r};".encode())
    elif isinstance(value, str):
        digest.update(f"S{len(value.encode())}:".encode() + value.encode())
    elif isinstance(value, list | tuple):
        digest.update(f"L{len(value)}[".encode())
        for i, item in enumerate(value):
            _feed(digest, item, f"{where}[{i}]")
    elif isinstance(value, dict):
        digest.update(f"D{len(value)}{{".encode())
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"figure data {where} has the non-string key {key!r}")
            _feed(digest, key, where)
            _feed(digest, item, f"{where}[{key!r}]")
    else:
        raise TypeError(
            f"figure data {where} is a {type(value).__name__}; expected arrays, numbers, "
            "strings, None, or lists and dicts of them"
        )


@functools.cache
def _file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def figure_key(file: str, draw: Callable[[Any], Any], data: Any) -> str:
    """The cache key of figure `file` drawn by `draw` from `data`."""
    func, bound = draw, []
    while isinstance(func, functools.partial):  # its own __module__ is 'functools'
        bound.append([list(func.args), dict(func.keywords)])
        func = func.func
    module = getattr(func, "__module__", None)
    if not module:
        raise TypeError(f"cannot tell which code draws figure {file}: {draw!r} has no module")
    package = module.partition(".")[0]
    if hasattr(sys.modules.get(package), "__path__"):
        parts = [package_digest(package)]
    else:
        # Not a package: each conftest.py is module 'conftest', so the defining file is keyed.
        code = getattr(inspect.unwrap(func), "__code__", None)
        if code is None or not Path(code.co_filename).is_file():
            raise TypeError(
                f"cannot tell which code draws figure {file}: {draw!r} is defined outside a "
                "package and not by a function in a source file"
            )
        parts = [_file_digest(code.co_filename)]
    parts += [package_digest(_ENGINE), matplotlib.__version__]
    try:
        parts += [data_digest(bound)] if bound else []
    except TypeError as error:
        raise TypeError(
            f"cannot key figure {file}: its draw, a functools.partial, binds an argument that "
            f"is not figure data ({error})"
        ) from None
    code = hashlib.sha256("".join(parts).encode()).hexdigest()
    parts = {"file": file, "code": code, "data": data_digest(data)}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def figure_files(file: str) -> list[str]:
    """The files of figure `file` (a PNG): itself and its SVG twin."""
    return [file, str(Path(file).with_suffix(".svg"))]


def cached_figure(
    cache_dir: Path, file: str, draw: Callable[[Any], Any], data: Any, folder: Path
) -> Path:
    """Copy figure `file` (PNG and SVG) into `folder` from its cache entry, drawn with
    `canvas.save(draw(data), ...)` and stored first when there is none. Returns the PNG."""
    from .canvas import save

    key = figure_key(file, draw, data)
    entry = {name: Path(cache_dir, key + Path(name).suffix) for name in figure_files(file)}
    if not all(path.is_file() for path in entry.values()):
        with tempfile.TemporaryDirectory(prefix=".tmp-", dir=cache_dir) as staging:
            save(draw(data), Path(staging) / file)
            for name, path in entry.items():
                os.replace(Path(staging) / name, path)
    for name, path in entry.items():
        shutil.copyfile(path, folder / name)
    return folder / file


def writable(cache_dir: Path) -> bool:
    """Whether figures can be kept in `cache_dir` (created if absent); when not, says so."""
    try:
        Path(cache_dir).mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryDirectory(prefix=".tmp-", dir=cache_dir).cleanup()
    except OSError as error:
        cache.progress_writer(
            f"[claims] figure cache {cache_dir} is not writable ({error}); drawing the figures without it"
        )
        return False
    return True
