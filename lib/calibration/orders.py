"""The calibration recipe's batch orders: the training rows each step of a seed visits.

Epoch e of seed s visits `np.random.RandomState(1000 * s + e).permutation(n_train)` in batches
(docs/RECIPES.md, Calibration, "Training"). numpy's legacy generator holds the GIL, so threads
do not help: a sweep's thousands of seeds draw their orders in child processes, each filling
its share of one array on disk. This module imports numpy alone, so that a child
starts in a fraction of a second.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence

import numpy as np

IN_PROCESS_SEEDS = 64
"""Up to this many seeds draw their orders here: starting processes would cost more."""


def _batch_starts(n_train: int, batch_size: int) -> range:
    return range(0, n_train - batch_size, batch_size)


def n_steps(n_train: int, epochs: int, batch_size: int) -> int:
    """The number of steps of one seed's training: `len(batch_indices(...))`."""
    return epochs * len(_batch_starts(n_train, batch_size))


def batch_indices(seed: int, n_train: int, epochs: int, batch_size: int) -> np.ndarray:
    """Training-row indices of every step for one seed, [epochs * batches, batch_size]; the
    batches start at range(0, n_train - batch_size, batch_size), the tail is dropped."""
    starts = _batch_starts(n_train, batch_size)
    steps = []
    for epoch in range(epochs):
        order = np.random.RandomState(1000 * seed + epoch).permutation(n_train)
        steps.extend(order[s : s + batch_size] for s in starts)
    return np.stack(steps).astype(np.int32)


def many_batch_indices(
    seeds: Sequence[int], n_train: int, epochs: int, batch_size: int, processes: int | None = None
) -> np.ndarray:
    """`batch_indices` of every seed, stacked [seeds, steps, batch_size]: the same arrays,
    drawn by up to `processes` (default: the usable cores) child processes where there are
    more than `IN_PROCESS_SEEDS` seeds and more than one core."""
    seeds = [int(s) for s in seeds]
    processes = processes or len(os.sched_getaffinity(0))
    if len(seeds) <= IN_PROCESS_SEEDS or processes < 2:
        return _stacked(seeds, n_train, epochs, batch_size)
    with tempfile.TemporaryDirectory(prefix="batch-orders-", dir=_memory_folder()) as folder:
        path = os.path.join(folder, "orders.npy")
        shape = (len(seeds), n_steps(n_train, epochs, batch_size), batch_size)
        np.lib.format.open_memmap(path, mode="w+", dtype=np.int32, shape=shape).flush()
        bounds = np.linspace(0, len(seeds), min(processes, len(seeds)) + 1).astype(int)
        children = [
            subprocess.Popen(
                [sys.executable, "-c", f"from {__name__} import _fill; _fill()", path, str(start)]
                + [str(n_train), str(epochs), str(batch_size)]
                + [str(s) for s in seeds[start:stop]],
                env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
                stderr=subprocess.PIPE,
                text=True,
            )
            for start, stop in itertools.pairwise(bounds)
        ]
        errors = [child.communicate()[1] for child in children]
        for child, stderr in zip(children, errors, strict=True):
            if child.returncode != 0:
                raise RuntimeError(
                    f"a child process drawing batch orders exited with {child.returncode}: {stderr}"
                )
        return np.load(path)


def _stacked(seeds: Sequence[int], n_train: int, epochs: int, batch_size: int) -> np.ndarray:
    return np.stack([batch_indices(s, n_train, epochs, batch_size) for s in seeds])


def _memory_folder() -> str | None:
    """/dev/shm where the machine has it (the array never touches a disk), else the default."""
    return "/dev/shm" if os.access("/dev/shm", os.W_OK) else None


def _fill() -> None:
    """A child's work: argv = path, first row, n_train, epochs, batch_size, seeds..."""
    path, first, n_train, epochs, batch_size, *seeds = sys.argv[1:]
    orders = np.load(path, mmap_mode="r+")
    rows = _stacked([int(s) for s in seeds], int(n_train), int(epochs), int(batch_size))
    orders[int(first) : int(first) + len(rows)] = rows
    orders.flush()
