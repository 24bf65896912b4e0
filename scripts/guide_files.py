"""Write the files a guide shows into a folder: every fenced block preceded by an HTML comment
`<!-- file: NAME -->`, saved as NAME.

    python scripts/guide_files.py docs/ADDING_A_DOCUMENT.md FOLDER
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

FILE_BLOCK = re.compile(r"<!-- file: (?P<name>\S+) -->\n```\w*\n(?P<text>.*?)\n```", re.DOTALL)


def guide_files(guide: Path) -> dict[str, str]:
    """File name -> text, as `guide` shows them.

    Raises:
      ValueError: the guide shows no file.
    """
    files = {m["name"]: m["text"] + "\n" for m in FILE_BLOCK.finditer(guide.read_text())}
    if not files:
        raise ValueError(f"{guide} shows no files (no '<!-- file: NAME -->' before a block)")
    return files


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    guide, folder = Path(argv[0]), Path(argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in guide_files(guide).items():
        (folder / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
