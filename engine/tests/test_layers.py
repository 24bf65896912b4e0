"""The report only renders, and the engine judges: no module of the engine's report, render
or engine rooms (engine/claim_audit) imports a document, an experiment or JAX, and the
engine room imports neither the plugin nor the rendering.

Read statically, so an import inside a function counts as much as one at the top: the
documents' side (lib/, claims/) supplies the data and the figures, and a project that loads
the plugin never imports JAX through it. No file of the engine's distribution names a
document or the words of its subject.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parents[1] / "claim_audit"
DOCUMENTS = ("uncertainty_claims", "suite", "jax", "flax")
# What each room may not import: the report and its rendering no document's code, data or
# metrics; the rendering not the report; the engine, besides, not the report that shows its
# verdicts.
FORBIDDEN = {
    "report": DOCUMENTS,
    "render": (*DOCUMENTS, "claim_audit.report"),
    "engine": (*DOCUMENTS, "claim_audit.report", "claim_audit.render"),
}
ROOM_FILES = [(room, path) for room in FORBIDDEN for path in sorted((ENGINE / room).glob("*.py"))]


def test_every_room_has_modules_to_check() -> None:
    assert {
        room: sum(r == room for r, _ in ROOM_FILES) >= 3 for room in FORBIDDEN
    } == dict.fromkeys(FORBIDDEN, True)


def imported(path: Path, room: str = "report") -> list[tuple[int, str]]:
    """(line, module) of every import in `path`, relative imports resolved in its room."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # a module of a room: level 1 is the room, 2 is the package
                parts = ["claim_audit", room][: 3 - node.level]
                base = ".".join(filter(None, [*parts, node.module]))
            else:
                base = node.module or ""
            found += [(node.lineno, base)] + [(node.lineno, f"{base}.{a.name}") for a in node.names]
    return found


def forbidden(path: Path, room: str = "report") -> list[str]:
    return sorted(
        {
            f"{path.name}:{line} imports {name}"
            for line, name in imported(path, room)
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[room])
        }
    )


@pytest.mark.parametrize(("room", "path"), ROOM_FILES, ids=lambda p: getattr(p, "name", p))
def test_a_room_imports_no_document_and_no_jax(room: str, path: Path) -> None:
    assert forbidden(path, room) == []


def test_the_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    """A function-local import, a `from` import and a relative one are all found."""
    module = tmp_path / "m.py"
    module.write_text(
        "import numpy\n"
        "def f():\n"
        "    from uncertainty_claims.calibration.evaluation import calibration_results\n"
        "    import jax.numpy as jnp\n"
        "    from .. import report\n"
    )
    assert forbidden(module, "render") == [
        "m.py:3 imports uncertainty_claims.calibration.evaluation",
        "m.py:3 imports uncertainty_claims.calibration.evaluation.calibration_results",
        "m.py:4 imports jax.numpy",
        "m.py:5 imports claim_audit.report",
    ]


WRITER = """
import json, sys
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from claim_audit.report import audit
from claim_audit.engine.claim import ClaimRecord
from claim_audit.render.documents import Document, FigureSpec, Source


def line(data):
    fig = Figure(figsize=(2, 2), dpi=40)
    FigureCanvasAgg(fig)
    fig.add_subplot().plot(data["y"])
    return fig


toy = Document(
    "toy",
    Source("A toy", "note"),
    lambda: {"slope": 2.0},
    (FigureSpec("line.png", "The line.", ("toy-1",), line),),
    lambda robustness: {"line.png": {"y": np.arange(3.0)}},
)
record = ClaimRecord("toy-1", "toy", "Fit", "a claim", "2.0", "2.0", "± 0.1", "holds", {})
audit.write_report(
    Path(sys.argv[1]), records=[record], expected={}, cache_events=[], wall_s=0.0,
    documents=[[toy]], figure_cache=Path(sys.argv[2]),
)
print(json.dumps({"jax": "jax" in sys.modules, "flax": "flax" in sys.modules}))
"""


def test_a_report_of_a_project_without_jax_imports_no_jax(tmp_path: Path) -> None:
    """A document registered by another project: its section, figure and source reach the
    report, and writing it imports neither JAX nor Flax (no device is recorded)."""
    import json
    import subprocess
    import sys

    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "report"), str(tmp_path / "figures")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == {"jax": False, "flax": False}
    written = json.loads((tmp_path / "report" / "audit.json").read_text())
    assert written["toy"] == {"slope": 2.0}
    assert [f["file"] for f in written["figures"]] == ["line.png"]
    assert written["metadata"]["device"] is None
    assert written["metadata"]["documents"] == {"toy": {"title": "A toy", "kind": "note", "url": None}}  # fmt: skip
    assert (tmp_path / "report" / "figures" / "line.svg").is_file()
    assert "A toy" in (tmp_path / "report" / "audit.md").read_text()


# The documents' names and the words of their subjects ("nothing in the engine names
# either document or its vocabulary"): the engine speaks of claims, orders and seeds, and a
# project supplies its own words (sections, seed names, versions, links).
DOCUMENT_WORDS = re.compile(
    r"calibrat|uncertaint|temperature|root.key|\bnets?\b|fashion|mnist|\byat\b|relu|dropout"
    r"|ensemble|heteroscedastic|aleatoric|epistemic|\bflax\b|\bnnx\b",
    re.IGNORECASE,
)
ENGINE_FILES = sorted(
    path
    for path in ENGINE.parent.rglob("*")
    if path.is_file()
    and path.suffix in (".py", ".md", ".toml", ".tmpl")
    and not {"build", "__pycache__"} & set(path.parts)
    and path.relative_to(ENGINE.parent).parts[0] != "tests"  # its tests name what they refuse
    and not any(part.startswith(".") for part in path.relative_to(ENGINE.parent).parts)
    and not any(part.endswith(".egg-info") for part in path.parts)
)


def test_the_engine_has_files_to_read() -> None:
    known = [
        "README.md",
        "pyproject.toml",
        "claim_audit/engine/claim.py",
        "claim_audit/report/plugin.py",
    ]
    assert all(ENGINE.parent / name in ENGINE_FILES for name in known)


@pytest.mark.parametrize("path", ENGINE_FILES, ids=lambda p: str(p.relative_to(ENGINE.parent)))
def test_an_engine_file_names_no_document_word(path: Path) -> None:
    found = [
        (number, match.group())
        for number, line in enumerate(path.read_text().splitlines(), 1)
        for match in DOCUMENT_WORDS.finditer(line)
    ]
    assert not found, f"{path}: the documents' words (line, word): {found}"
