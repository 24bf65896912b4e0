"""Root pytest configuration, shared by the audit (claims/) and the harness's own tests
(tests/): hypothesis profiles, the claims-audit plugin, the JAX settings the experiments run
under, the order test files are handed out to xdist workers in, and the
experiments as session fixtures (both folders' tests read them). The audit's own hooks (its
documents, claims, data, robustness section, the warm audit) are claims/conftest.py's.

The experiments are imported inside the fixtures: pytest loads this file before it parses
the command line, and a usage error should not wait for jax and scipy to import.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings

if TYPE_CHECKING:
    from claim_audit import Orders

    from uncertainty_claims.calibration.evaluation import CalibrationResults
    from uncertainty_claims.uncertainty.experiment import UncertaintyResult


# "ci" (default): derandomized, so a run is reproducible and CI never flakes on a new example.
# "dev": random exploration, for hunting counterexamples locally (HYPOTHESIS_PROFILE=dev).
settings.register_profile("ci", deadline=None, derandomize=True, database=None, print_blob=True)
settings.register_profile("dev", deadline=None, max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The claims-audit plugin: installed with this package it is loaded through its pytest11 entry
# point under this same name (then naming it adds nothing); named here for runs without
# plugin autoloading (PYTEST_DISABLE_PLUGIN_AUTOLOAD=1). Beside it, what JAX says in its
# report (claims/running/jax_report.py).
pytest_plugins = ["claim_audit.report.plugin", "running.jax_report"]


def pytest_configure(config: pytest.Config) -> None:
    """The settings this suite's experiments run under, in the controller and in each xdist
    worker, before any test module imports jax: deterministic GPU ops (XLA_FLAGS must be set
    before JAX's backend starts), the compiled-program cache and the store of the results
    (the engine's disk cache, both in its cache folder), a test's budget as the most a
    child process computing for it may take. The first two reach the
    processes the tests start as environment variables (XLA_FLAGS, CLAIMS_COMPILATION_CACHE_DIR). The
    claims-audit plugin itself leaves JAX alone. On a machine with an accelerator, one
    process of the run holds it (and starts opening it while the tests are collected) and
    the others compute on the host's CPU (uncertainty_claims.placement)."""
    from claim_audit import budget_s, cache

    from uncertainty_claims.cache import keep_results_in
    from uncertainty_claims.numerics import request_deterministic_gpu_ops
    from uncertainty_claims.placement import prepare_process

    starts_jax = _may_keep_jax_from_starting()
    request_deterministic_gpu_ops()
    keep_results_in(cache.cached)
    worker = config.workerinput["workerid"] if hasattr(config, "workerinput") else None
    try:
        prepare_process(
            worker,
            getattr(config.option, "numprocesses", None) or 0,
            cache_dir=cache.default_cache_dir(),
            budget_s=budget_s(config) or None,  # no child outlives its test's budget
            try_start=starts_jax and worker is None and not config.option.collectonly,
            open_now=not config.option.collectonly,
        )
    except (ValueError, RuntimeError) as error:
        raise pytest.UsageError(str(error)) from None


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` on a machine with an accelerator: no workers. One process holds the chip
    and computes every document's orders (the faithful ones on the host's CPU, side by side
    with the chip's); a worker beside it could only recompute them on the CPU."""
    from uncertainty_claims.placement import accelerator

    return 0 if accelerator() is not None else None


def _may_keep_jax_from_starting() -> bool:
    """Whether XLA_FLAGS or JAX_PLATFORMS hold anything beyond the suite's own settings (which
    its child processes inherit): then JAX is tried in a child before any worker starts
    (`prepare_process`), so a bad flag is one usage error naming it."""
    from uncertainty_claims.numerics import DETERMINISTIC_GPU_FLAG

    flags = set(os.environ.get("XLA_FLAGS", "").split()) - {DETERMINISTIC_GPU_FLAG}
    return bool(flags) or os.environ.get("JAX_PLATFORMS", "") not in ("", "cpu")


DOCUMENTS = ("calibration", "uncertainty")  # the suite's fixtures of each document's results

FIRST_FILE = "tests/test_sharding.py"
"""The 2-device sharding run, the longest test; it shares nothing, so it starts first."""


def _document_of(file: str) -> str | None:
    """The document whose experiments a test file checks, by its name: test_<document>*.py."""
    stem = file.rpartition("/")[2].removesuffix(".py")
    return next((d for d in DOCUMENTS if stem.startswith(f"test_{d}")), None)


def _kind(item: pytest.Item) -> int:
    """0: the sharding run; 1: a test of the trained experiments (on an empty cache they
    train the recipes and fill the compiled-program cache that the other slow tests' child
    processes then reuse); 2: another slow test; 3: a quick one."""
    if _file_of(item) == FIRST_FILE:
        return 0
    if item.get_closest_marker("slow"):
        return 2
    fixtures = getattr(item, "fixturenames", ())
    return 1 if any(name in fixtures for name in DOCUMENTS) else 3


def _hand_out_order(items: list[pytest.Item]) -> dict[str, tuple[int, int, int]]:
    """Each test file's place in the order xdist hands files out (`--dist loadfile`, set in
    pyproject.toml: a file's tests run on one worker, files go out in the order of their
    first test). A file comes by the earliest `_kind` of its tests; the documents' files
    alternate, calibration's first, uncertainty's first, then each one's next, so the two
    documents' experiments train side by side on two workers and a worker that has finished
    one document takes up the other's remaining files."""
    places: dict[str, tuple[int, int, int]] = {}
    files_of: dict[str, int] = dict.fromkeys(DOCUMENTS, 0)
    for item in items:
        file = _file_of(item)
        document = _document_of(file)
        if document is None:
            kind = _kind(item)
            if file in places:  # the earliest kind of its tests
                kind = min(kind, places[file][0])
            places[file] = (kind, len(items), 0)  # after the documents' files of its kind
        elif file not in places:
            places[file] = (1, files_of[document], DOCUMENTS.index(document))
            files_of[document] += 1
    return places


def _file_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


_GATE_SKIP = pytest.mark.skip(
    reason="a slow gate (cold audits in two float orders, cold reruns): `make gate` runs them, "
    "CI as its own step"
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "gate" not in (config.option.markexpr or ""):  # chosen by `-m gate` only
        for item in items:
            if item.get_closest_marker("gate"):
                item.add_marker(_GATE_SKIP)
    places = _hand_out_order(items)
    items.sort(key=lambda item: places[_file_of(item)])  # stable: collection order in a file


EXTRA_TWIN_BATCHES = 2
"""The batches of calibration twins a claim left undecided by the first orders may add (8
orders become 20): 20 of 20 draws alone show a claim that at least 80% of valid computations
give at the error rate of a second look (docs/VERDICTS.md, "More draws"). A batch trains 36
nets, about 65 s of CPU; the guide's 22 orders decide its claims without more."""


@pytest.fixture(scope="session")
def calibration(order_count: int | None) -> Orders[CalibrationResults]:
    """Both calibration nets on seeds 0, 1, 2, trained per recipe in every valid float order
    (or loaded from the cache; at least --orders of them); the faithful order first. A claim
    they leave undecided is judged again over EXTRA_TWIN_BATCHES more batches of twins."""
    from claim_audit import Orders

    from uncertainty_claims.calibration.experiment import TWIN_BATCH
    from uncertainty_claims.orders.calibration import calibration_orders

    results, digests = calibration_orders(n_orders=order_count)
    budget = len(results) + EXTRA_TWIN_BATCHES * TWIN_BATCH
    return Orders(
        results,
        digests,
        more=lambda: Orders(*calibration_orders(n_orders=budget)),
        budget=budget,
    )


@pytest.fixture(scope="session")
def uncertainty(order_count: int | None) -> Orders[UncertaintyResult]:
    """The uncertainty guide's recipe from root key 0 in every valid float order (or loaded
    from the cache; at least --orders of them); the faithful order first."""
    from claim_audit import Orders

    from uncertainty_claims.orders.uncertainty import uncertainty_orders

    return Orders(*uncertainty_orders(n_orders=order_count))
