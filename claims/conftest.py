"""This suite's JAX settings and the fixtures shared by the claim tests: the experiments,
trained once per configuration.

The experiments are imported inside the fixtures: pytest loads this file before it parses
the command line, and a usage error should not wait for jax and scipy to import.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from uncertainty_claims.calibration.evaluation import CalibrationResults
    from uncertainty_claims.orders import Orders
    from uncertainty_claims.uncertainty.experiment import UncertaintyResult


def pytest_configure(config: pytest.Config) -> None:
    """The settings this suite's experiments run under, in the controller and in each xdist
    worker, before any test module imports jax: deterministic GPU ops (XLA_FLAGS must be set
    before JAX's backend starts) and the compiled-program cache. Both reach the processes
    the tests start as environment variables (XLA_FLAGS, CLAIMS_COMPILATION_CACHE_DIR). The
    claims-audit plugin itself leaves JAX alone."""
    from uncertainty_claims.compile_cache import enable_compilation_cache
    from uncertainty_claims.numerics import request_deterministic_gpu_ops

    if _is_audit(config) and not hasattr(config, "workerinput") and _STARTED_AS not in config.stash:
        from uncertainty_claims.warm_audit import fingerprint

        # Taken before the settings below reach the environment, as `-n auto` sees it.
        config.stash[_STARTED_AS] = fingerprint(_selection(config))
    seeds = config.getoption("--seeds")
    if seeds is not None:
        from uncertainty_claims.robustness.sweep import POST_SEEDS

        if len(seeds) < POST_SEEDS:
            raise pytest.UsageError(
                f"--seeds: a sweep of the calibration post needs at least {POST_SEEDS} seeds "
                f"(it averages {POST_SEEDS}; 10 or more to judge robustness); got {len(seeds)}"
            )
    starts_jax = _may_keep_jax_from_starting()
    request_deterministic_gpu_ops()
    enable_compilation_cache()
    if starts_jax and not hasattr(config, "workerinput") and not config.option.collectonly:
        from uncertainty_claims.startup import jax_start_error

        error = jax_start_error()
        if error is not None:
            raise pytest.UsageError(
                f"JAX cannot start with XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}, "
                f"JAX_PLATFORMS={os.environ.get('JAX_PLATFORMS', '')!r}: {error}"
            )


def _may_keep_jax_from_starting() -> bool:
    """Whether XLA_FLAGS or JAX_PLATFORMS hold anything beyond the suite's own settings (which
    its child processes inherit): then JAX is tried in a child before any worker starts
    (lib/startup.py), so a bad flag is one usage error naming it."""
    from uncertainty_claims.numerics import DETERMINISTIC_GPU_FLAG

    flags = set(os.environ.get("XLA_FLAGS", "").split()) - {DETERMINISTIC_GPU_FLAG}
    return bool(flags) or os.environ.get("JAX_PLATFORMS", "") not in ("", "cpu")


DOCUMENTS = ("calibration", "uncertainty")  # the suite's fixtures of each document's results

LAST = (
    "claims/test_multiprocess.py::"
    "test_two_processes_hold_the_one_process_results_and_only_process_0_writes",
)
"""Three JAX processes (38 s alone on 2 cores, over a minute beside a training): collected,
so handed out, last, so that no training runs beside it, only the last few tests."""


def _document_of(nodeid: str) -> str | None:
    """The document whose experiments a test file checks, by its name: test_<document>*.py."""
    stem = nodeid.split("::", 1)[0].rpartition("/")[2].removesuffix(".py")
    return next((d for d in DOCUMENTS if stem.startswith(f"test_{d}")), None)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Under `-n` (xdist's default `--dist load`), each document's test files are one work
    unit, so on one worker; the other tests are load-balanced one by one, in collection
    order (`_start_order`). One document's tests wait on the same trained results: spread
    over workers, every worker would queue on one document's trainings in turn; grouped, the
    two documents' experiments train side by side. An explicit other `--dist` is xdist's.

    This is xdist's own `--dist loadgroup` with an `xdist_group` mark per document, written
    as xdist writes it (its LoadGroupScheduling is this `_split_scope`): with pytest 9.2,
    pytest-xdist 3.8's loadgroup groups nothing (it marks a group by renaming the node id
    through a field pytest no longer reads: pytest-xdist issue 1386)."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByDocument(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _document_of(nodeid) or nodeid

    return ByDocument(config, log)


def _start_order(item: pytest.Item) -> int:
    """The 2-device sharding run first (the longest test, it shares nothing), then the tests
    of the trained experiments: on an empty cache they train the recipes and fill the
    compiled-program cache that the other slow tests' child processes then reuse; then
    those, then the quick tests; `LAST` at the very end. (xdist hands out the two document
    groups before any single test, then the rest in this order.)"""
    if item.nodeid in LAST:
        return 4
    if item.get_closest_marker("slow"):
        return 0 if item.path.name == "test_sharding.py" else 2
    fixtures = getattr(item, "fixturenames", ())
    return 1 if any(name in fixtures for name in DOCUMENTS) else 3


_GATE_SKIP = pytest.mark.skip(
    reason="a slow gate (cold audits in two float orders, cold reruns): `make gate` runs them, "
    "CI as its own step"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "gate" not in (config.option.markexpr or ""):  # chosen by `-m gate` only
        for item in items:
            if item.get_closest_marker("gate"):
                item.add_marker(_GATE_SKIP)
    items.sort(key=_start_order)  # stable: file order within each group


@pytest.fixture(scope="session")
def calibration(order_count: int | None) -> Orders[CalibrationResults]:
    """Both calibration nets on seeds 0, 1, 2, trained per recipe in every valid float order
    (or loaded from the cache; at least --orders of them); the faithful order first."""
    from uncertainty_claims.calibration.evaluation import calibration_orders

    return calibration_orders(n_orders=order_count)


@pytest.fixture(scope="session")
def uncertainty(order_count: int | None) -> Orders[UncertaintyResult]:
    """The uncertainty guide's recipe from root key 0 in every valid float order (or loaded
    from the cache; at least --orders of them); the faithful order first."""
    from uncertainty_claims.uncertainty.results import uncertainty_orders

    return uncertainty_orders(n_orders=order_count)


def pytest_claims_audit_documents() -> list:
    """This suite's documents in the report: their sections and figures (lib/report/hooks.py)."""
    from uncertainty_claims.calibration.report import DOCUMENT as calibration
    from uncertainty_claims.uncertainty.report import DOCUMENT as uncertainty

    return [calibration, uncertainty]


