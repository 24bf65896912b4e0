"""docs/FAULTS.md is an index of the fault tests: it must not drift from them.

Every test it names must exist, and every test marked `fault` must be named in it, so a
fault test added, renamed or removed without its row fails here. Read statically: no
module is imported.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FAULTS = REPO / "docs" / "FAULTS.md"
# `claims/x.py::test_y[...]`, `claims/x.py::Class::test_y`, or `::test_y` (the file before).
_REFERENCE = re.compile(r"`(claims/[\w/]+\.py)?((?:::\w+)+)(?:\[[^\]`]*\])?`")
_FAULT_MARK = re.compile(r"\bmark\.fault\b")


def named_tests() -> set[tuple[str, str]]:
    """(file, test) of every test docs/FAULTS.md names, cell by cell of its tables."""
    named = set()
    for cell in FAULTS.read_text(encoding="utf-8").split("|"):
        last = None
        for match in _REFERENCE.finditer(cell):
            last = match.group(1) or last
            assert last, f"docs/FAULTS.md: {match.group(0)} names no file before it"
            named.add((last, match.group(2)[2:]))
    return named


def fault_tests(path: Path) -> dict[str, bool]:
    """Test name ("test_x" or "Class::test_x") -> whether it is marked `fault`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def marked(nodes) -> bool:
        return any(_FAULT_MARK.search(ast.unparse(node)) for node in nodes)

    module = marked(n.value for n in tree.body if isinstance(n, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in n.targets))  # fmt: skip
    tests = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            tests[node.name] = module or marked(node.decorator_list)
        elif isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, ast.FunctionDef) and method.name.startswith("test_"):
                    decorators = [*node.decorator_list, *method.decorator_list]
                    tests[f"{node.name}::{method.name}"] = module or marked(decorators)
    return tests


def test_every_test_named_in_faults_md_exists():
    missing = [
        f"{file}::{test}"
        for file, test in sorted(named_tests())
        if not (REPO / file).is_file() or test not in fault_tests(REPO / file)
    ]
    assert not missing, f"docs/FAULTS.md names tests that do not exist: {missing}"


def test_every_fault_test_is_named_in_faults_md():
    named = named_tests()
    unnamed = [
        f"{path.relative_to(REPO)}::{test}"
        for path in sorted((REPO / "claims").rglob("test_*.py"))
        for test, fault in fault_tests(path).items()
        if fault and (str(path.relative_to(REPO)), test) not in named
    ]
    assert not unnamed, f"tests marked fault without a row in docs/FAULTS.md: {unnamed}"
