"""pytest plugin: the controller gathers the claims' records, prints the table, writes report/."""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shlex
import sys
import threading
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from .. import cache
from ..engine.claim import (
    INPUTS,
    PROPERTY,
    SPEC_FIELDS,
    ClaimRecord,
    ClaimRefuted,
    ClaimSpec,
    FindingGone,
    spec_of,
)
from ..engine.sweep import parse_seeds
from ..render import table
from . import hooks, provenance, timeouts

META_PROPERTY = "claim_meta"  # a claim's fields, on its test's reports, for the controller
_CRASHED = "claims_crashed"  # in a worker's workerinput: tests whose worker died running them
_INPUTS_KEY = "claims_inputs"  # in a worker's workerinput: the controller's `_inputs`
_OUTPUT = "claims_audit"  # in a worker's workeroutput: `_process_output`
CLAIM_MARK = "claim"  # the mark Claims puts on each claim's test
MAX_ORDERS = 1000  # past it, a figure's prediction interval is within 0.5% of its limit
NOT_COLLECTED, DESELECTED, NOT_RUN = "not collected", "deselected", "not run"
_REPORT_DIR = pytest.StashKey[Path]()
_COLLECTED = pytest.StashKey[dict[str, dict]]()  # node id -> claim fields, before -k / -m
_SELECTED = pytest.StashKey[list[str]]()


class ProjectError(ValueError):
    """What the project told the plugin about itself cannot be used."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("claims audit")
    for name, kw in {
        "--report-dir": {
            "help": "where the audit report is written (default: report/ in the rootdir); write --report-dir=DIR as one word (pytest-dev/pytest#1435)"
        },
        "--report-errors-as-complete": {
            "action": "store_true",
            "help": "write a run whose claims ended in errors as the complete report (default: into report/partial/)",
        },
        "--no-report": {
            "action": "store_true",
            "help": "print the claims table but write no report files",
        },
        "--seeds": {
            "type": _seeds,
            "metavar": "SEEDS",
            "help": "robustness sweep over these seeds, e.g. 0-9 or 0,3,5-7 (the sweep_seeds fixture; the pytest_claims_audit_robustness hook)",
        },
        "--orders": {
            "type": _order_count,
            "metavar": "N",
            "help": "judge every claim over at least N valid float orders (default: each document's own; more narrow a figure's prediction interval, at one run each)",
        },
    }.items():
        group.addoption(name, **kw)
    for name, text, default in (
        ("method", "where the project documents how its claims are judged (a path or a URL)", ""),
        ("lock", "the project's lock file (name==version) from the rootdir", provenance.LOCK_FILE),
        ("versions", "the distributions the report names (default: pyproject's dependencies)", []),
        ("marks", "the marks a complete audit selects with -m (default: claim)", [CLAIM_MARK]),
    ):
        kind = None if isinstance(default, str) else "args"
        parser.addini(f"claims_audit_{name}", text, kind, default)


def _seeds(text: str) -> tuple[int, ...]:
    try:
        return parse_seeds(text)
    except ValueError as error:  # argparse shows an ArgumentTypeError's own message
        raise argparse.ArgumentTypeError(str(error)) from None


def _order_count(text: str) -> int:
    if text.strip() not in {str(n) for n in range(3, MAX_ORDERS + 1)}:
        raise argparse.ArgumentTypeError(
            f"expected a whole number of orders from 3 to {MAX_ORDERS}; got {text!r}"
        )
    return int(text)


@pytest.fixture(scope="session")
def order_count(request: pytest.FixtureRequest) -> int | None:
    """--orders: the least number of orders claims are judged over (None: the default)."""
    return request.config.getoption("--orders")


@pytest.fixture(scope="session")
def sweep_seeds(request: pytest.FixtureRequest) -> tuple[int, ...]:
    """The seeds of --seeds; skips the test when no sweep was asked for."""
    if (seeds := request.config.getoption("--seeds")) is None:
        pytest.skip("no robustness sweep asked for (pass --seeds, e.g. --seeds 0-9)")
    return seeds


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hooks)


@pytest.hookimpl(tryfirst=True)  # before the project's conftests read the cache folder
def pytest_configure(config: pytest.Config) -> None:
    cache.project_root = config.rootpath
    config.addinivalue_line(
        "markers", f"{CLAIM_MARK}(spec): a claim's test, set by claim_audit.Claims"
    )
    capture = config.pluginmanager.getplugin("capturemanager")
    if capture is not None:  # training progress reaches the terminal live, even from workers

        def write_live(line: str) -> None:
            with capture.global_and_fixture_disabled():
                print(line, file=sys.stderr, flush=True)

        cache.progress_writer = write_live
    # no test waits on another process's cache lock past its own budget
    cache.lock_timeout_s = budget_s(config) or cache.lock_timeout_s
    config.pluginmanager.register(timeouts, "claims-audit-timeouts")
    config.stash[INPUTS] = _inputs(config)
    if not hasattr(config, "workerinput"):
        config.stash[_REPORT_DIR] = _report_dir(config)
        _check_junit_path(config)
        config.pluginmanager.register(AuditCollector(config), "claims-audit-collector")


def _inputs(config: pytest.Config) -> str | None:
    """The project's digest of what its claims read: the controller's, in every worker."""
    if hasattr(config, "workerinput"):
        return config.workerinput.get(_INPUTS_KEY)
    inputs = config.hook.pytest_claims_audit_inputs(config=config)
    if inputs is not None and not (isinstance(inputs, str) and inputs):
        raise pytest.UsageError(
            f"pytest_claims_audit_inputs returned {inputs!r}: a digest (a non-empty str) or None"
        )
    return inputs


def budget_s(config: pytest.Config) -> float:
    """pytest-timeout's budget for one test in seconds; 0 when it is off or not loaded."""
    if (pytest_timeout := config.pluginmanager.getplugin("timeout")) is None:  # the module
        return 0.0
    try:
        return max(float(pytest_timeout.get_env_settings(config).timeout or 0), 0.0)
    except ValueError:  # pytest-timeout refuses it itself
        return 0.0


