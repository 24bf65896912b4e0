"""`python -m claim_audit.report diff OLD.json NEW.json`: compare two audit reports
(claim_audit/report/diff.py); `python -m claim_audit diff` is the same command.
`portability OLD.json NEW.json`: do they differ on no more verdicts than the rule's own
error predicts (claim_audit/report/portability.py)?"""

from __future__ import annotations

import argparse
import sys
from typing import Any

DIFF_HELP = "print the verdicts, figures and metadata that changed between two audit.json files"
DIFF_EXIT_CODES = (
    "Exit status: 0 when nothing moved; 1 when a verdict changed, a claim "
    "appeared or disappeared, a measured figure became NaN or infinite or disappeared, or a "
    "claim's expected_to_hold flipped; "
    "2 when a file cannot be read or is not an audit of this schema (one line on stderr says "
    "why); 3 when no verdict moved but a figure a verdict rests on moved beyond its "
    "tolerance (derived from the old audit: the spread of its valid float orders, a "
    "published figure's printing), moved several-fold beyond every order's range, or a "
    "figure's words changed, so that a CI gate sees it; --verdicts-only makes that 0."
)


def add_diff_command(commands: Any) -> None:
    """Declare the `diff` subcommand on `commands` (an argparse subparsers object)."""
    diff = commands.add_parser("diff", help=DIFF_HELP, description=DIFF_EXIT_CODES)
    diff.add_argument("old", metavar="OLD.json")
    diff.add_argument("new", metavar="NEW.json")
    diff.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="also list figures with no tolerance that changed",
    )
    diff.add_argument(
        "--verdicts-only",
        action="store_true",
        help="exit 0, not 3, when only figures moved (they are still listed), e.g. while "
        "moving the lock, when figures are expected to move",
    )


def run_diff(args: argparse.Namespace) -> int:
    """Run the `diff` subcommand parsed by `add_diff_command`; its exit status."""
    from . import diff as audit_diff

    return audit_diff.main(
        args.old, args.new, verbose=args.verbose, verdicts_only=args.verdicts_only
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m claim_audit.report", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    add_diff_command(commands)
    portability = commands.add_parser(
        "portability",
        help="do two audits differ on no more verdicts than the rule's own error predicts?",
        description="Exit status: 0 when they do not; 1 when a verdict crossed between holds "
        "and refuted or more verdicts changed than OLD's verdict shares predict at 99%%; 2 "
        "when a file is not an audit.",
    )
    portability.add_argument("old", metavar="OLD.json")
    portability.add_argument("new", metavar="NEW.json")
    args = parser.parse_args(argv)
    if args.command == "portability":
        from .portability import main as portability_main

        return portability_main(args.old, args.new)
    return run_diff(args)


if __name__ == "__main__":
    sys.exit(main())
