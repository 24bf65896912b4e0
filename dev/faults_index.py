"""Print the index of the fault tests: what was tried and what the suite does about it.

Every test marked `fault` (by its module's `pytestmark`, its class's or its own decorator)
states in its docstring the fault it tries and what the suite does; for a fault that once
broke the rule (a wrong number, a stale result, a lost report, a crash naming nothing) it
names the fix ("Bug fixed: ... (file `function`)"). This script reads those docstrings
statically (no test module is imported) and prints them as one Markdown table:

    python dev/faults_index.py            # claims/, tests/ and engine/tests/
    python dev/faults_index.py tests      # the folders given

Run the fault tests themselves with `.venv/bin/pytest tests engine/tests -m fault -n auto`.
`tests/test_faults_index.py` checks that every fault test has a docstring, and runs `index`.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOLDERS = ("claims", "tests", "engine/tests")
_FAULT_MARK = re.compile(r"\bmark\.fault\b")


def _marked(nodes) -> bool:
    return any(_FAULT_MARK.search(ast.unparse(node)) for node in nodes)


def fault_tests(path: Path) -> dict[str, str | None]:
    """Test name ("test_x" or "Class::test_x") -> its docstring, for each test of the file
    marked `fault`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = _marked(
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and any(getattr(target, "id", None) == "pytestmark" for target in node.targets)
    )
    candidates = []  # (name, function, its decorators and its class's)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            candidates.append((node.name, node, node.decorator_list))
        elif isinstance(node, ast.ClassDef):
            candidates += [
                (
                    f"{node.name}::{method.name}",
                    method,
                    [*node.decorator_list, *method.decorator_list],
                )
                for method in node.body
                if isinstance(method, ast.FunctionDef)
            ]
    return {
        name: ast.get_docstring(function)
        for name, function, decorators in candidates
        if function.name.startswith("test_") and (module or _marked(decorators))
    }


def all_fault_tests(root: Path = REPO, folders=FOLDERS) -> dict[str, str | None]:
    """ "file::test" (relative to root) -> docstring, for every fault test under the folders."""
    found = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("test_*.py")):
            for test, doc in fault_tests(path).items():
                found[f"{path.relative_to(root).as_posix()}::{test}"] = doc
    return found


def summary(doc: str | None) -> str:
    """A docstring's first paragraph on one line, safe in a Markdown table cell."""
    first = (doc or "").strip().split("\n\n")[0]
    return " ".join(first.split()).replace("|", "\\|")


def index(root: Path = REPO, folders=FOLDERS) -> str:
    """The fault index as a Markdown table, one row per fault test."""
    rows = [
        f"| `{test}` | {summary(doc)} |" for test, doc in all_fault_tests(root, folders).items()
    ]
    return "\n".join(["| Test | Fault, and what the suite does |", "|---|---|", *rows]) + "\n"


if __name__ == "__main__":
    print(index(folders=sys.argv[1:] or FOLDERS), end="")