def pytest_claims_audit_claims() -> list:
    """Every claim of this suite's documents: a complete audit has a verdict for each."""
    from uncertainty_claims.claims.calibration import SPECS as calibration
    from uncertainty_claims.claims.uncertainty import SPECS as uncertainty

    return [calibration, uncertainty]


def pytest_claims_audit_data() -> dict[str, str]:
    """The data this suite's documents read: Fashion-MNIST and MNIST, file by file."""
    from uncertainty_claims.data import data_digests

    return data_digests()


def pytest_claims_audit_robustness(
    documents: list[str], sweep: tuple[int, ...] | None
) -> dict | None:
    """The robustness section: intervals, other binnings and, with --seeds, other seeds."""
    from uncertainty_claims.robustness.summary import robustness_section

    return robustness_section(documents, sweep)


# --- A warm audit in one process (lib/warm_audit.py) ----------------------------------------

_RAN_WARM = pytest.StashKey[bool]()
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
    from uncertainty_claims.warm_audit import fingerprint, is_warm

    if not _is_audit(config):
        return None
    config.stash[_STARTED_AS] = fingerprint(_selection(config))  # pytest_configure reuses it
    if is_warm(config.stash[_STARTED_AS]):
        config.stash[_RAN_WARM] = True
        return 0
    return None


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.stash.get(_RAN_WARM, False):
        return "claims: the cache holds this run's results (lib/warm_audit.py): one process"
    return None


@pytest.hookimpl(trylast=True)  # after the audit plugin, which can fail a run that lost claims
def pytest_sessionfinish(session: pytest.Session) -> None:
    """The controller stamps the cache after a complete, successful audit, and withdraws the
    stamp after any other (a failure or an interruption must not vouch for the cache)."""
    config = session.config
    if hasattr(config, "workerinput") or config.option.collectonly or not _is_audit(config):
        return
    from uncertainty_claims.warm_audit import forget_warm, record_warm

    complete = session.exitstatus == pytest.ExitCode.OK and session.testscollected > 0
    if complete and not (session.shouldstop or session.shouldfail):
        record_warm(_selection(config), config.stash[_STARTED_AS])
    else:
        forget_warm(_selection(config))
