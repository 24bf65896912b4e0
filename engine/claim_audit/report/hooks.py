"""The hooks through which a project tells the plugin of its documents (ADDING_A_DOCUMENT.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ..engine.claim import ClaimSpec
from ..render.documents import Document


def pytest_claims_audit_documents(config: pytest.Config) -> list[Document]:
    """The documents whose sections and figures the report shows."""


def pytest_claims_audit_claims(config: pytest.Config) -> list[Mapping[str, ClaimSpec]]:
    """Every claim the documents make: a run leaving one without a verdict is partial."""


def pytest_claims_audit_data(config: pytest.Config) -> Mapping[str, str]:
    """The data the documents read, name -> sha256 hex digest, for the report's provenance."""


@pytest.hookspec(firstresult=True)
def pytest_claims_audit_inputs(config: pytest.Config) -> str | None:
    """A digest of everything the project's claims read (code, data, the stack, settings), taken
    on the controller before the project changes its environment: given one, each claim is
    judged once per digest and its record read from the cache after; None judges every run."""


@pytest.hookspec(firstresult=True)
def pytest_claims_audit_robustness(
    config: pytest.Config, documents: list[str], sweep: tuple[int, ...] | None
) -> dict | None:
    """audit.json's `robustness` section (`claim_audit.seed_section`) or None; `sweep`: --seeds."""


def pytest_claims_audit_environment(config: pytest.Config) -> Mapping[str, Any] | None:
    """Per test process: `metadata` fields (e.g. `device`) and `partial`, a sentence for each
    setting outside the project that can change a figure."""
