"""Cache keys are explicit (lib/cache.py): every result's key carries a digest of the
package's whole source, so an edit to any file of lib/ gives every result another key (it is
recomputed), and an edit outside the package (its tests, its docs) does not. What claims/
computes and caches (the calibration bootstrap) carries its own package's source too."""

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
    import sys
    from uncertainty_claims import cache
    assert cache.__file__.startswith(sys.argv[1]), cache.__file__  # the copy, not the repo
    print(cache.PACKAGE_SOURCE)
"""


def package_source(root: Path, script: str = DIGEST_OF) -> str:
    """What `script` prints in a child whose import path starts at the copy `root`."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script), str(root)],
        cwd=root,
        env=child_env(PYTHONPATH=str(root)),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(
    "inside", ["lib/calibration/evaluation.py", "lib/data.py", "lib/uncertainty/model.py"]
)
def test_an_edit_in_the_package_changes_every_key(tmp_path, inside):
    """An edit to any source file of the package changes `PACKAGE_SOURCE`, which every key
    carries; an edit to a file beside the package (a test) leaves it as it was. The first
    file is the defect a review found when keys listed their sources by hand: the bootstrap
    samples' key left out evaluation.py, which owns the subsample."""
    copy = tmp_path / "repo"
    # The folder lib/ is the package uncertainty_claims: the copy, first on the path, is it.
    package = copy / "uncertainty_claims"
    shutil.copytree(REPO_ROOT / "lib", package, ignore=shutil.ignore_patterns("__pycache__"))
    beside = copy / "tests" / "test_something.py"
    beside.parent.mkdir()
    beside.write_text("def test_nothing():\n    pass\n")
    original = package_source(copy)
    beside.write_text(beside.read_text() + "\n# an edit elsewhere\n")
    assert package_source(copy) == original
    edited = package / Path(inside).relative_to("lib")
    edited.write_text(edited.read_text() + "\n# an edit in the package\n")
    assert package_source(copy) != original


CLAIMS_DIGEST_OF = """
    import sys
    from readings.calibration import bootstrap
    assert bootstrap.__file__.startswith(sys.argv[1]), bootstrap.__file__  # the copy
    print(bootstrap.CLAIMS_SOURCE)
"""


def test_an_edit_where_the_bootstrap_is_computed_changes_its_key(tmp_path):
    """The bootstrap samples are computed in claims/readings/calibration/, beside the
    library: their key carries that package's source too, so an edit there gives them
    another key."""
    from readings.calibration import bootstrap

    key = bootstrap.samples_key(("yat",), (0,), "faithful", 10, 1)
    assert key["claims_source"] == bootstrap.CLAIMS_SOURCE

    shutil.copytree(
        REPO_ROOT / "claims" / "readings",
        tmp_path / "readings",
        ignore=shutil.ignore_patterns("__pycache__"),
    )

    original = package_source(tmp_path, CLAIMS_DIGEST_OF)
    assert original == bootstrap.CLAIMS_SOURCE
    measures = tmp_path / "readings" / "calibration" / "measures.py"
    measures.write_text(measures.read_text() + "\n# an edit beside the bootstrap\n")
    assert package_source(tmp_path, CLAIMS_DIGEST_OF) != original
