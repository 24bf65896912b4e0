"""claim-audit: judge a document's published claims by re-running them under pytest.

A claim is a test with a `claim` marker; the `claim` fixture judges what the test measured
against what the document published, in every valid float order the project offers, and
the plugin writes the audit (audit.json, audit.md, audit.html) at the end of the run.
"""

__version__ = "0.1.0"
