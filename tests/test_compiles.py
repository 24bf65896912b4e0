"""What a cold run compiles: each program once, whatever runs it side by side.

Compiling is most of a cold audit's time on a CPU (docs/GPU.md, "Cold audit"). These tests
count compile requests (JAX lowers a program before every compile, cached on disk or not)
and check that the eager replay dispatches every op without JAX's per-call Python.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import jax

from uncertainty_claims.calibration.experiment import load_split
from uncertainty_claims.calibration.training import TrainConfig, train_nets_faithful

LOWERING = "/jax/core/compile/jaxpr_to_mlir_module_duration"


@contextlib.contextmanager
def lowerings() -> Iterator[list[float]]:
    """The programs JAX lowers (one per compile request) while the block runs."""
    seen: list[float] = []
    lock = threading.Lock()

    def listen(event: str, duration: float, **_) -> None:
        if event == LOWERING:
            with lock:
                seen.append(duration)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        yield seen
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)


def test_seeds_trained_side_by_side_compile_their_step_once():
    """Seeds of one net in threads, as the faithful order trains them: one compile each of
    the training step and of its chunk scan, not one per seed: the seeds' optimizers share
    one `adam` (lib/optimizers.py), so their graph definitions are equal (JAX itself has the
    other threads wait for a compile under way)."""
    split = load_split()
    images, labels = split.train_x[:600], split.train_y[:600]  # two batches of 256
    steps = 13  # epochs of two steps: one scanned chunk of 24 and two single steps

    def train(seeds: tuple[int, ...], learning_rate: float) -> None:
        config = TrainConfig(epochs=steps, learning_rate=learning_rate)
        train_nets_faithful("relu", seeds, images, labels, config)

    train((0,), 1e-3)  # the eager set-up ops, compiled
    with lowerings() as lowered:
        train((1, 2, 3), 2e-3)  # a new step program and a new scan
    assert len(lowered) == 2
