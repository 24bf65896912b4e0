"""The report only renders: no module of lib/report imports an experiment or JAX.

Read statically, so an import inside a function counts as much as one at the top: the
documents' side (lib/calibration/report.py, lib/uncertainty/report.py, lib/robustness)
supplies the data, and a project that loads the plugin never imports JAX through it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPORT = Path(__file__).resolve().parents[1] / "lib" / "report"
FORBIDDEN = ("lib.calibration", "lib.uncertainty", "lib.robustness", "jax", "flax")


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in `path`, relative imports resolved in lib.report."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # a module of lib/report: level 1 is lib.report, 2 is lib
                parts = ["lib", "report"][: 3 - node.level]
                base = ".".join(filter(None, [*parts, node.module]))
            else:
                base = node.module or ""
            found += [(node.lineno, base)] + [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return found


def forbidden(path: Path) -> list[str]:
    return sorted(
        {
            f"{path.name}:{line} imports {name}"
            for line, name in imported(path)
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)
        }
    )


@pytest.mark.parametrize("path", sorted(REPORT.glob("*.py")), ids=lambda p: p.name)
def test_report_module_imports_no_experiment_and_no_jax(path: Path) -> None:
    assert forbidden(path) == []


def test_the_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    """A function-local import, a `from` import and a relative one are all found."""
    module = tmp_path / "m.py"
    module.write_text(
        "import numpy\n"
        "def f():\n"
        "    from lib.calibration.evaluation import calibration_results\n"
        "    import jax.numpy as jnp\n"
        "    from lib import robustness\n"
    )
    assert forbidden(module) == [
        "m.py:3 imports lib.calibration.evaluation",
        "m.py:3 imports lib.calibration.evaluation.calibration_results",
        "m.py:4 imports jax.numpy",
        "m.py:5 imports lib.robustness",
    ]
