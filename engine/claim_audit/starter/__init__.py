"""`python -m claim_audit new NAME`: docs/ADDING_A_DOCUMENT.md's worked example, renamed."""

from __future__ import annotations

import importlib.util
import io
import keyword
import re
import shutil
import tokenize
from importlib import resources
from pathlib import Path

EXAMPLE = "toy"  # the example's document name, replaced by the new one's


def starter_files(name: str) -> dict[str, str]:
    """File name -> text of the starter for `name`; a ValueError says why a name will not do."""
    word = re.compile(rf"(?<![A-Za-z0-9]){EXAMPLE}(?![A-Za-z0-9])")  # test_toy.py too
    templates = [t for t in resources.files(__package__).iterdir() if t.name.endswith(".tmpl")]
    texts = {t.name.removesuffix(".tmpl"): t.read_text(encoding="utf-8") for t in templates}
    code = "\n".join(text for file, text in texts.items() if file.endswith(".py"))
    tokens = tokenize.generate_tokens(io.StringIO(code).readline)
    valid = re.fullmatch(r"[a-z][a-z0-9_]*", name) and not keyword.iskeyword(name)
    files = {word.sub(name, f): word.sub(name, texts[f]) for f in sorted(texts)} if valid else {}
    if not valid:
        why = "is not a module name: lowercase letters, digits and _, starting with a letter"
    elif name.startswith("test") or name.endswith("_test"):
        why = f"would have pytest collect the recipe {name}.py as a test module"
    elif name != EXAMPLE and name in {t.string for t in tokens if t.type == tokenize.NAME}:
        why = "is a name the starter's code uses already (a module, fixture, function or variable)"
    elif len(files) < len(texts):  # `new conftest`: its recipe would be the conftest.py
        why = f"names the starter's own {name}.py"
    else:
        return files
    raise ValueError(f"{name!r} {why}; choose another name")


def _taken(name: str, folder: Path) -> str | None:
    """Where a module `name` is found already (`new numpy`) but in `folder`, else None."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):  # in sys.modules without a spec: taken all the same
        return name
    if spec is None or (
        spec.has_location and Path(spec.origin).resolve().parent == folder.resolve()
    ):
        return None
    return spec.origin or "a namespace package"


def write_starter(name: str, folder: Path) -> list[Path]:
    """Write the starter for `name` into `folder` (made if needed), whole or not at all."""
    files = starter_files(name)
    if there := [folder / f for f in files if (folder / f).exists()]:
        raise FileExistsError(f"would overwrite {', '.join(map(str, there))}")
    if taken := _taken(name, folder):
        raise ValueError(
            f"a module {name!r} exists already ({taken}); the starter's {name}.py would hide it or be hidden by it: choose another name"
        )
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    placed: list[Path] = []
    try:
        for file_name, text in files.items():
            with (folder / file_name).open("x", encoding="utf-8") as handle:  # never overwrites
                placed.append(folder / file_name)
                handle.write(text)
    except BaseException:
        for path in placed:
            path.unlink(missing_ok=True)
        if made:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return placed