def _ends_the_process(config: pytest.Config) -> bool:
    """Whether a test past its budget ends pytest's own process: pytest-timeout's thread
    method (its os._exit) in a run without xdist workers, whose controller would write the
    table and the report."""
    if not budget_s(config) or config.pluginmanager.getplugin("dsession") is not None:
        return False
    pytest_timeout = config.pluginmanager.getplugin("timeout")
    return pytest_timeout.get_env_settings(config).method == "thread"


def _check_junit_path(config: pytest.Config) -> None:
    """Refuse an unwritable --junitxml up front: pytest's late OSError would cost the report."""
    if not (given := config.option.xmlpath):
        return
    path = Path(os.path.abspath(os.path.expanduser(os.path.expandvars(given))))
    existing = next(p for p in (path, *path.parents) if p.exists())
    if existing != path and not existing.is_dir():
        problem = f"lies under the file {existing}"
    elif not os.access(existing, os.W_OK):
        problem = f"cannot be written (no write permission on {existing})"
    else:
        return
    raise pytest.UsageError(f"--junitxml {given!r}: {path} {problem}; name a writable file")


def audited_project(config: pytest.Config) -> provenance.Project:
    """The project pytest audits; a ProjectError when the data hook's digests are unusable."""
    digests: dict[str, str] = {}
    for given in config.hook.pytest_claims_audit_data(config=config):
        if not isinstance(given, dict) or not all(
            isinstance(t, str) for t in (*given, *given.values())
        ):
            raise ProjectError(
                f"pytest_claims_audit_data must return a dict of name -> sha256 strings; got {given!r}"
            )
        for name, digest in given.items():
            if digests.setdefault(name, digest) != digest:
                raise ProjectError(
                    f"pytest_claims_audit_data gave {name!r} two digests: {digests[name]} and {digest}"
                )
    return provenance.Project(
        root=config.rootpath,
        lock=config.getini("claims_audit_lock"),
        data=digests,
        method=config.getini("claims_audit_method") or None,
        versions=tuple(config.getini("claims_audit_versions"))
        or provenance.project_requirements(config.rootpath),
    )


