"""`python -m claim_audit.report portability OLD.json NEW.json`: do two audits of the same
claims, made on two machines (or in two float orders), differ on no more verdicts than the
rule's own error predicts, and on none between *holds* and *refuted*?

The prediction comes from OLD: each claim's `verdict_shares`, the share of each verdict over
resamples of its draws (claim_audit.engine.verdict). Exit status: 0 when the
audits agree within it; 1 on a crossing or on more changed verdicts than predicted at
99%; 2 when a file is not an audit.
"""

from __future__ import annotations

import sys

from ..engine.verdict import CHANGES_LEVEL, crossing, expected_changes
from .diff import AuditFileError, load


def main(old_path: str, new_path: str) -> int:
    try:
        old, new = load(old_path), load(new_path)
    except AuditFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    before = {c["id"]: c for c in old["claims"]}
    after = {c["id"]: c for c in new["claims"]}
    both = [i for i in before if i in after]
    changed = [(i, before[i]["verdict"], after[i]["verdict"]) for i in both]
    changed = [c for c in changed if c[1] != c[2]]
    crossed = [c for c in changed if crossing(c[1], c[2])]
    shares = [before[i]["details"].get("verdict_shares") for i in both]
    mean, limit = expected_changes(s for s in shares if s)
    print(f"{len(changed)} of {len(both)} claims changed verdict")
    for claim_id, was, now in changed:
        print(f"  {claim_id}: {was} -> {now}" + ("  (crossed)" if crossing(was, now) else ""))
    print(
        f"predicted by the rule's own error: {mean:.1f} on average, at most {limit} with "
        f"probability {CHANGES_LEVEL:g}"
    )
    unpredicted = sum(1 for s in shares if not s)
    if unpredicted:
        print(f"({unpredicted} claims judged on one draw carry no prediction)")
    if crossed:
        print(f"error: {len(crossed)} verdicts crossed between holds and refuted", file=sys.stderr)
        return 1
    if len(changed) > limit:
        print(f"error: {len(changed)} changed verdicts, more than {limit}", file=sys.stderr)
        return 1
    return 0
