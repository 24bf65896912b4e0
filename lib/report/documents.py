"""The documents the suite audits: their titles, kind and where they are published."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Source:
    """A document as a reader would look it up."""

    title: str
    kind: str
    url: str | None  # None: no public address known to the suite


SOURCES: dict[str, Source] = {
    "calibration": Source(
        "Calibrating a Bounded Net, in JAX/Flax NNX",
        "blog post by Taha Bouhsine (2026)",
        "https://tahabouhsine.com/blog/calibration-of-a-bounded-net-jax-flax-nnx/",
    ),
    "uncertainty": Source(
        "Uncertainty Estimation",
        "Flax NNX guide: MC-Dropout and deep ensembles",
        None,
    ),
}