def _report_dir(config: pytest.Config) -> Path:
    """--report-dir from the starting folder; a usage error if empty, among sources, pytest#1435."""
    if (given := config.getoption("--report-dir")) is None:
        return config.rootpath / "report"
    if not given.strip():
        raise pytest.UsageError(
            f"--report-dir is empty ({given!r}; an unset shell variable?): name a folder"
        )
    try:
        path = (config.invocation_params.dir / Path(given).expanduser()).resolve()
    except RuntimeError as error:  # `~` without a home folder
        raise pytest.UsageError(f"--report-dir {given!r}: {error}") from None
    for source in (config.rootpath / p for p in ("", *config.getini("testpaths"))):
        if (source := source.resolve()).is_relative_to(path):
            raise pytest.UsageError(
                f"--report-dir {given!r} is {path}, which is or holds {source}: the report would be written among the project's files; name a folder of its own"
            )
    # pytest looks for the rootdir before any plugin declares its options, and takes an
    # existing folder after `--report-dir ` for a test path there (pytest-dev/pytest#1435).
    args = [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *config.invocation_params.args]
    spaced = any(a == "--report-dir" and b == given for a, b in itertools.pairwise(args))
    started = config.invocation_params.dir.resolve()
    inside = path.is_relative_to(started) and path.is_relative_to(config.rootpath.resolve())
    if spaced and os.path.exists(path) and not inside:  # False for a name too long: said later
        raise pytest.UsageError(
            f"--report-dir {given}: pytest takes an existing folder after an option for a test path when it looks for the rootdir (pytest-dev/pytest#1435; here it chose {config.rootpath}); write it as one word: {shlex.quote(f'--report-dir={given}')}"
        )
    return path


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    """Check each claim's test, attach its fields, and note what was collected and selected."""
    metas: dict[str, dict] = {}
    for item in items:
        if item.get_closest_marker(CLAIM_MARK) is None:
            continue
        if not isinstance(spec := spec_of(item), ClaimSpec):
            _refuse(
                item,
                f"{item.nodeid}: a claim is defined on its test with claim_audit.Claims (docs/ADDING_A_DOCUMENT.md), not with a bare @pytest.mark.claim",
            )
        if other := next((node for node, m in metas.items() if m["id"] == spec.id), None):
            _refuse(item, f"claim id {spec.id!r} is used by {other} and {item.nodeid}")
        if item.get_closest_marker("xfail") is not None:
            _refuse(
                item,
                f"{item.nodeid}: a claim records a known finding with finding='...' on its spec, not with xfail (its verdict is decided over float orders)",
            )
        item.extra_keyword_matches.add(spec.id)  # `pytest -k cal-02c` selects the claim
        meta = {name: getattr(spec, name) for name in SPEC_FIELDS} | {"expected": not spec.finding}
        item.user_properties.append((META_PROPERTY, json.dumps(meta)))
        metas[item.nodeid] = meta
    config.stash[_COLLECTED] = metas
    result = yield  # deselection (-k, -m, --deselect) and the other plugins' ordering
    config.stash[_SELECTED] = [i.nodeid for i in items if i.nodeid in metas]
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo
) -> Generator[None, Any, Any]:
    """A refuted claim (or a finding gone) fails with its verdict's message alone: a verdict
    is no error of the code, so the frames of the engine and its hooks are left out."""
    report = yield
    if call.excinfo is not None and call.excinfo.errisinstance((ClaimRefuted, FindingGone)):
        report.longrepr = f"{call.excinfo.typename}: {call.excinfo.value}"
    return report


