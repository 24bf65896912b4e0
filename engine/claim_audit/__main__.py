"""`python -m claim_audit new NAME [FOLDER]`: write a starter audit for the document NAME;
`python -m claim_audit diff OLD.json NEW.json`: what moved between two audits."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .report.__main__ import add_diff_command, run_diff
from .starter import write_starter


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m claim_audit", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    new = commands.add_parser(
        "new",
        help="write a starter: a toy document's recipe, its claims, its report registration "
        "and pytest settings, each to replace with your document's",
    )
    new.add_argument("name", help="the document's name: a module name, e.g. my_paper")
    new.add_argument("folder", nargs="?", default=".", help="where to write (default: here)")
    add_diff_command(commands)
    args = parser.parse_args(argv)
    if args.command == "diff":
        return run_diff(args)
    try:
        written = write_starter(args.name, Path(args.folder))
    except (ValueError, FileExistsError) as error:
        print(f"python -m claim_audit new: {error}", file=sys.stderr)
        return 2
    except OSError as error:  # a folder that cannot be made, a name too long, a full disk
        where = f" ({error.filename})" if error.filename else ""
        print(
            f"python -m claim_audit new: cannot write the starter into {args.folder}: "
            f"{error.strerror or error}{where}; nothing written",
            file=sys.stderr,
        )
        return 2
    for path in written:
        print(f"wrote {path}")
    here = Path(args.folder).resolve() == Path.cwd().resolve()
    print(f"run it: {'' if here else f'cd {args.folder} && '}pytest --report-dir=report")
    return 0


if __name__ == "__main__":
    sys.exit(main())
