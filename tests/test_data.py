"""Tests of uncertainty_claims.data: the real data sets and split, then broken copies that must fail loudly.

The fault tests work on temporary copies under ``tmp_path`` with ``CLAIMS_DATA_DIR`` pointing at
them; the loader's memo is keyed on the source directory, so each test sees its own copy.
"""

from __future__ import annotations

import gzip
import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest

from uncertainty_claims import data
from uncertainty_claims.data import (
    DataError,
    data_digests,
    fashion_split,
    load_fashion_mnist,
    load_mnist_test,
    to_float,
)

FASHION_T10K_IMAGES = "fashion-mnist/t10k-images-idx3-ubyte.gz"
FASHION_T10K_LABELS = "fashion-mnist/t10k-labels-idx1-ubyte.gz"
MNIST_T10K_IMAGES = "mnist/t10k-images-idx3-ubyte.gz"
MNIST_T10K_LABELS = "mnist/t10k-labels-idx1-ubyte.gz"


def read_idx(path: Path) -> bytes:
    return gzip.decompress(path.read_bytes())


def write_idx(path: Path, raw: bytes) -> None:
    path.write_bytes(gzip.compress(raw, compresslevel=1))


def sha256(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A CLAIMS_DATA_DIR holding copies of the real test-split files of both data sets."""
    for image_set in (load_fashion_mnist("test"), load_mnist_test()):
        source = Path(image_set.source)
        target = tmp_path / source.name
        target.mkdir()
        for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
            shutil.copyfile(source / name, target / name)
    monkeypatch.setenv(data.ENV_VAR, str(tmp_path))
    return tmp_path


# --- the real data ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("load", "n", "name"),
    [
        (lambda: load_fashion_mnist("train"), 60_000, "fashion-mnist/train"),
        (lambda: load_fashion_mnist("test"), 10_000, "fashion-mnist/test"),
        (load_mnist_test, 10_000, "mnist/test"),
    ],
    ids=["fashion-train", "fashion-test", "mnist-test"],
)
def test_real_sets_have_expected_shapes_and_labels(load, n: int, name: str) -> None:
    image_set = load()
    assert image_set.name == name
    assert image_set.images.shape == (n, 784)
    assert image_set.images.dtype == np.uint8
    assert image_set.labels.shape == (n,)
    assert image_set.labels.dtype == np.int64
    assert set(np.unique(image_set.labels).tolist()) == set(range(10))
    assert image_set.images.max() == 255
    assert not image_set.images.flags.writeable
    assert not image_set.labels.flags.writeable
    assert load() is image_set  # memoised


def test_default_sources_are_fixtures_then_debian(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(data.ENV_VAR, raising=False)
    repo = Path(__file__).resolve().parents[1]
    assert load_mnist_test().source == str(repo / "fixtures" / "mnist")
    assert load_fashion_mnist("test").source == "/usr/share/datasets/fashion-mnist"


def test_the_user_cache_dir_is_searched_last(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where scripts/fetch_data.py puts the files when CLAIMS_DATA_DIR is unset."""
    monkeypatch.delenv(data.ENV_VAR)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert data.user_data_dir() == tmp_path / "xdg" / "uncertainty-claims" / "data"
    data.user_data_dir().mkdir(parents=True)
    for dataset in ("fashion-mnist", "mnist"):
        (data_dir / dataset).rename(data.user_data_dir() / dataset)
    monkeypatch.setattr(data, "_FIXTURES_DIR", tmp_path / "no-fixtures")
    monkeypatch.setattr(data, "_SYSTEM_DIR", tmp_path / "no-system")
    assert load_mnist_test().source == str(data.user_data_dir() / "mnist")
    assert load_fashion_mnist("test").source == str(data.user_data_dir() / "fashion-mnist")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data.user_data_dir() == tmp_path / "home" / ".cache" / "uncertainty-claims" / "data"


def test_data_dir_is_used_when_set(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = load_fashion_mnist("test")
    assert copy.source == str(data_dir / "fashion-mnist")
    monkeypatch.delenv(data.ENV_VAR)
    original = load_fashion_mnist("test")
    assert original.source != copy.source
    np.testing.assert_array_equal(copy.images, original.images)
    np.testing.assert_array_equal(copy.labels, original.labels)


def test_fashion_split_follows_the_recipe() -> None:
    train_idx, heldout_idx = fashion_split()
    assert train_idx.shape == (55_000,)
    assert heldout_idx.shape == (5_000,)
    assert np.intersect1d(train_idx, heldout_idx).size == 0
    np.testing.assert_array_equal(
        np.sort(np.concatenate([train_idx, heldout_idx])), np.arange(60_000)
    )
    perm = np.random.RandomState(123).permutation(60_000)
    np.testing.assert_array_equal(train_idx, perm[:55_000])
    np.testing.assert_array_equal(heldout_idx, perm[55_000:])
    # Pinned values, in case the generator's stream ever changed.
    assert train_idx[:5].tolist() == [29561, 26640, 24498, 24594, 24249]
    assert heldout_idx[:5].tolist() == [37169, 27722, 25563, 11990, 53976]


def test_data_digests_cover_every_file() -> None:
    digests = data_digests()
    assert set(digests) == {
        f"{dataset}/{prefix}-{kind}"
        for dataset, prefixes in (("fashion-mnist", ("train", "t10k")), ("mnist", ("t10k",)))
        for prefix in prefixes
        for kind in ("images-idx3-ubyte", "labels-idx1-ubyte")
    }
    assert all(len(d) == 64 and int(d, 16) >= 0 for d in digests.values())
    digests.clear()
    assert data_digests()  # callers get a copy


def test_to_float_scales_to_unit_interval() -> None:
    images = np.array([[0, 1, 128, 255]], dtype=np.uint8)
    scaled = to_float(images)
    assert scaled.dtype == np.float32
    assert scaled.shape == images.shape
    np.testing.assert_array_equal(scaled, images.astype(np.float32) / np.float32(255))
    assert scaled[0, 0] == 0.0
    assert scaled[0, -1] == 1.0


# --- broken data must fail loudly ------------------------------------------------------------


@pytest.mark.fault
class TestBadData:
    def test_flipped_payload_byte_is_rejected(self, data_dir: Path) -> None:
        """One flipped byte in an IDX payload: a DataError naming the file, the expected and
        found sha256 and how to get the data."""
        path = data_dir / MNIST_T10K_IMAGES
        raw = bytearray(read_idx(path))
        raw[16 + 1000] ^= 0xFF
        write_idx(path, bytes(raw))
        expected = data_digests()["mnist/t10k-images-idx3-ubyte"]
        with pytest.raises(DataError) as info:
            load_mnist_test()
        message = str(info.value)
        assert str(path) in message
        assert expected in message
        assert sha256(bytes(raw)) in message
        assert "CLAIMS_DATA_DIR" in message

    def test_missing_file_is_named(self, data_dir: Path) -> None:
        """One file of a split missing: a DataError saying "missing", with the file's path."""
        path = data_dir / FASHION_T10K_LABELS
        path.unlink()
        with pytest.raises(DataError, match="missing") as info:
            load_fashion_mnist("test")
        assert str(path) in str(info.value)

    @pytest.mark.parametrize(
        "damage",
        [
            lambda gz: gz[: len(gz) // 2],
            lambda gz: gz[:-4],
            lambda gz: gzip.decompress(gz),
            lambda gz: b"",
        ],
        ids=["half", "no-trailer", "not-gzip", "empty"],
    )
    def test_truncated_or_corrupt_gzip_is_a_data_error(self, data_dir: Path, damage) -> None:
        """A `.gz` cut in half or without its trailer, not gzip at all, or empty: a DataError
        naming the file."""
        path = data_dir / MNIST_T10K_LABELS
        path.write_bytes(damage(path.read_bytes()))
        with pytest.raises(DataError) as info:
            load_mnist_test()
        assert str(path) in str(info.value)

    def test_other_dataset_in_place_is_a_digest_mismatch(self, data_dir: Path) -> None:
        """A valid IDX file of the wrong data set (MNIST images where Fashion-MNIST is
        expected): a DataError with both sha256 digests and the install command."""
        path = data_dir / FASHION_T10K_IMAGES
        shutil.copyfile(data_dir / MNIST_T10K_IMAGES, path)
        expected = data_digests()["fashion-mnist/t10k-images-idx3-ubyte"]
        found = data_digests()["mnist/t10k-images-idx3-ubyte"]
        with pytest.raises(DataError, match="sha256") as info:
            load_fashion_mnist("test")
        message = str(info.value)
        assert str(path) in message
        assert expected in message
        assert found in message
        assert "apt-get install dataset-fashion-mnist" in message

    def test_wrong_image_dimensions_are_a_header_error(self, data_dir: Path) -> None:
        """Images of the wrong size in the header (27x29): a DataError, bad IDX header."""
        path = data_dir / FASHION_T10K_IMAGES
        raw = bytearray(read_idx(path))
        raw[8:16] = (27).to_bytes(4, "big") + (29).to_bytes(4, "big")
        write_idx(path, bytes(raw))
        with pytest.raises(DataError, match=r"bad IDX header.*27x29"):
            load_fashion_mnist("test")

    def test_labels_file_in_images_slot_is_a_header_error(self, data_dir: Path) -> None:
        """A labels file in the images' place: a DataError, bad IDX header, with the magic
        number expected and found."""
        shutil.copyfile(data_dir / FASHION_T10K_LABELS, data_dir / FASHION_T10K_IMAGES)
        with pytest.raises(DataError, match=r"expected magic 0x00000803, found 0x00000801"):
            load_fashion_mnist("test")

    def test_payload_length_must_match_header(self, data_dir: Path) -> None:
        """A payload one byte longer than its header says: a DataError on the payload length."""
        path = data_dir / MNIST_T10K_IMAGES
        write_idx(path, read_idx(path) + b"\x00")
        with pytest.raises(DataError, match="payload bytes"):
            load_mnist_test()

    def test_label_out_of_range_is_rejected(self, data_dir: Path) -> None:
        """A label outside [0, 10): a DataError with the value."""
        path = data_dir / MNIST_T10K_LABELS
        raw = bytearray(read_idx(path))
        raw[8 + 17] = 10
        write_idx(path, bytes(raw))
        with pytest.raises(DataError, match=r"labels must lie in \[0, 10\), found 10"):
            load_mnist_test()

    def test_image_and_label_counts_must_agree(self, data_dir: Path) -> None:
        """9,999 labels for 10,000 images: a DataError, the counts disagree."""
        path = data_dir / MNIST_T10K_LABELS
        raw = read_idx(path)
        write_idx(path, raw[:4] + (9_999).to_bytes(4, "big") + raw[8:-1])
        with pytest.raises(DataError, match=r"10000 images but .* 9999 labels"):
            load_mnist_test()

    def test_empty_data_dir_is_not_a_fallback(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An empty CLAIMS_DATA_DIR: a DataError naming the missing subfolder; no fallback to
        the other sources."""
        monkeypatch.setenv(data.ENV_VAR, str(tmp_path))
        with pytest.raises(DataError, match=r"has no fashion-mnist/ subdirectory"):
            load_fashion_mnist("test")
        with pytest.raises(DataError, match=r"has no mnist/ subdirectory"):
            load_mnist_test()

    def test_data_dir_without_the_files_is_not_a_fallback(self, data_dir: Path) -> None:
        """A CLAIMS_DATA_DIR without one split's files: a DataError naming the missing file; no
        fallback to the other sources."""
        with pytest.raises(DataError, match="missing") as info:
            load_fashion_mnist("train")  # the copy holds only the test split
        assert str(data_dir / "fashion-mnist" / "train-images-idx3-ubyte.gz") in str(info.value)

    def test_nonexistent_data_dir(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A CLAIMS_DATA_DIR that does not exist: a DataError "is not a directory" with the
        path; no fallback."""
        missing = tmp_path / "nowhere"
        monkeypatch.setenv(data.ENV_VAR, str(missing))
        with pytest.raises(DataError, match="is not a directory") as info:
            load_mnist_test()
        assert str(missing) in str(info.value)

    def test_missing_everywhere_lists_the_places_searched(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """No source has the data: a DataError listing every folder searched, the install
        command, scripts/fetch_data.py and CLAIMS_DATA_DIR."""
        monkeypatch.delenv(data.ENV_VAR, raising=False)
        monkeypatch.setattr(data, "_FIXTURES_DIR", tmp_path / "fixtures")
        monkeypatch.setattr(data, "_SYSTEM_DIR", tmp_path / "system")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
        with pytest.raises(DataError, match="not found") as info:
            load_fashion_mnist("train")
        message = str(info.value)
        assert str(tmp_path / "fixtures" / "fashion-mnist") in message
        assert str(tmp_path / "system" / "fashion-mnist") in message
        user_dir = tmp_path / "cache" / "uncertainty-claims" / "data" / "fashion-mnist"
        assert str(user_dir) in message
        assert "apt-get install dataset-fashion-mnist" in message
        assert "scripts/fetch_data.py" in message
        assert "CLAIMS_DATA_DIR" in message

    def test_half_present_default_source_is_not_skipped(
        self, data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A default source holding only part of a data set: a DataError naming the missing
        file, not a silent move to the next source."""
        monkeypatch.delenv(data.ENV_VAR)
        (data_dir / MNIST_T10K_LABELS).unlink()
        monkeypatch.setattr(data, "_FIXTURES_DIR", data_dir)
        with pytest.raises(DataError, match="Incomplete mnist data") as info:
            load_mnist_test()
        assert str(data_dir / MNIST_T10K_LABELS) in str(info.value)

    def test_unknown_split(self) -> None:
        """An unknown split name: a DataError naming the valid ones."""
        with pytest.raises(DataError, match="'train' or 'test'"):
            load_fashion_mnist("validation")  # type: ignore[arg-type]

    def test_split_needs_more_than_the_training_size(self) -> None:
        """`fashion_split` asked for no more images than the training size: a DataError naming
        the bound."""
        with pytest.raises(DataError, match="n > 55000"):
            fashion_split(55_000)

    @pytest.mark.parametrize(
        "images",
        [np.zeros((2, 784), np.float32), np.zeros((2, 784), np.int64), [[0, 255]]],
        ids=["float32", "int64", "list"],
    )
    def test_to_float_rejects_non_uint8(self, images) -> None:
        """`to_float` of a non-uint8 array (float32, int64, a list): a DataError; never cast."""
        with pytest.raises(DataError, match="uint8"):
            to_float(images)
