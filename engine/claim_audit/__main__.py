"""The engine's commands: `python -m claim_audit new | diff | accept | portability`."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .engine.verdict import CHANGES_LEVEL, crossing, expected_changes
from .render.documents import SCHEMA_VERSION
from .report.diff import compare, cut, render
from .starter import write_starter

MAX_INT_DIGITS = 20  # an audit's integers are counts; more digits would overflow a float
SHARES_SUM_TOLERANCE = (
    1e-9  # a claim's shares are at most 5 counts / RESAMPLES: they sum to 1 within ~1e-15
)
EXIT_CODES = {
    "diff": "Exit status: 0 nothing moved; 1 a verdict, a claim or an expected_to_hold changed, "
    "or a figure was lost (NaN, infinite, gone); 2 a file is no audit of this schema; 3 no "
    "verdict moved, but a figure or the sweep over other seeds did (--verdicts-only makes "
    "that 0). A line per changed claim; -v: a line per figure.",
    "accept": "Exit status: 0 the baseline is now AUDIT.json's copy; 2 AUDIT.json is no "
    "complete audit (partial, unreadable, another schema) or the baseline cannot be written.",
    "portability": "Exit status: 0 they do not; 1 a verdict crossed between holds and refuted, "
    "or more changed than OLD's verdict shares predict at 99%; 2 a file is not an audit, or the "
    "two were judged over different numbers of orders.",
}


class AuditFileError(ValueError):
    """A file given to a command cannot be read or does not hold an audit."""


def load(path: str | Path) -> dict:
    """Read an audit.json, checking the parts the commands rely on (else AuditFileError)."""
    path = Path(path)
    where = f"{path} is not an audit.json"
    try:
        audit = json.loads(path.read_text(encoding="utf-8"), parse_int=_bounded_int)
    except OSError as error:
        raise AuditFileError(f"cannot read {path}: {error.strerror or error}") from error
    except (ValueError, RecursionError) as error:  # RecursionError: nesting past Python's stack
        raise AuditFileError(f"{path} cannot be read as JSON ({error})") from error
    if not isinstance(audit, dict) or not isinstance(audit.get("claims"), list):
        raise AuditFileError(f"{where}: it has no 'claims' list")
    version = audit.get("schema_version", SCHEMA_VERSION)
    if not (type(version) is int and version == SCHEMA_VERSION):
        raise AuditFileError(
            f"{path}: schema_version {cut(json.dumps(version))} is not one this diff reads ({SCHEMA_VERSION}); compare it with the code that wrote it"
        )
    seen: set[str] = set()
    for i, claim in enumerate(audit["claims"]):
        if not isinstance(claim, dict):
            raise AuditFileError(f"{where}: claims[{i}] is not an object")
        for key in ("id", "verdict"):
            if not isinstance(claim.get(key), str):
                raise AuditFileError(f"{where}: claims[{i}] has no string {key!r}")
        if claim["id"] in seen:
            raise AuditFileError(f"{where}: claim id {claim['id']!r} appears twice")
        seen.add(claim["id"])
    if not isinstance(audit.get("metadata", {}), dict):
        raise AuditFileError(f"{where}: 'metadata' is not an object")
    return audit


def _bounded_int(text: str) -> int:
    if len(digits := text.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"it holds an integer of {len(digits)} digits")
    return int(text)


def _new(args: argparse.Namespace) -> int:
    try:
        written = write_starter(args.name, Path(args.folder))
    except (ValueError, OSError) as error:  # OSError: e.g. a folder that cannot be made
        print(f"python -m claim_audit new: nothing written: {error}", file=sys.stderr)
        return 2
    print("\n".join(f"wrote {path}" for path in written))
    here = Path(args.folder).resolve() == Path.cwd().resolve()
    print(f"run it: {'' if here else f'cd {args.folder} && '}pytest --report-dir=report")
    return 0


def printable(text: str) -> str:
    """`text`, each character a terminal could act on (ESC, "\\r", ...) as its escape."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def _diff(args: argparse.Namespace, old: dict, new: dict) -> int:
    diff = compare(old, new)
    try:
        lines = render(diff, args.old, args.new, verbose=args.verbose)
        print("\n".join(map(printable, lines)), flush=True)
    except BrokenPipeError:  # `| head` closed the pipe: the rest goes nowhere, the code stays
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if diff.gate_fails:
        return 1
    return 3 if (diff.moved or diff.sweep_moved) and not args.verdicts_only else 0


