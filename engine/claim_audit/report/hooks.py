"""The hooks through which a project tells the claims-audit plugin about its documents
(docs/ADDING_A_DOCUMENT.md walks through each); every implementation's answer is used."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ..engine.claim import ClaimSpec
    from ..render.documents import Document


def pytest_claims_audit_documents(config: pytest.Config) -> list[Document]:
    """The documents whose sections and figures the report shows."""


def pytest_claims_audit_claims(config: pytest.Config) -> list[Mapping[str, ClaimSpec]]:
    """Every claim the documents make: a run leaving one without a verdict is partial."""


def pytest_claims_audit_data(config: pytest.Config) -> Mapping[str, str]:
    """The data the documents read, name -> sha256 hex digest, for the report's provenance."""


@pytest.hookspec(firstresult=True)
def pytest_claims_audit_robustness(
    config: pytest.Config, documents: list[str], sweep: tuple[int, ...] | None
) -> dict | None:
    """audit.json's `robustness` section for the `documents` audited (`sweep`: the seeds of
    --seeds), or None. `claim_audit.seed_section` computes one; the guide gives its keys."""


def pytest_claims_audit_environment(config: pytest.Config) -> Mapping[str, Any] | None:
    """At the end of each test process: `metadata` (fields for audit.json's, e.g. `device`),
    and `partial`, a sentence for each setting outside the project that can change a figure."""
