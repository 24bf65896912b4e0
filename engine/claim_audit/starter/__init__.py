"""A starter for a new document's audit: the worked example of docs/ADDING_A_DOCUMENT.md, its
document named as the author chooses (`python -m claim_audit new NAME`)."""

from __future__ import annotations

import keyword
import re
from importlib import resources
from pathlib import Path

EXAMPLE = "toy"  # the example's document name, replaced by the new one's


def starter_files(name: str) -> dict[str, str]:
    """File name -> text of a starter for the document `name`: its recipe (NAME.py), its
    claims (test_NAME.py), its report registration (conftest.py) and settings (pytest.ini).

    Raises:
      ValueError: `name` is not a lowercase Python identifier (it names a module).
    """
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise ValueError(
            f"a document's name becomes a module name: lowercase letters, digits and _, "
            f"starting with a letter; got {name!r}"
        )
    word = re.compile(rf"(?<![A-Za-z0-9]){EXAMPLE}(?![A-Za-z0-9])")  # test_toy.py too
    files = {}
    for template in sorted(resources.files(__package__).iterdir(), key=lambda p: p.name):
        if template.name.endswith(".tmpl"):
            target = word.sub(name, template.name.removesuffix(".tmpl"))
            files[target] = word.sub(name, template.read_text(encoding="utf-8"))
    return files


def write_starter(name: str, folder: Path) -> list[Path]:
    """Write the starter for `name` into `folder` (created if needed); the files written.

    Raises:
      FileExistsError: one of the files is already there (nothing is written).
    """
    files = starter_files(name)
    there = [folder / f for f in files if (folder / f).exists()]
    if there:
        raise FileExistsError(f"would overwrite {', '.join(map(str, there))}; nothing written")
    folder.mkdir(parents=True, exist_ok=True)
    for file_name, text in files.items():
        (folder / file_name).write_text(text, encoding="utf-8")
    return [folder / f for f in files]
