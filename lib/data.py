"""Verified loading of Fashion-MNIST (in-distribution) and the MNIST test set (out-of-distribution).

Each dataset is looked for in these places, in order:

1. ``$CLAIMS_DATA_DIR/<dataset>/`` when ``CLAIMS_DATA_DIR`` is set (and not empty). It is then
   authoritative: if it lacks a file or holds a bad one, loading fails rather than falling back.
2. ``<repo>/fixtures/<dataset>/`` (the project ships ``fixtures/mnist/``).
3. ``/usr/share/datasets/<dataset>/`` (Debian's ``dataset-fashion-mnist`` package).
4. ``user_data_dir()/<dataset>/``, where ``scripts/fetch_data.py`` downloads the original files
   when ``CLAIMS_DATA_DIR`` is unset: ``$XDG_CACHE_HOME/uncertainty-claims/data`` (by default
   ``~/.cache/uncertainty-claims/data``).

A directory *has* a split when it holds both of the split's IDX ``.gz`` files; one holding only
one of them is an error, as is any file whose decompressed bytes do not match the published
sha256. tensorflow-datasets is deliberately not a source: it stores examples in its own shuffled
order, so its arrays can neither be checked against the IDX digests nor indexed by the split
recipe.

Arrays are memoised per process, keyed on the directory they came from, and are read-only.
Files are assumed not to change while a process runs.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import math
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

__all__ = [
    "DataError",
    "ImageSet",
    "data_digests",
    "fashion_split",
    "load_fashion_mnist",
    "load_mnist_test",
    "to_float",
    "user_data_dir",
]

ENV_VAR = "CLAIMS_DATA_DIR"
_FIXTURES_DIR = Path(__file__).resolve().parents[1] / "fixtures"
_SYSTEM_DIR = Path("/usr/share/datasets")

FASHION = "fashion-mnist"
MNIST = "mnist"
N_CLASSES = 10
IMAGE_SIDE = 28
N_TRAIN = 55_000
# The decompressed size of the largest file read: the 60,000 training images and their header.
_LARGEST_IDX = 16 + 60_000 * IMAGE_SIDE * IMAGE_SIDE

# sha256 of the *decompressed* IDX files (Debian re-compresses, so the .gz bytes differ).
_DIGESTS: dict[str, str] = {
    "fashion-mnist/train-images-idx3-ubyte": (
        "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888"
    ),
    "fashion-mnist/train-labels-idx1-ubyte": (
        "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9"
    ),
    "fashion-mnist/t10k-images-idx3-ubyte": (
        "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b"
    ),
    "fashion-mnist/t10k-labels-idx1-ubyte": (
        "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34"
    ),
    "mnist/t10k-images-idx3-ubyte": (
        "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7"
    ),
    "mnist/t10k-labels-idx1-ubyte": (
        "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2"
    ),
}

_HOW_TO_FIX = {
    FASHION: (
        "Install Debian's copy with `apt-get install dataset-fashion-mnist` (as root, or run "
        "scripts/setup_data.sh), or download the original files with `python "
        "scripts/fetch_data.py` (no root needed), or set CLAIMS_DATA_DIR to a directory holding "
        "fashion-mnist/ and mnist/ with the original IDX .gz files."
    ),
    MNIST: (
        "The project ships it in fixtures/mnist/ (restore with `git checkout -- fixtures/mnist`), "
        "or set CLAIMS_DATA_DIR to a directory holding fashion-mnist/ and mnist/ with the "
        "original IDX .gz files."
    ),
}

# IDX magic numbers: two zero bytes, data type 0x08 (unsigned byte), rank.
_IMAGES_MAGIC = 0x00000803
_LABELS_MAGIC = 0x00000801


class DataError(ValueError):
    """A dataset is missing, corrupt, of the wrong kind, or an array has the wrong type."""


@dataclass(frozen=True)
class ImageSet:
    """A verified image set.

    Attributes:
        images: uint8 array [N, 784] of flattened 28x28 images, read-only.
        labels: int64 array [N] with values in [0, 10), read-only.
        name: e.g. ``"fashion-mnist/train"`` or ``"mnist/test"``.
        source: the directory the files were read from.
    """

    images: np.ndarray
    labels: np.ndarray
    name: str
    source: str


def data_digests() -> dict[str, str]:
    """Return the expected sha256 of each decompressed IDX file, keyed ``"<dataset>/<file>"``."""
    return dict(_DIGESTS)


def user_data_dir() -> Path:
    """The per-user folder scripts/fetch_data.py fills: ``$XDG_CACHE_HOME/uncertainty-claims/data``,
    by default ``~/.cache/uncertainty-claims/data``; searched last when CLAIMS_DATA_DIR is unset."""
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "uncertainty-claims" / "data"


def load_fashion_mnist(split: Literal["train", "test"]) -> ImageSet:
    """Load the Fashion-MNIST ``"train"`` (60,000) or ``"test"`` (10,000) split, verified."""
    if split not in ("train", "test"):
        raise DataError(f"Fashion-MNIST split must be 'train' or 'test', got {split!r}")
    return _load(FASHION, "train" if split == "train" else "t10k")


def load_mnist_test() -> ImageSet:
    """Load the 10,000-image MNIST test set, verified."""
    return _load(MNIST, "t10k")


def fashion_split(n: int = 60_000) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(train_idx, heldout_idx)``: the first 55,000 and the rest of a fixed permutation.

    The permutation is ``np.random.RandomState(123).permutation(n)``.
    """
    if n <= N_TRAIN:
        raise DataError(f"fashion_split needs n > {N_TRAIN}, got {n}")
    perm = np.random.RandomState(123).permutation(n)
    return perm[:N_TRAIN], perm[N_TRAIN:]


