"""Claim statistics: what the claim modules judge their claims on (measures, sections,
the documents as the report shows them, bootstraps, sweeps, health verdicts)."""
