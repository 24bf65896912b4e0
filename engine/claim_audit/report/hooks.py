"""The hooks through which a project tells the claims-audit plugin about its documents
(docs/ADDING_A_DOCUMENT.md walks through each). Implement them in a conftest.py or a plugin;
every implementation's answer is used. This suite's are in claims/conftest.py and
claims/jax_report.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..engine.claim import ClaimSpec
    from ..render.documents import Document


def pytest_claims_audit_documents(config: pytest.Config) -> list[Document]:
    """The documents whose sections and figures the report shows; a document with claims but
    not registered is only listed."""


def pytest_claims_audit_claims(config: pytest.Config) -> list[Mapping[str, ClaimSpec]]:
    """Every claim the documents make (their `ClaimSpecs`): a run that leaves one without a
    verdict writes report/partial/ and names it."""


def pytest_claims_audit_data(config: pytest.Config) -> Mapping[str, str]:
    """The data the documents read, name -> sha256 hex digest, for the report's provenance (a
    name given two different digests fails the report)."""


@pytest.hookspec(firstresult=True)
def pytest_claims_audit_robustness(
    config: pytest.Config, documents: list[str], sweep: tuple[int, ...] | None
) -> dict | None:
    """audit.json's `robustness` section for the `documents` audited, or None; `sweep`: the
    seeds of --seeds. `claim_audit.seed_section` computes one. Required keys:
    `published_seeds`, `sweep_seeds` (None without a sweep) and `claims` (claim id -> its
    `published` intervals and, after a sweep, its `sweep`); optional: `methods` (`level`,
    sentences `published`, `seeds`, `note`, `labels`, `holds_on`, `value`), `sensitivity`,
    `figure_intervals`, `figure_group`, `figure_columns`. A section lacking a required key, an
    exception, or a sweep with no section fails the run."""


def pytest_claims_audit_environment(config: pytest.Config) -> Mapping[str, Any] | None:
    """What the process's numerical stack says, called at the end of every process that ran
    tests: `metadata`, fields for audit.json's metadata (`device`; a `platform` mapping adds to
    the engine's), and `partial`, a sentence for each setting made outside the project that can
    change a figure (which makes the run partial). Mappings merge key by key."""
