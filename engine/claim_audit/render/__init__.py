"""The report (terminal table, audit.md/html, figures) from the audit dict; no document, no JAX."""
