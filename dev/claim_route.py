"""Which of this repository's files a claim's route passes, from its spec to audit.json.

Runs `pytest claims -k CLAIM -n 0` in this process under a profiler. A call is on the
claim's route when its arguments refer to the claim (its id, its spec, its test, its
record, a collection holding one of them), and so is every call beneath it. Left out:
module and class bodies (imports), and what serves every claim alike, whose subtrees are
not one claim's route: the computing of results (fixtures, lib/, the results cache) and the
rendering of audit.md, audit.html and the figures (render/, and the documents' sections and
figures that the project's `pytest_claims_audit_documents` hook gives it). The files
counted are those of engine/, claims/, lib/ and conftest.py.

    python dev/claim_route.py [CLAIM] [-- PYTEST_ARGS...]

Run it with the results cached (CLAIMS_CACHE_DIR) to keep it short. Exit status 1 when the
route passes more than LIMIT files.
"""

from __future__ import annotations

import inspect
import sys
import threading
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 14  # files; one claim's route through the engine stays this short
COUNTED = ("engine/", "claims/", "lib/", "conftest.py")
LEFT_OUT_FILES = ("engine/claim_audit/render/", "engine/claim_audit/cache.py", "lib/")
LEFT_OUT_CALLS = {"call_fixture_func", "pytest_claims_audit_documents"}
DEPTH = 4  # how deep an argument is searched for the claim (containers, attributes)
WIDTH = 500  # how many items of a container are searched
OPAQUE = (
    types.ModuleType,
    types.FunctionType,
    type,
    pytest.Config,
    pytest.Session,
    bytes,
    int,
    float,
)


def _relative(filename: str) -> str | None:
    try:
        text = Path(filename).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return None
    return text if text.startswith(COUNTED) else None


def _refers(value: object, claim: str, depth: int = DEPTH) -> bool:
    """Whether `value` names `claim` (a text holding its id), or holds what does."""
    if isinstance(value, str):
        return claim in value
    if depth == 0 or isinstance(value, OPAQUE):
        return False
    if isinstance(value, dict):
        items = [*list(value.keys())[:WIDTH], *list(value.values())[:WIDTH]]
    elif isinstance(value, list | tuple | set | frozenset):
        items = list(value)[:WIDTH]
    else:
        try:
            items = list(vars(value).values())[:WIDTH]
        except Exception:  # no __dict__
            return False
    return any(_refers(item, claim, depth - 1) for item in items)


def trace(claim: str, pytest_args: list[str]) -> dict[str, set[str]]:
    """file -> the functions of it that ran on `claim`'s route."""
    ran: dict[str, set[str]] = {}
    state = threading.local()

    def profile(frame: types.FrameType, event: str, _arg: object) -> None:
        stack = state.__dict__.setdefault("stack", [])  # per call: "out", "on" or ""
        if event == "return":
            if stack:
                stack.pop()
            return
        if event != "call":
            return
        code = frame.f_code
        relative = _relative(code.co_filename)
        above = stack[-1] if stack else ""
        if (
            above == "out"
            or code.co_name in LEFT_OUT_CALLS
            or (relative is not None and relative.startswith(LEFT_OUT_FILES))
        ):
            stack.append("out")
        elif not code.co_flags & inspect.CO_NEWLOCALS:  # a module or class body: an import
            stack.append("")
        elif relative is None:
            stack.append(above)
        elif above == "on" or any(_refers(v, claim) for v in frame.f_locals.values()):
            ran.setdefault(relative, set()).add(code.co_name)
            stack.append("on")
        else:
            stack.append("")

    args = ["claims", "-k", claim, "-n", "0", "-p", "no:cacheprovider", "-q", *pytest_args]
    threading.setprofile(profile)
    sys.setprofile(profile)
    try:
        status = pytest.main(args)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    if status not in (0, 1):
        raise SystemExit(f"pytest {' '.join(args)} ended with status {status}")
    return ran


def main(argv: list[str]) -> int:
    """Trace the claim argv[0] (default cal-02b) and print the files of its route."""
    rest = argv[argv.index("--") + 1 :] if "--" in argv else []
    named = argv[: argv.index("--")] if "--" in argv else argv
    claim = named[0] if named else "cal-02b"
    ran = trace(claim, rest)
    print(f"\n{claim}'s route passes {len(ran)} files of this repository (at most {LIMIT}):")
    for path in sorted(ran):
        print(f"  {path}: {', '.join(sorted(ran[path]))}")
    return 0 if len(ran) <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
