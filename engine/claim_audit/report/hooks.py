"""The hooks through which a project tells the claims-audit plugin about its documents.

Declared by claim_audit.report.plugin (`pytest_addhooks`); implement them in a conftest.py or a
plugin. This suite's implementations are in claims/conftest.py, and its numerical stack's
(`pytest_claims_audit_environment`) in claims/jax_report.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..engine.claim import ClaimSpec
    from ..render.documents import Document


def pytest_claims_audit_documents(config: pytest.Config) -> list[Document]:
    """The documents whose sections and figures the report shows (claim_audit.render.documents).

    Every implementation's list is used, in the order pytest calls them. Called once, when
    the report is written; a document with claims but not registered is only listed.
    """


def pytest_claims_audit_claims(config: pytest.Config) -> list[Mapping[str, ClaimSpec]]:
    """Every claim the documents make, as their spec registries (`ClaimSpecs`).

    Every implementation's list is used. A report is complete only when each of these claims
    has a verdict; a run that leaves one out, whatever removed it (--ignore, a spec without
    a test, a worker that never ran it), writes report/partial/ and names it. Called once,
    at the end of a run that checked claims.
    """


def pytest_claims_audit_data(config: pytest.Config) -> Mapping[str, str]:
    """The data the documents read, as name -> sha256 hex digest (e.g.
    `{"survey/responses.csv": "9d1f..."}`), for the report's provenance.

    Every implementation's mapping is merged; a name given two different digests fails the
    report. Without an implementation the report lists no data. Called once, when the
    report is written.
    """


@pytest.hookspec(firstresult=True)
def pytest_claims_audit_robustness(
    config: pytest.Config, documents: list[str], sweep: tuple[int, ...] | None
) -> dict | None:
    """audit.json's `robustness` section for the `documents` audited (their names), or None.

    `sweep`: the seeds of --seeds, or None; how few seeds a sweep may have is the project's
    rule (check it in its own `pytest_configure`). Called after the claims of a complete run;
    an exception is reported as the section not computed, and fails the run, as does a
    sweep asked for (--seeds) with no section returned.

    `claim_audit.seed_section(comparisons, subject, published=..., sweep=sweep)` computes
    one from the claims' `Comparison`s in the engine's words. The section is checked: one
    that lacks a required key fails the run with a line naming it. Required:
    `published_seeds`, `sweep_seeds` and `claims` (with each claim's `published` and, after
    a sweep, its `sweep`); every other key is optional, the engine's default or left out.

    The section is a JSON-able dict with these keys, which the terminal table, audit.md and
    audit.html render (a project may supply its own):
    `methods` (dict: `level`, the intervals' level; sentences in the project's words:
    `published`, how the intervals on the published seeds are computed, `seeds`, those over
    seeds, `note`, what they hold fixed, `labels`, what robust, fragile and fails mean,
    `holds_on`, what a sweep's share counts, `value`, what a sweep's value is),
    `published_seeds` (list of int), `sweep_seeds` (list of int, or None), `claims` (claim
    id -> its intervals and, with a sweep, its share of holding subsets and their `unit`),
    `sensitivity` (list of rows: a claim under another choice of the document),
    `figure_intervals` (group -> per-seed figures with their intervals, or None),
    `figure_group` (what a group is) and `figure_columns` ([figure key, label] pairs).
    """


def pytest_claims_audit_environment(config: pytest.Config) -> Mapping[str, Any] | None:
    """What the process's numerical stack says for the report, as a JSON-able mapping of
    `metadata`, fields that audit.json's metadata records beside the engine's own (`device`,
    where the run computed, which is None without it; the stack's settings; a mapping for
    `platform` is added to the engine's `platform`), and `partial`, one sentence for each setting made from outside the project
    that can change the documents' figures (e.g. a variable that changes the float width):
    any such sentence makes the run partial, and its report names it.

    Called at the end of every process that ran tests (each xdist worker, and the process
    that writes the report); every implementation's answer is used. The processes' answers
    are merged: a field that is a mapping key by key, the report's own process last; each
    sentence once. Without an implementation the report records no such fields.
    """
