"""Root pytest configuration: hypothesis profiles and the claims-audit plugin."""

import os

from hypothesis import settings

# "ci" (default): derandomized, so a run is reproducible and CI never flakes on a new example.
# "dev": random exploration, for hunting counterexamples locally (HYPOTHESIS_PROFILE=dev).
settings.register_profile("ci", deadline=None, derandomize=True, database=None, print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The claims-audit plugin: installed with this package it is loaded through its pytest11 entry
# point under this same name (then this line adds nothing); named here for runs without
# plugin autoloading (PYTEST_DISABLE_PLUGIN_AUTOLOAD=1).
pytest_plugins = ["uncertainty_claims.report.plugin"]