def to_float(images: np.ndarray) -> np.ndarray:
    """Scale uint8 pixels to float32 in [0, 1] (``images / 255``); any other input is an error."""
    if not isinstance(images, np.ndarray) or images.dtype != np.uint8:
        found = images.dtype if isinstance(images, np.ndarray) else type(images).__name__
        raise DataError(f"to_float expects a uint8 numpy array, got {found}")
    return images.astype(np.float32) / np.float32(255)


def _load(dataset: str, prefix: str) -> ImageSet:
    try:
        directory = _find_directory(dataset, _file_names(prefix))
    except OSError as exc:  # e.g. a folder we may not look into
        raise DataError(
            f"cannot look for the {dataset} files ({exc}). {_HOW_TO_FIX[dataset]}"
        ) from exc
    return _read_set(directory, dataset, prefix)


def _file_names(prefix: str) -> tuple[str, str]:
    return f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"


def _find_directory(dataset: str, names: tuple[str, str]) -> Path:
    """Return the first directory that has both files, following the source order."""
    fix = _HOW_TO_FIX[dataset]
    env = os.environ.get(ENV_VAR)
    if env:
        try:
            root = Path(env).expanduser().resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop (Python < 3.13)
            raise DataError(
                f"{ENV_VAR}={env} cannot be resolved ({exc}). {fix} "
                f"Or unset {ENV_VAR} to use the default sources."
            ) from exc
        if not root.is_dir():
            raise DataError(
                f"{ENV_VAR}={env} is not a directory ({root}). {fix} "
                f"Or unset {ENV_VAR} to use the default sources."
            )
        directory = root / dataset
        if not directory.is_dir():
            raise DataError(
                f"{ENV_VAR}={env} has no {dataset}/ subdirectory (looked for {directory}). "
                f"{fix} Or unset {ENV_VAR} to use the default sources."
            )
        candidates = [directory]
    else:
        candidates = [_FIXTURES_DIR / dataset, _SYSTEM_DIR / dataset, user_data_dir() / dataset]

    for directory in candidates:
        paths = [directory / f"{name}.gz" for name in names]
        present = [p.is_file() for p in paths]
        if all(present):
            return directory
        if any(present) or env:
            missing = ", ".join(str(p) for p, ok in zip(paths, present, strict=True) if not ok)
            raise DataError(f"Incomplete {dataset} data in {directory}: missing {missing}. {fix}")
    searched = ", ".join(str(d) for d in candidates)
    raise DataError(
        f"{dataset} files {', '.join(n + '.gz' for n in names)} not found; searched {searched} "
        f"({ENV_VAR} is not set). {fix}"
    )


