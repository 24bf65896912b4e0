"""The audit's run plumbing: starting experiments ahead, the warm audit, JAX's facts in the
report."""
