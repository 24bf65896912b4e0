"""The `--seeds` option's syntax: "0-9", "0,3,5-7"."""

from __future__ import annotations

import re
from collections import Counter

MAX_SEED = 10**6
MAX_COUNT = 1000  # a sweep keeps every seed's results: this suite's hold 4 GB at 1,000 seeds


def parse_seeds(text: str) -> tuple[int, ...]:
    """Seeds from "0-9" or "0,3,5-7", sorted; ValueError naming what is wrong (a syntax, a
    range backwards, a seed repeated or too large, none or more than MAX_COUNT)."""
    seeds: list[int] = []
    for part in text.split(","):
        match = re.fullmatch(r"\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?", part)
        if match is None:
            raise ValueError(
                f"cannot read {part.strip()!r} in {text!r}: expected seeds like '0-9' or '0,3,5-7'"
            )
        first, last = int(match[1]), int(match[2] or match[1])
        if last < first:
            raise ValueError(f"range {part.strip()!r} in {text!r} runs backwards")
        if last >= MAX_SEED:
            raise ValueError(f"seeds must be below {MAX_SEED:,}; got {last} in {text!r}")
        if last - first >= MAX_COUNT:
            raise ValueError(
                f"at most {MAX_COUNT} seeds; {part.strip()!r} alone has {last - first + 1}"
            )
        seeds.extend(range(first, last + 1))
    if repeated := sorted(seed for seed, times in Counter(seeds).items() if times > 1):
        raise ValueError(f"seeds {repeated} are given more than once in {text!r}")
    if len(seeds) > MAX_COUNT:
        raise ValueError(f"at most {MAX_COUNT} seeds; got {len(seeds)} in {text!r}")
    if not seeds:
        raise ValueError(f"no seeds in {text!r}")
    return tuple(sorted(seeds))
