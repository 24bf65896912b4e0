"""The fault tests are their own index: each states in its docstring the fault and what the
suite does (`dev/faults_index.py` prints them as one table). Read statically: no test
module is imported.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _faults_index():
    spec = importlib.util.spec_from_file_location("faults_index", REPO / "dev" / "faults_index.py")  # fmt: skip
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


faults_index = _faults_index()


def test_every_fault_test_has_a_docstring():
    """A test marked `fault` (module `pytestmark`, class or function decorator) without a
    docstring would be a row of the fault index that says nothing: each must have one."""
    tests = faults_index.all_fault_tests(REPO)
    # The scan must see the three ways of marking, or it checks nothing.
    assert len(tests) > 50
    assert "engine/tests/test_cache.py::test_second_call_is_a_hit" in tests  # module pytestmark
    assert "tests/test_data.py::TestBadData::test_unknown_split" in tests  # class decorator
    assert "tests/test_fetch_data.py::test_a_missing_file_is_an_error" in tests  # decorator
    assert "tests/test_data.py::test_to_float_scales_to_unit_interval" not in tests
    undocumented = sorted(test for test, doc in tests.items() if not (doc or "").strip())
    assert not undocumented, f"fault tests without a docstring: {undocumented}"


def test_the_index_has_a_row_for_every_fault_test():
    """dev/faults_index.py runs and lists every fault test with its docstring."""
    table = faults_index.index(REPO)
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    tests = faults_index.all_fault_tests(REPO)
    assert [row.split("`")[1] for row in rows] == list(tests)
    assert all(row.count(" | ") == 1 and row.rstrip(" |").split(" | ")[1] for row in rows)