def _accept(args: argparse.Namespace) -> int:
    """Copy a complete audit.json over the baseline, atomically (a reader sees old or new)."""
    try:
        audit = load(args.audit)
    except AuditFileError as error:
        print(printable(f"error: not accepted: {error}"), file=sys.stderr)
        return 2
    if partial := audit.get("partial"):
        why = "; ".join(map(str, partial)) if isinstance(partial, list) else str(partial)
        print(printable(f"error: not accepted: {args.audit} is a partial run ({cut(why)}); a baseline is a complete audit"), file=sys.stderr)  # fmt: skip
        return 2
    target = Path(args.baseline)
    if target.suffix != ".json":
        target = target / "audit.json"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists() and target.samefile(args.audit):
            print(f"{target} is that file already")
            return 0
        with tempfile.NamedTemporaryFile(dir=target.parent, prefix=".audit-", delete=False) as out:
            out.write(Path(args.audit).read_bytes())
        os.replace(out.name, target)
    except OSError as error:
        with contextlib.suppress(NameError, OSError):
            os.unlink(out.name)
        print(printable(f"error: not accepted: cannot write {target}: {error.strerror or error}"), file=sys.stderr)  # fmt: skip
        return 2
    commit = (audit.get("metadata", {}).get("git") or {}).get("commit") or "no commit"
    print(printable(f"accepted {args.audit} as the baseline {target} ({len(audit['claims'])} claims, {str(commit)[:12]})"))  # fmt: skip
    return 0


@dataclass(frozen=True)
class Drawn:
    """What `portability` reads of a claim: its verdict, shares and number of orders."""

    document: str
    verdict: str
    shares: dict[str, float] | None  # None: judged on one draw
    # valid orders it was judged over, copies included, or (orders given, budget) where it may
    # be judged again over more (None: not recorded)
    orders: int | tuple[int, int] | None


def drawn(path: str | Path, audit: dict) -> dict[str, Drawn]:
    """Claim id -> what `portability` reads of it (AuditFileError where the file lacks it)."""
    where, claims = f"{path} is not an audit.json portability reads", {}
    for claim in audit["claims"]:
        name = f"claim {claim['id']!r}"
        if not isinstance(details := claim.get("details"), dict):
            raise AuditFileError(f"{where}: {name} has no 'details' object")
        shares = details.get("verdict_shares")
        if shares is not None and not _are_shares(shares):
            raise AuditFileError(
                f"{where}: {name}'s verdict_shares {cut(json.dumps(shares))} are not shares by verdict (numbers from 0 to 1, summing to 1)"
            )
        orders, figures = details.get("orders"), details.get("figures")
        copies = details.get("copies", figures[0].get("copies", 0) if _listed(figures) else 0)
        if not (orders is None or isinstance(orders, dict)) or not _is_count(copies):
            raise AuditFileError(f"{where}: {name}'s orders or copies are no count of orders")
        document = claim.get("document")
        count = None if orders is None else len(orders) + copies
        first = details.get("first_look")  # a claim judged again over more: drawn as given
        if isinstance(first, dict):
            given, budget = first.get("orders"), first.get("budget")
            if not (_is_count(given) and _is_count(budget)):
                raise AuditFileError(f"{where}: {name}'s first_look holds no count of orders")
            count = (given, budget)
        claims[claim["id"]] = Drawn(str(document), claim["verdict"], shares or None, count)
    return claims


def _are_shares(shares: Any) -> bool:
    if not isinstance(shares, dict) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v <= 1
        for v in shares.values()
    ):
        return False  # a NaN fails 0 <= v
    return not shares or abs(sum(shares.values()) - 1) <= SHARES_SUM_TOLERANCE


def _listed(figures: Any) -> bool:
    return isinstance(figures, list) and bool(figures) and isinstance(figures[0], dict)


