"""Cache keys are derived, never listed by hand: editing any module in the import closure
of a cached result's code gives that result another key (so it is recomputed), and editing
a module outside it does not."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from fault_tools import REPO_ROOT, TIMEOUT_S, child_env

pytestmark = pytest.mark.fault

DIGEST_OF = """
    import importlib, sys
    module = importlib.import_module(sys.argv[1])
    assert module.__file__.startswith(sys.argv[2]), module.__file__  # the copy, not the repo
    print(module._CODE_DIGEST)
"""

# (module keyed by its import closure, a file in that closure owned by another package,
#  a file outside it). The first row is the defect a review found: the bootstrap samples'
#  key listed its sources by hand and left out evaluation.py, which owns the subsample.
CASES = [
    (
        "uncertainty_claims.calibration.claims.bootstrap",
        "lib/calibration/evaluation.py",
        "lib/render/table.py",
    ),
    # The claims' specs (their wording) are outside the bootstrap's key: they import it, not back.
    (
        "uncertainty_claims.calibration.claims.bootstrap",
        "lib/engine/effects.py",
        "lib/calibration/claims/specs.py",
    ),
    ("uncertainty_claims.calibration.experiment", "lib/data.py", "lib/uncertainty/model.py"),
    ("uncertainty_claims.uncertainty.results", "lib/health.py", "lib/calibration/models.py"),
]


def code_digest(root: Path, module: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(DIGEST_OF), module, str(root)],
        cwd=root,
        env=child_env(PYTHONPATH=str(root)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(("module", "inside", "outside"), CASES, ids=[c[0] for c in CASES])
def test_an_edit_in_the_closure_changes_the_key(tmp_path, module, inside, outside):
    """An edit to a file in a cached result's import closure gives the result another key (so it
    is recomputed); an edit outside it leaves the key as it was."""
    copy = tmp_path / "repo"
    # The folder lib/ is the package uncertainty_claims: the copy, first on the path, is it.
    package = copy / "uncertainty_claims"
    shutil.copytree(REPO_ROOT / "lib", package, ignore=shutil.ignore_patterns("__pycache__"))
    inside, outside = (package / Path(name).relative_to("lib") for name in (inside, outside))
    original = code_digest(copy, module)
    outside.write_text(outside.read_text() + "\n# an edit elsewhere\n")
    assert code_digest(copy, module) == original
    inside.write_text(inside.read_text() + "\n# an edit in the closure\n")
    assert code_digest(copy, module) != original
