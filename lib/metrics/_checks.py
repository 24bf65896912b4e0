"""Shared input validation for the metrics: reject bad input loudly, never coerce it."""

import numbers

import numpy as np
from numpy.typing import ArrayLike

ROW_SUM_TOL = 1e-6


def _where(arr: np.ndarray, bad: np.ndarray) -> str:
    """Describe the first offending value of `arr` flagged in the boolean mask `bad`."""
    index = tuple(int(i) for i in np.argwhere(bad)[0])
    value = arr[index].item()
    if not index:
        return f"{value!r}"
    at = index[0] if len(index) == 1 else index
    return f"{value!r} at index {at}"


def as_real_array(
    x: ArrayLike, *, name: str, ndim: int | None = None, min_ndim: int = 0
) -> np.ndarray:
    """Check that `x` is a non-empty real array of the right rank, finite also as float64;
    return it as float64.

    Args:
      x: the input.
      name: the argument name used in error messages.
      ndim: the exact rank required, or None for any rank of at least `min_ndim`.
      min_ndim: the smallest rank accepted when `ndim` is None.

    Returns:
      `x` as a float64 numpy array.
    """
    arr = np.asarray(x)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real (int or float) array; got dtype {arr.dtype}")
    if ndim is not None and arr.ndim != ndim:
        rank = "a scalar (0-D)" if ndim == 0 else f"{ndim}-D"
        raise ValueError(f"{name} must be {rank}; got shape {arr.shape}")
    if arr.ndim < min_ndim:
        raise ValueError(f"{name} must be at least {min_ndim}-D; got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} must be non-empty; got shape {arr.shape}")
    nonfinite = ~np.isfinite(arr)
    if nonfinite.any():
        raise ValueError(f"{name} must be finite; got {_where(arr, nonfinite)}")
    # Checked again after the conversion: a finite long double can be beyond float64's range.
    with np.errstate(over="ignore"):
        out = np.asarray(arr, dtype=np.float64)
    overflowed = ~np.isfinite(out)
    if overflowed.any():
        raise ValueError(
            f"{name} must be finite in float64 (magnitude at most {np.finfo(np.float64).max:.4g}); "
            f"got {_where(arr, overflowed)}"
        )
    return out


def check_range(
    arr: np.ndarray,
    *,
    name: str,
    low: float,
    high: float,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """Check that every value of `arr` lies in the interval from `low` to `high`.

    Args:
      arr: a float64 array, already checked by `as_real_array`.
      name: the argument name used in error messages.
      low: the lower end of the interval.
      high: the upper end of the interval.
      low_open: whether `low` itself is excluded.
      high_open: whether `high` itself is excluded.
    """
    below = arr <= low if low_open else arr < low
    above = arr >= high if high_open else arr > high
    outside = below | above
    if outside.any():
        interval = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
        raise ValueError(f"{name} must be in {interval}; got {_where(arr, outside)}")


def as_scalar(
    value: ArrayLike, *, name: str, low: float, high: float, low_open: bool, high_open: bool
) -> float:
    """Check that `value` is one finite real number in the given interval; return it as a float.

    Args:
      value: the input (a Python or numpy number, or a 0-D array).
      name: the argument name used in error messages.
      low: the lower end of the interval.
      high: the upper end of the interval.
      low_open: whether `low` itself is excluded.
      high_open: whether `high` itself is excluded.

    Returns:
      `value` as a Python float.
    """
    arr = as_real_array(value, name=name, ndim=0)
    check_range(arr, name=name, low=low, high=high, low_open=low_open, high_open=high_open)
    return float(arr)


def as_probs(probs: ArrayLike, *, name: str = "probs") -> np.ndarray:
    """Check that `probs` is an [N, C] array of probability rows; return it as float64.

    Args:
      probs: the input; every entry in [0, 1], every row summing to 1 within `ROW_SUM_TOL`.
      name: the argument name used in error messages.

    Returns:
      `probs` as a float64 numpy array.
    """
    arr = as_real_array(probs, name=name, ndim=2)
    check_range(arr, name=name, low=0.0, high=1.0)
    sums = arr.sum(axis=1)
    off = np.abs(sums - 1.0) > ROW_SUM_TOL
    if off.any():
        row = int(np.argmax(off))
        raise ValueError(
            f"{name} rows must sum to 1 (tol {ROW_SUM_TOL:g}); row {row} sums to {sums[row]!r}"
        )
    return arr


def as_labels(labels: ArrayLike, *, n_classes: int, n: int, other: str) -> np.ndarray:
    """Check that `labels` is a length-`n` integer array with values in [0, n_classes).

    Args:
      labels: the input; float labels are rejected even when integral (e.g. 1.0).
      n_classes: the number of classes.
      n: the required length, the number of rows of `other`.
      other: the name of the argument `labels` must match in length.

    Returns:
      `labels` as an int64 numpy array.
    """
    arr = np.asarray(labels)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"labels must be an integer array; got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"labels must be 1-D [N]; got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"labels must have length {n} to match {other}; got length {arr.shape[0]}")
    outside = (arr < 0) | (arr >= n_classes)
    if outside.any():
        raise ValueError(f"labels must be integers in [0, {n_classes}); got {_where(arr, outside)}")
    return arr.astype(np.int64)


def check_same_shape(arr: np.ndarray, *, name: str, like: np.ndarray, like_name: str) -> None:
    """Check that `arr` has the same shape as `like`.

    Args:
      arr: the array to check.
      name: its argument name, used in error messages.
      like: the array whose shape is required.
      like_name: its argument name, used in error messages.
    """
    if arr.shape != like.shape:
        raise ValueError(
            f"{name} must have the same shape as {like_name} {like.shape}; got {arr.shape}"
        )


def as_count(value: int, *, name: str, minimum: int) -> int:
    """Check that `value` is an integer (not a bool or float) of at least `minimum`.

    Args:
      value: the input.
      name: the argument name used in error messages.
      minimum: the smallest accepted value.

    Returns:
      `value` as a Python int.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer; got {value!r} of type {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}; got {value}")
    return int(value)