@functools.cache
def _read_set(directory: Path, dataset: str, prefix: str) -> ImageSet:
    """Read both files, check their structure and that the counts agree, then their digests."""
    fix = _HOW_TO_FIX[dataset]
    images_name, labels_name = _file_names(prefix)
    images_path, labels_path = directory / f"{images_name}.gz", directory / f"{labels_name}.gz"
    images, images_sha = _parse_idx(images_path, _IMAGES_MAGIC, fix)
    labels, labels_sha = _parse_idx(labels_path, _LABELS_MAGIC, fix)
    if len(images) != len(labels):
        raise DataError(
            f"{directory}: {images_name}.gz holds {len(images)} images but {labels_name}.gz holds "
            f"{len(labels)} labels. {fix}"
        )
    for path, name, found in (
        (images_path, images_name, images_sha),
        (labels_path, labels_name, labels_sha),
    ):
        expected = _DIGESTS[f"{dataset}/{name}"]
        if found != expected:
            raise DataError(
                f"{path}: sha256 of the decompressed file is {found}, expected {expected} for "
                f"{dataset}/{name}; the file is corrupt or holds other data. {fix}"
            )
    labels = labels.astype(np.int64)
    labels.setflags(write=False)
    split = "train" if prefix == "train" else "test"
    return ImageSet(images, labels, f"{dataset}/{split}", str(directory))


def _parse_idx(path: Path, magic: int, fix: str) -> tuple[np.ndarray, str]:
    """Decompress ``path`` once; check its IDX structure and return a read-only view and sha256.

    Images come back as uint8 [N, 784] and labels as uint8 [N] (checked to lie in [0, 10)).
    The digest is of the decompressed bytes, which are hashed and parsed from the same buffer.
    """
    try:
        with gzip.open(path) as stream:
            raw = stream.read(_LARGEST_IDX + 1)  # no more: a gzip bomb must not fill memory
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"{path}: cannot read it as gzip ({exc}). {fix}") from exc
    if len(raw) > _LARGEST_IDX:
        raise DataError(
            f"{path}: decompresses to more than the {_LARGEST_IDX:,} bytes of the largest IDX "
            f"file here (60,000 images); it is not one of the data set's files. {fix}"
        )

    def header_error(problem: str) -> DataError:
        return DataError(f"{path}: bad IDX header: {problem}. {fix}")

    found_magic = int.from_bytes(raw[:4], "big")
    if found_magic != magic:
        raise header_error(f"expected magic 0x{magic:08x}, found 0x{found_magic:08x}")
    rank = magic & 0xFF
    offset = 4 + 4 * rank
    if len(raw) < offset:
        raise header_error(f"{len(raw)} bytes is shorter than the {offset}-byte header")
    dims = tuple(int.from_bytes(raw[i : i + 4], "big") for i in range(4, offset, 4))
    if rank == 3 and dims[1:] != (IMAGE_SIDE, IMAGE_SIDE):
        raise header_error(f"expected {IMAGE_SIDE}x{IMAGE_SIDE} images, found {dims[1]}x{dims[2]}")
    expected_len = math.prod(dims)
    if len(raw) - offset != expected_len:
        raise header_error(
            f"dimensions {dims} need {expected_len} payload bytes, found {len(raw) - offset}"
        )

    array = np.frombuffer(raw, dtype=np.uint8, offset=offset)
    if rank == 3:
        array = array.reshape(dims[0], IMAGE_SIDE * IMAGE_SIDE)
    elif array.size and array.max() >= N_CLASSES:
        raise DataError(f"{path}: labels must lie in [0, {N_CLASSES}), found {array.max()}. {fix}")
    return array, hashlib.sha256(raw).hexdigest()