def _is_count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _orders(count: int | tuple[int, int]) -> str:
    """A claim's orders as drawn: a count, or the orders given and the budget they may reach."""
    return (
        f"{count[0]} orders (up to {count[1]})" if isinstance(count, tuple) else f"{count} orders"
    )


def unlike_draws(before: dict[str, Drawn], after: dict[str, Drawn]) -> str | None:
    """How two audits' claims were drawn unlike (other numbers of orders), or None."""
    unlike: dict[str, set[tuple[Any, Any]]] = {}
    for claim_id, was in before.items():
        now = after.get(claim_id)
        if now is not None and None not in (was.orders, now.orders) and was.orders != now.orders:
            unlike.setdefault(was.document, set()).add((was.orders, now.orders))
    return (
        "; ".join(
            f"{document}: "
            + ", ".join(
                f"{_orders(a)} in OLD, {_orders(b)} in NEW" for a, b in sorted(counts, key=str)
            )
            for document, counts in sorted(unlike.items())
        )
        or None
    )


def _portability(old_path: str, old: dict, new_path: str, new: dict) -> int:
    before, after = drawn(old_path, old), drawn(new_path, new)
    if unlike := unlike_draws(before, after):
        raise AuditFileError(
            f"{old_path} and {new_path} do not draw alike ({unlike}): portability compares two audits over the same orders; run both with the same --orders"
        )
    both = [i for i in before if i in after]
    changed = [(i, before[i].verdict, after[i].verdict) for i in both]
    changed = [c for c in changed if c[1] != c[2]]
    shares = [before[i].shares for i in both]
    mean, limit = expected_changes(s for s in shares if s)
    print(f"{len(changed)} of {len(both)} claims changed verdict")
    for claim_id, was, now in changed:
        print(f"  {claim_id}: {was} -> {now}" + ("  (crossed)" if crossing(was, now) else ""))
    print(
        f"predicted by the rule's own error: {mean:.1f} on average, at most {limit} with "
        f"probability {CHANGES_LEVEL:g}"
    )
    if unpredicted := sum(1 for s in shares if not s):
        print(f"({unpredicted} claims judged on one draw carry no prediction)")
    if crossed := [c for c in changed if crossing(c[1], c[2])]:
        print(f"error: {len(crossed)} verdicts crossed between holds and refuted", file=sys.stderr)
        return 1
    if len(changed) > limit:
        print(f"error: {len(changed)} changed verdicts, more than {limit}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit status."""
    parser = argparse.ArgumentParser(prog="python -m claim_audit", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    new = commands.add_parser("new", help="write a starter: a toy document's audit to adapt")
    new.add_argument("name", help="the document's name: a module name, e.g. my_paper")
    new.add_argument("folder", nargs="?", default=".", help="where to write (default: here)")
    diff = commands.add_parser("diff", help="what changed between two audit.json files")
    diff.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="a line per moved figure (every order's), and the figures without a tolerance",
    )
    diff.add_argument("--verdicts-only", action="store_true", help="exit 0 if only figures moved")
    summary = "do two audits differ on no more verdicts than the rule's error predicts?"
    portability = commands.add_parser("portability", help=summary)
    for name, command in (("diff", diff), ("portability", portability)):
        command.description = EXIT_CODES[name]
        command.add_argument("old", metavar="OLD.json")
        command.add_argument("new", metavar="NEW.json")
    accept = commands.add_parser("accept", help="make a complete run the baseline diff reads")
    accept.description = EXIT_CODES["accept"]
    accept.add_argument("audit", metavar="AUDIT.json", help="the run to accept")
    accept.add_argument(
        "baseline", metavar="BASELINE", help="the baseline's file (.json), or its folder"
    )
    args = parser.parse_args(argv)
    if args.command == "new":
        return _new(args)
    if args.command == "accept":
        return _accept(args)
    try:
        old, new_audit = load(args.old), load(args.new)
        if args.command == "portability":
            return _portability(args.old, old, args.new, new_audit)
    except AuditFileError as error:
        print(printable(f"error: {error}"), file=sys.stderr)
        return 2
    return _diff(args, old, new_audit)


if __name__ == "__main__":
    sys.exit(main())
