"""The claims-audit pytest plugin and the audit it writes: `plugin` (the claims collected, the
records, the report at the end), `hooks` (what a project tells it), `audit` (audit.json
built, then rendered by claim_audit.render), `provenance`, `diff` (two audits compared),
`timeouts` (a test past its budget)."""
