"""The claims-audit pytest plugin and the audit it writes, shows and compares."""
