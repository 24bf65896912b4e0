"""Reproduction and claim audit of two JAX/Flax NNX uncertainty documents."""

__version__ = "0.1.0"
