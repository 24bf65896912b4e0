"""The audit's own hooks, beside the root conftest.py's settings and experiment fixtures:
the documents, claims, data and robustness section this suite's report is made of
(engine/claim_audit/report/hooks.py), the --seeds rule of its documents, and the warm audit (one process
over a cache the last identical audit filled, claims/running/warm_audit.py).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

HERE = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)  # before the root conftest.py's settings reach the environment
def pytest_configure(config: pytest.Config) -> None:
    """An audit's fingerprint for the warm audit, taken as `-n auto` sees the run (before the
    JAX settings reach the environment); and the --seeds rule of the calibration post."""
    if _is_audit(config) and not hasattr(config, "workerinput") and _STARTED_AS not in config.stash:
        from running.warm_audit import fingerprint

        config.stash[_STARTED_AS] = fingerprint(_selection(config))
    seeds = config.getoption("--seeds")
    if seeds is not None:
        from uncertainty_claims.calibration.experiment import POST_SEEDS

        if len(seeds) < POST_SEEDS:
            raise pytest.UsageError(
                f"--seeds: a sweep of the calibration post needs at least {POST_SEEDS} seeds "
                f"(it averages {POST_SEEDS}; 10 or more to judge robustness); got {len(seeds)}"
            )


def pytest_claims_audit_documents() -> list:
    """This suite's documents in the report: their sections and figures (engine/claim_audit/report/hooks.py)."""
    from readings.suite import documents

    return documents()


def claim_modules() -> list[ModuleType]:
    """The test modules of claims/ that define claims (their `CLAIMS`), in file order."""
    modules = [importlib.import_module(path.stem) for path in sorted(HERE.glob("test_*.py"))]
    return [module for module in modules if hasattr(module, "CLAIMS")]


def pytest_claims_audit_claims() -> list:
    """Every claim of this suite's documents: a complete audit has a verdict for each."""
    registries = {id(m.CLAIMS): m.CLAIMS for m in claim_modules()}
    return list(registries.values())


def pytest_claims_audit_data() -> dict[str, str]:
    """The data this suite's documents read: Fashion-MNIST and MNIST, file by file."""
    from uncertainty_claims.data import data_digests

    return data_digests()


def pytest_claims_audit_inputs(config: pytest.Config) -> str:
    """What this suite's claims read, for the engine's record of each claim: the suite's code
    and fixtures, the pinned stack, the settings that reach JAX, XLA or the suite, --seeds and
    --orders (running/warm_audit.py; the data is checked against digests in lib's code)."""
    from running.warm_audit import fingerprint

    config.stash[_INPUTS] = fingerprint(
        {"seeds": config.getoption("--seeds", None), "orders": config.getoption("--orders", None)}
    )
    return config.stash[_INPUTS]


def pytest_claims_audit_robustness(
    config: pytest.Config, documents: list[str], sweep: tuple[int, ...] | None
) -> dict | None:
    """The robustness section: intervals, other binnings and, with --seeds, other seeds, of
    the comparative claims defined in claims/ (each module's `COMPARISONS`); computed once
    per digest of what the claims read, as their records are, and read from the cache after."""
    import json

    import numpy as np
    from claim_audit import cache
    from readings.suite import robustness_section

    comparisons: dict[str, tuple] = {}
    for module in claim_modules():
        document = module.CLAIMS.document
        comparisons[document] = comparisons.get(document, ()) + getattr(module, "COMPARISONS", ())
    inputs = config.stash.get(_INPUTS, None)
    if inputs is None:
        return robustness_section(documents, sweep, comparisons)
    entry = cache.cached(
        "robustness",
        {"inputs": inputs, "documents": sorted(documents), "sweep": list(sweep or [])},
        lambda: {
            "section": np.array(json.dumps(robustness_section(documents, sweep, comparisons)))
        },
        quiet=True,
    )
    return json.loads(str(entry.arrays["section"]))


# --- A warm audit in one process (claims/running/warm_audit.py) ----------------------------------------

_RAN_WARM = pytest.StashKey[bool]()
_INPUTS = pytest.StashKey[str]()  # pytest_claims_audit_inputs's digest
_STARTED_AS = pytest.StashKey[str]()


def _selection(config: pytest.Config) -> dict[str, object]:
    """What a run selects and asks for: the same selection over a warm cache computes nothing."""
    return {
        "args": sorted(config.args),
        "markexpr": config.option.markexpr,
        "keyword": config.option.keyword,
        "deselect": sorted(config.option.deselect or ()),
        "seeds": config.getoption("--seeds", None),
        "orders": config.getoption("--orders", None),
    }


def _is_audit(config: pytest.Config) -> bool:
    """A run selected by the claim and health marks alone (`make audit`): every test reads
    cached experiments. The other tests (faults, child processes, properties) do their work
    each run, so workers still pay for them."""
    words = set(config.option.markexpr.replace("(", " ").replace(")", " ").split())
    return bool(words) and words <= {"claim", "health", "or"}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` for an audit over a cache that the last identical complete audit filled:
    no workers (they would only import JAX and the tests again); otherwise xdist decides."""
    from running.warm_audit import fingerprint, is_warm

    if not _is_audit(config):
        return None
    config.stash[_STARTED_AS] = fingerprint(_selection(config))  # pytest_configure reuses it
    if is_warm(config.stash[_STARTED_AS]):
        config.stash[_RAN_WARM] = True
        return 0
    return None


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.stash.get(_RAN_WARM, False):
        return (
            "claims: the cache holds this run's results (claims/running/warm_audit.py): one process"
        )
    return None


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        from running.ahead import DESELECTED

        items[0].config.stash.setdefault(DESELECTED, []).extend(items)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Beside one accelerator, a complete document's experiments start together (ahead.py)."""
    from running.ahead import complete_documents, start, starts_ahead

    config = session.config
    if not config.option.collectonly and starts_ahead(config):
        start(complete_documents(config, session.items), config.getoption("--orders"))


@pytest.hookimpl(trylast=True)  # after the audit plugin, which can fail a run that lost claims
def pytest_sessionfinish(session: pytest.Session) -> None:
    """The controller stamps the cache after a complete, successful audit, and withdraws the
    stamp after any other (a failure or an interruption must not vouch for the cache)."""
    config = session.config
    if hasattr(config, "workerinput") or config.option.collectonly or not _is_audit(config):
        return
    from running.warm_audit import forget_warm, record_warm

    complete = session.exitstatus == pytest.ExitCode.OK and session.testscollected > 0
    if complete and not (session.shouldstop or session.shouldfail):
        record_warm(_selection(config), config.stash[_STARTED_AS])
    else:
        forget_warm(_selection(config))


@pytest.fixture(scope="session")
def bootstrap_ablations(uncertainty):
    """unc-12b's ablation in every order of the `uncertainty` fixture: that order's ensemble
    (with its bootstrap, the recipe) beside the same ensemble in the same kind of order with
    every member trained on every row (lib/uncertainty/no_bootstrap.py)."""
    from claim_audit import Orders
    from readings.uncertainty_rules import bootstrap_ablations

    return Orders(bootstrap_ablations(uncertainty))