def _refuse(item: pytest.Item, why: str) -> NoReturn:
    """A usage error found collecting: in an xdist worker, its session's `shouldfail` too,
    which the controller prints as its one line (the error alone ends in an INTERNALERROR)."""
    if hasattr(item.config, "workerinput"):
        item.session.shouldfail = why
    raise pytest.UsageError(why)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A replacement xdist worker skips the test its predecessor died running (it could end them all)."""
    config = item.config
    if hasattr(config, "workerinput") and item.nodeid in config.workerinput.get(_CRASHED, ()):
        pytest.skip("not run again: its worker died running it (reported as failed)")


def pytest_sessionfinish(session: pytest.Session) -> None:
    if hasattr(session.config, "workerinput"):
        session.config.workeroutput[_OUTPUT] = _process_output(session.config)


def _process_output(config: pytest.Config) -> str:
    """What a test process tells the controller (JSON): its cache events, environment, claims."""
    environment, selected = provenance.environment_of(config), config.stash.get(_SELECTED, [])
    output = {"events": cache.EVENTS, "environment": environment, "selected": selected}
    return json.dumps(output | {"collected": config.stash.get(_COLLECTED, None)})


def _preload(config: pytest.Config) -> None:
    """Import what the report needs (matplotlib, the documents) while the workers run."""
    try:
        from . import audit  # noqa: F401

        config.hook.pytest_claims_audit_documents(config=config)
    except Exception:  # the report imports them again, and says what failed
        return


class AuditCollector:
    """Controller-side: gathers claim records and writes the report at the end."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.started = time.time()
        self.records: dict[str, ClaimRecord] = {}
        self.expected: dict[str, bool] = {}  # claim id -> not a recorded finding
        self.cache_events: list[dict] = []
        self.environment = provenance.NO_ENVIRONMENT  # what the test processes said of their stack
        self.claims: dict[str, dict] = {}  # node id -> a claim's fields
        self.selected: set[str] | None = None  # None: no process said what it collected
        self.failed_unclaimed: dict[str, str] = {}  # failures reported without a claim's fields
        self.uncollected: list[str] = []  # test files that failed to import, say
        self.crashed: list[str] = []  # tests whose xdist worker died running them
        self.rerun: str | None = None  # --lf or --sw, when it ran only some tests
        self.registry_error: str | None = None
        self.robustness: dict | None = None
        self.notes: list[tuple[str, dict[str, bool]]] = []  # the summary's last lines, marked up

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if _ends_the_process(self.config):  # xdist's dsession is registered by now
            raise pytest.UsageError(
                "--timeout-method=thread ends the whole pytest process at a test past its budget when no xdist worker runs it: no table, no report; run with -n 1 (or more: that test's worker ends instead, its claim an ERROR), or with the signal method (the default)"
            )
        self.rerun = _rerun_of_failures(self.config)
        distributed = self.config.pluginmanager.getplugin("dsession") is not None
        reporting = not self.config.getoption("--no-report") or self.config.getoption("--seeds")
        if distributed and reporting:
            threading.Thread(target=_preload, args=(self.config,), daemon=True).start()

    @pytest.hookimpl(optionalhook=True)  # xdist's hooks, on the controller
    def pytest_configure_node(self, node) -> None:
        node.workerinput[_CRASHED] = list(self.crashed)
        node.workerinput[_INPUTS_KEY] = self.config.stash[INPUTS]

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched) -> None:
        self.crashed.append(crashitem)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        if _OUTPUT in getattr(node, "workeroutput", {}):  # no workeroutput: the worker crashed
            self._gather(node.workeroutput[_OUTPUT])

    def _gather(self, output: str) -> None:
        said = json.loads(output)
        self.cache_events.extend(said["events"])
        self.environment = provenance.merged_environments(self.environment, said["environment"])
        if said["collected"] is not None:
            self.claims.update(said["collected"])
            self.selected = (self.selected or set()) | set(said["selected"])

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        """A file that cannot be collected: whatever claims it holds are unknown."""
        if report.failed:
            self.uncollected.append(report.nodeid or str(report.fspath))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        properties = dict(report.user_properties)
        if META_PROPERTY not in properties:
            # e.g. xdist's report of a test whose worker crashed: matched to its claim at the end
            if report.failed:
                self.failed_unclaimed.setdefault(report.nodeid, _short(report))
            return
        meta = self.claims[report.nodeid] = json.loads(properties[META_PROPERTY])
        if PROPERTY in properties and (report.when == "call" or report.failed):
            record = ClaimRecord(**json.loads(properties[PROPERTY]))
            if report.when == "teardown":  # after the claim was judged
                why = f"its teardown raised {_short(report)} after the claim was judged"
                record = _error_record(record.to_json(), f"{why} ({record.verdict})")
            self.records[meta["id"]] = record
        elif PROPERTY not in properties and (report.failed or report.when == "call"):
            reason = "the test recorded nothing" if report.passed else _short(report)
            self.records.setdefault(meta["id"], _error_record(meta, reason))

    def _missing(self) -> dict[str, str]:
        """Claim id -> why it has no verdict, for each registered or collected claim."""
        try:  # every claim the documents make
            lists = self.config.hook.pytest_claims_audit_claims(config=self.config)
            registered = {s.id for listed in lists for specs in listed for s in specs.values()}
        except Exception as error:
            self.registry_error, registered = f"{type(error).__name__}: {error}", set()
        collected = {meta["id"] for meta in self.claims.values()}
        nodes = self.claims if self.selected is None else self.selected
        selected = {self.claims[n]["id"] for n in nodes}
        return {
            i: NOT_COLLECTED if i not in collected else NOT_RUN if i in selected else DESELECTED
            for i in sorted((registered | collected) - set(self.records))
        }

    def _partial_reasons(self, session: pytest.Session, missing: dict) -> tuple[list[str], bool]:
        """Why this run is not a complete audit (empty when it is), and whether that fails it."""
        config, stopped, rerun = self.config, session.shouldstop or session.shouldfail, self.rerun
        named, uncollected = _named_subset(config), sorted(set(self.uncollected))
        interrupted = session.exitstatus == pytest.ExitCode.INTERRUPTED
        hooked = config.pluginmanager.hook.pytest_claims_audit_claims.get_hookimpls()
        cannot_tell = [] if hooked else _options_leaving_tests_out(config)
        foreign = config.inipath is not None and config.inipath.parent != config.rootpath
        unloaded = [
            os.path.relpath(p, config.rootpath.resolve()) for p in _conftests_cut_off(config)
        ]
        reasons = [
            "interrupted" if interrupted else stopped and f"stopped early: {stopped}",
            named and f"only part of the suite named: {', '.join(named)}",
            rerun and f"{rerun}: only the tests that failed last time ran",
            self.selected is None and "no test process said which claims it collected (crashed?)",
            self.registry_error
            and f"the hook pytest_claims_audit_claims failed ({self.registry_error}): no run can be told complete, and the run fails",
            uncollected
            and f"{len(self.uncollected)} test files could not be collected, so their claims are unknown: {_some(uncollected)}",
            cannot_tell
            and f"{' and '.join(cannot_tell)} left tests out, and no hook pytest_claims_audit_claims lists the documents' claims: this run cannot tell whether every claim ran",
            foreign  # -c, --rootdir
            and f"pytest's rootdir {config.rootpath} holds not the configuration it read ({config.inipath}; -c, --rootdir?): the project's git and lock provenance cannot be told",
            unloaded
            and f"--confcutdir keeps the project's {', '.join(unloaded)} from loading (its documents, its hooks): this run cannot tell whether every claim ran",
            *self.environment["partial"],
        ]
        for why, label in {  # a rerun leaves out the tests, and the files, that did not fail
            DESELECTED: f"deselected ({rerun + ', ' if rerun else ''}-k, -m, --deselect)",
            NOT_COLLECTED: f"not collected ({rerun or '--ignore, a path or python_functions leaving their tests out, or a spec without a test'})",
            NOT_RUN: "selected but not run",
        }.items():
            ids = [claim_id for claim_id, reason in missing.items() if reason == why]
            reasons.append(ids and f"{len(ids)} claims {label}: {_some(ids)}")
        errors = sorted(r.id for r in self.records.values() if r.verdict == "error")
        if not config.getoption("--report-errors-as-complete"):
            reasons.append(errors and f"{len(errors)} claims in error: {_some(errors)}")
        fails = bool(self.registry_error or cannot_tell or foreign or unloaded)
        return [reason for reason in reasons if reason], fails

    def _lost_claims(self, missing: dict[str, str]) -> list[str]:
        """Claims lost without a -k, -m or path asking for it (--ignore, a test never run)."""
        option = self.config.option
        asked = option.keyword or option.deselect or _named_subset(self.config) or self.rerun
        marks = set(option.markexpr.replace("(", " ").replace(")", " ").split())
        if asked or not marks <= {*self.config.getini("claims_audit_marks"), "or"}:
            return []
        return [i for i, why in missing.items() if why in (NOT_COLLECTED, NOT_RUN)]

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config = self.config
        self._gather(_process_output(config))  # all of it without xdist
        for nodeid, reason in self.failed_unclaimed.items():  # a crashed worker's claims
            if (meta := self.claims.get(nodeid)) is not None and meta["id"] not in self.records:
                self.records[meta["id"]] = _error_record(meta, reason)
        if not self.records:
            return
        self.expected = {meta["id"]: meta["expected"] for meta in self.claims.values()}
        missing = self._missing()
        partial, failing = self._partial_reasons(session, missing)
        if partial:
            self._note(f"partial run ({'; '.join(partial)}): not the complete audit", yellow=True)
        if lost := self._lost_claims(missing):
            lost_ones = (
                f"{len(lost)} of the documents' claims without a -k, -m or path asking for it"
            )
            self._note(f"the audit lost {lost_ones} ({_some(lost)}): the run fails", red=True)
        # a known finding (strict xfail) whose experiment crashed would pass: errors fail the run
        if failing or lost or any(r.verdict == "error" for r in self.records.values()):
            _fail(session)
        seeds, no_report = config.getoption("--seeds"), config.getoption("--no-report")
        if no_report and seeds is None:
            return
        try:
            from . import audit  # imported late: it pulls in matplotlib

            documents = config.hook.pytest_claims_audit_documents(config=config)
        except Exception as error:  # e.g. MPLBACKEND naming no backend
            why = f"cannot load the report's code or documents ({type(error).__name__}: {error})"
            if seeds is not None:
                self._note(f"robustness not computed: {why}", red=True)
            self._note(f"report not written: {why}", red=True)
            return _fail(session)
        records, no_robustness = list(self.records.values()), None
        if partial:  # not the audit's claims, or cut short: nothing more is computed
            no_robustness = "this run is partial" if seeds is not None else None
        else:
            try:
                names = [d.name for d in audit.audited(records, documents)]
                hook = config.hook.pytest_claims_audit_robustness
                section = hook(config=config, documents=names, sweep=seeds)
                self.robustness = None if section is None else audit.checked(section)
            except audit.ReportError as error:
                no_robustness = str(error)
            except Exception as error:
                no_robustness = (
                    f"cannot compute the robustness section ({type(error).__name__}: {error})"
                )
            if seeds is not None and self.robustness is None and not no_robustness:
                no_robustness = "--seeds asks for a sweep, but no pytest_claims_audit_robustness hook computed one: implement it in the project's conftest.py, returning claim_audit.seed_section(...) (the hook is declared in claim_audit.report.hooks), or run without --seeds"
            if no_robustness:
                _fail(session)
        if no_robustness:
            self._note(f"robustness not computed: {no_robustness}", red=True)
        if no_report:
            return
        report_dir = config.stash[_REPORT_DIR]
        target = report_dir / "partial" if partial else report_dir
        try:
            project = audited_project(config)
            if partial and target.is_symlink():
                raise audit.ReportError(
                    f"{target} is a symbolic link, where a partial run's report goes; move it away (the report in {report_dir} is left as it was)"
                )
            written = audit.write_report(
                target,
                records=records,
                expected=self.expected,
                cache_events=self.cache_events,
                wall_s=time.time() - self.started,
                robustness=self.robustness,
                partial=partial or None,
                missing=missing or None,
                documents=documents,
                figure_cache=cache.default_cache_dir() / "figures",
                project=project,
                environment=self.environment["metadata"],
            )
        except (audit.ReportError, ProjectError, OSError) as error:
            self._note(f"report not written: {error}", red=True)
            return _fail(session)
        self.notes += [(f"wrote {path}", {}) for path in written]
        if partial and (report_dir / "audit.json").is_file():
            self._note(f"the complete audit in {report_dir} is left as it was")
        elif partial:
            self._note(f"no complete audit in {report_dir} yet: run the whole suite")

    def _note(self, line: str, **markup: bool) -> None:
        self.notes.append((line, markup))

    def pytest_terminal_summary(self, terminalreporter) -> None:
        if not self.records:
            return
        config, write, records = self.config, terminalreporter.write_line, [*self.records.values()]
        width, verbosity = config.get_terminal_writer().fullwidth, config.option.verbose
        for line in table.render(records, self.expected, width=width, verbosity=verbosity):
            write(line)
        errors: dict[str, list[str]] = {}  # why a claim could not be checked -> its ids
        for record in (r for r in records if r.verdict == "error"):
            errors.setdefault(record.details.get("error", ""), []).append(record.id)
        for error, ids in errors.items():
            write(f"ERROR in {_some(ids, 3)}: {error}", red=True)
        if self.robustness is not None:
            for line in table.render_robustness(self.robustness, width):
                write(line)
        findings = [i for i, r in self.records.items() if r.verdict == "refuted"]
        findings = [i for i in findings if not self.expected.get(i, True)]
        if config.option.runxfail and findings:
            write(
                f"--runxfail: the known findings {_some(findings)} count as failed tests, so the run fails; their verdicts are as recorded",
                yellow=True,
            )
        for line, markup in self.notes:
            write(line, **markup)


