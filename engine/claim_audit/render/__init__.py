"""The report rendered from the audit dict and the documents' figures: the terminal table,
audit.md, audit.html and the figures. It imports no document and not JAX."""
