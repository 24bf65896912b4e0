"""A starter for a new document's audit: the worked example of docs/ADDING_A_DOCUMENT.md, its
document named as the author chooses (`python -m claim_audit new NAME`)."""

from __future__ import annotations

import importlib.util
import io
import keyword
import os
import re
import shutil
import tempfile
import tokenize
from importlib import resources
from pathlib import Path

EXAMPLE = "toy"  # the example's document name, replaced by the new one's


def starter_files(name: str) -> dict[str, str]:
    """File name -> text of a starter for the document `name` (NAME.py, test_NAME.py,
    conftest.py, pytest.ini); ValueError for a name that would not work as its module's."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise ValueError(
            f"a document's name becomes a module name: lowercase letters, digits and _, "
            f"starting with a letter; got {name!r}"
        )
    if name.startswith("test") or name.endswith("_test"):
        raise ValueError(
            f"{name!r}: pytest would collect the recipe {name}.py as a test module; choose a "
            "name that neither starts with test nor ends with _test"
        )
    word = re.compile(rf"(?<![A-Za-z0-9]){EXAMPLE}(?![A-Za-z0-9])")  # test_toy.py too
    templates = sorted(resources.files(__package__).iterdir(), key=lambda t: t.name)
    templates = [t for t in templates if t.name.endswith(".tmpl")]
    code = [t.read_text(encoding="utf-8") for t in templates if t.name.endswith(".py.tmpl")]
    tokens = (tokenize.generate_tokens(io.StringIO(text).readline) for text in code)
    # `new fit`: `import fit` and the fixture `fit` would hide each other
    if name != EXAMPLE and name in {
        t.string for ts in tokens for t in ts if t.type == tokenize.NAME
    }:
        raise ValueError(
            f"{name!r} is a name the starter's code uses already (a module, fixture, function "
            "or variable); choose another name"
        )
    files = {}
    for template in templates:
        target = word.sub(name, template.name.removesuffix(".tmpl"))
        if target in files:  # `new conftest`: its recipe would be the conftest.py
            raise ValueError(f"{name!r} names the starter's own {target}; choose another name")
        files[target] = word.sub(name, template.read_text(encoding="utf-8"))
    return files


def _taken(name: str, folder: Path) -> str | None:
    """Where a module `name` is found already (`new numpy`), else None; `folder`'s own
    NAME.py does not count."""
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
    """Write the starter for `name` into `folder` (made if needed), whole or not at all.

    Raises: ValueError (a bad or taken name), FileExistsError (a file is there already),
    OSError (the folder or a file cannot be written): in each case nothing is left written.
    """
    files = starter_files(name)
    if there := [folder / f for f in files if (folder / f).exists()]:
        raise FileExistsError(f"would overwrite {', '.join(map(str, there))}; nothing written")
    if taken := _taken(name, folder):
        raise ValueError(
            f"a module {name!r} exists already ({taken}); the starter's {name}.py would hide "
            "it or be hidden by it: choose another name"
        )
    made = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    placed: list[Path] = []
    try:
        with tempfile.TemporaryDirectory(prefix=".new-", dir=folder) as staging:
            for file_name, text in files.items():
                Path(staging, file_name).write_text(text, encoding="utf-8")
            for file_name in files:
                if (folder / file_name).exists():  # written meanwhile by someone else
                    raise FileExistsError(f"would overwrite {folder / file_name}; nothing written")
                os.rename(Path(staging, file_name), folder / file_name)
                placed.append(folder / file_name)
    except BaseException:
        for path in placed:
            path.unlink(missing_ok=True)
        if made:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    return placed