def _fail(session: pytest.Session) -> None:
    if session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _some(ids: list[str], shown: int = 5) -> str:
    """The first `shown` ids, and how many more."""
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def _error_record(meta: dict, reason: str) -> ClaimRecord:
    figures = dict.fromkeys(("published", "measured", "tolerance"), "-")
    fields = {name: meta[name] for name in SPEC_FIELDS}
    return ClaimRecord(**fields, **figures, verdict="error", details={"error": reason})


def _named_subset(config: pytest.Config) -> list[str]:
    """The paths a run was started on that name part of the suite (a folder outside it cuts
    nothing): the command line's, or without any, the folder pytest was started in. The
    suite is the testpaths, or without any, the whole rootdir."""
    if config.args_source == pytest.Config.ArgsSource.TESTPATHS:
        return []
    started = config.args_source == pytest.Config.ArgsSource.INVOCATION_DIR
    testpaths = [(config.rootpath / p).resolve() for p in config.getini("testpaths")]
    testpaths = testpaths or [config.rootpath.resolve()]
    named = []
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        holds_all = all(t.is_relative_to(path) for t in testpaths)
        outside = not any(t.is_relative_to(path) or path.is_relative_to(t) for t in testpaths)
        if "::" in arg or not path.is_dir() or not (holds_all or outside):
            where = os.path.relpath(path, config.rootpath.resolve())
            named.append(f"{where} (where pytest started, naming no path)" if started else arg)
    return named


