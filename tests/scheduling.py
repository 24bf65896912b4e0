"""How this suite's tests are spread over xdist workers (the root conftest.py uses it).

- One document's test files (test_<document>*.py) run on one worker. Their tests wait on
  the same trained results: spread over workers, every worker would queue on one
  document's trainings in turn; this way the two documents' experiments train side by
  side (a cold audit on 2 cores: 128 s instead of 143 s). Other tests are load-balanced one
  by one.
- The tests named `alone` (the last in the collection) start only when no other test is
  running: at most the one test another worker holds back may run beside them.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

DOCUMENTS = ("calibration", "uncertainty")  # the suite's fixtures of each document's results

ALONE = (
    "tests/test_multiprocess.py::"
    "test_two_processes_hold_the_one_process_results_and_only_process_0_writes",
)
"""This suite's tests that need the whole machine: three JAX processes, 38 s alone on 2
cores, over a minute beside another worker's training."""


def document_of(nodeid: str, documents: tuple[str, ...]) -> str | None:
    """The document whose experiments a test file checks, by its name: test_<document>*.py."""
    stem = nodeid.split("::", 1)[0].rpartition("/")[2].removesuffix(".py")
    return next((d for d in documents if stem.startswith(f"test_{d}")), None)


class ByDocument(LoadScopeScheduling):
    def __init__(self, config, log=None, *, documents: tuple[str, ...], alone: tuple[str, ...]):
        super().__init__(config, log)
        self._documents = documents
        self._alone = alone

    def _split_scope(self, nodeid: str) -> str:
        return document_of(nodeid, self._documents) or nodeid

    def _reschedule(self, node) -> None:
        # A worker runs a test only once it holds the next one: with one test left it is
        # idle, holding it until it is sent more or shut down. So an `alone` test goes out
        # once no worker holds more than one; the others then shut down, each running only
        # its held test (the suite orders quick tests last) beside it.
        alone_next = bool(self.workqueue) and next(iter(self.workqueue)) in self._alone
        if alone_next and any(self._pending_of(w) > 1 for w in self.assigned_work.values()):
            return  # the worker that gets down to one held test next takes it
        super()._reschedule(node)
