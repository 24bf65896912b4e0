"""The audit report: claim records collected from pytest, written as a table, JSON, Markdown."""