def _conftests_cut_off(config: pytest.Config) -> list[Path]:
    """The rootdir's conftest.py files that --confcutdir keeps pytest from loading: those
    between the rootdir and that folder, which pytest loads only from there down."""
    if (given := config.getoption("confcutdir")) is None:
        return []
    cut, root = (config.invocation_params.dir / given).resolve(), config.rootpath.resolve()
    folders = [root, *(p for p in cut.parents if p.is_relative_to(root) and p != root)]
    found = (f / "conftest.py" for f in folders if not f.is_relative_to(cut))
    return [conftest for conftest in found if conftest.is_file()]


def _options_leaving_tests_out(config: pytest.Config) -> list[str]:
    """The options given that leave tests out of collection, unasked by -k, -m or a path."""
    given = [o for o in ("--ignore", "--ignore-glob") if config.getoption(o)]
    collects = ("python_files", "python_classes", "python_functions")
    overrides = config.getoption("override_ini") or []
    return given + [f"-o {o}" for o in overrides if o.partition("=")[0].strip() in collects]


def _rerun_of_failures(config: pytest.Config) -> str | None:
    """`--lf` or `--sw` when pytest's cache has failures for it to rerun, else None."""
    cached = getattr(config, "cache", None)  # None under -p no:cacheprovider
    if cached is not None and config.getoption("lf", False) and cached.get("cache/lastfailed", {}):
        return "--lf"
    stepwise = config.getoption("stepwise", False) and not config.getoption("stepwise_reset", False)
    last = cached.get("cache/stepwise", None) if stepwise and cached is not None else None
    return "--sw" if isinstance(last, dict) and last.get("last_failed") else None


def _short(report: pytest.TestReport) -> str:
    if isinstance(report.longrepr, tuple):  # a skip: (path, line, "Skipped: why")
        return str(report.longrepr[-1])
    crash = getattr(report.longrepr, "reprcrash", None)
    return crash.message.splitlines()[0] if crash else str(report.longrepr).splitlines()[-1]
