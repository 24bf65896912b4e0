"""The robustness section (audit.json's `robustness`): its contract, checked once, and the
rows and words that the terminal tables (table) and audit.md (markdown) both lay out."""

from __future__ import annotations

from typing import Any

BESIDE = "Statistics beside the faithful audit: no verdict above depends on them."
NOT_RUN = (
    "Not run: --seeds 0-9 re-runs the recipes on seeds 0-9 and re-evaluates every "
    "comparative claim."
)


def interval_text(interval: dict[str, Any] | None, digits: int = 3) -> str:
    """ "3.67 to >4.99": an interval's ends ('<' / '>' beyond the resamples); "-" for none."""
    if interval is None:
        return "-"
    low = f"{'<' if interval['low_at_edge'] else ''}{interval['low']:.{digits}g}"
    high = f"{'>' if interval['high_at_edge'] else ''}{interval['high']:.{digits}g}"
    return f"{low} to {high}"


def ci_text(ci: dict[str, Any]) -> str:
    """One effect's interval as recorded beside a claim's verdict."""
    text = f"95% CI {interval_text(ci)}: {ci['effect']}"
    return text if ci["within_region"] else f"{text} (not all {ci['region']})"


def seed_range(seeds: list[int], separator: str = ", ") -> str:
    """ "0-9" for three or more consecutive seeds, else the seeds joined by `separator`."""
    if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2:
        return f"{seeds[0]}-{seeds[-1]}"
    return separator.join(map(str, seeds))


def methods_text(methods: dict[str, Any]) -> str:
    """The section's intervals in one sentence (`published` only where a project gives it)."""
    if methods.get("published") is None:
        return f"Intervals are {methods['level']:.0%}, across seeds: {methods['seeds']}."
    return (
        f"Intervals are {methods['level']:.0%}: {methods['published']}; across seeds, "
        f"{methods['seeds']}."
    )


def holding(counts: dict[str, Any] | None) -> str | None:
    """ "9/10": how many of a sweep's seeds or subsets the claim holds on."""
    return None if counts is None else f"{counts['holding']}/{counts['total']}"


def sweep_effects(claims: dict[str, dict]) -> list[tuple[str, int, dict]]:
    """(claim id, effect index, the claim's `sweep`) of every effect of each swept claim."""
    return [
        (claim_id, k, claim["sweep"])
        for claim_id, claim in claims.items()
        if "sweep" in claim
        for k in range(len(claim["sweep"]["effects"]))
    ]


def sensitivity_cells(row: dict[str, Any], swept: bool) -> tuple[str, bool, tuple[str, ...]]:
    """A fixed choice's value and holding on the published seeds, and after a sweep there."""
    value, holds = f"{row['published']['values'][0]:.4g}", row["published"]["holds"]
    after = (holding(row.get("sweep")), f"{row['sweep']['values'][0]:.4g}") if swept else ()
    return value, holds, after


class SectionError(ValueError):
    """A robustness section that does not follow the contract (claim_audit.report.hooks)."""


_PUBLISHED_KEYS = ("seeds", "effects", "units", "regions", "region_bounds", "values", "holds")
_SWEEP_KEYS = ("seeds", "effects", "regions", "values", "intervals", "per_seed_values")
_SWEEP_KEYS += ("per_seed_holds", "subset_values", "subset_holds", "holding", "total")
_SWEEP_KEYS += ("unit", "label")
_ROW_KEYS = ("claim_id", "variant", "post_choice", "effect", "region", "published")


def _require(where: str, value: Any, keys: tuple[str, ...] = (), kind: type = dict) -> None:
    if not isinstance(value, kind):
        raise SectionError(f"{where} is {type(value).__name__}, expected {kind.__name__}")
    for key in keys:
        if key not in value:
            raise SectionError(f"{where} has no key {key!r}")


def _per_effect(where: str, entry: dict, keys: tuple[str, ...]) -> None:
    n = len(entry["effects"])
    for key in keys:
        if entry.get(key) is not None and len(entry[key]) != n:
            raise SectionError(f"{where}[{key!r}] has {len(entry[key])} items for {n} effects")


def checked(section: Any) -> dict[str, Any]:
    """The section with the engine's defaults filled in; SectionError names a bad or missing key."""
    from ..engine.sweep import methods  # the engine's words for what is left out

    _require("the section", section, ("published_seeds", "sweep_seeds", "claims"))
    _require("'published_seeds'", section["published_seeds"], kind=list)
    if section["sweep_seeds"] is not None:
        _require("'sweep_seeds'", section["sweep_seeds"], kind=list)
    _require("'claims'", section["claims"])
    defaults = {"sensitivity": [], "figure_intervals": None, "figure_group": "group"}
    words = {**methods(None), **section.get("methods", {})}
    out = {**defaults, "figure_columns": [], **section, "methods": words, "claims": {}}
    for claim_id, claim in section["claims"].items():
        where = f"claims[{claim_id!r}]"
        _require(where, claim, ("published",))
        _require(f"{where}['published']", claim["published"], _PUBLISHED_KEYS)
        _per_effect(f"{where}['published']", claim["published"], _PUBLISHED_KEYS[1:-1])
        if "sweep" in claim:
            if section["sweep_seeds"] is None:
                raise SectionError(f"{where} has a 'sweep' but 'sweep_seeds' is None")
            _require(f"{where}['sweep']", claim["sweep"], _SWEEP_KEYS)
            _per_effect(f"{where}['sweep']", claim["sweep"], ("regions", "values", "intervals"))
        out["claims"][claim_id] = {**claim, "published": {"intervals": None, **claim["published"]}}
    _require("'sensitivity'", out["sensitivity"], kind=list)
    for k, row in enumerate(out["sensitivity"]):
        _require(f"sensitivity[{k}]", row, _ROW_KEYS)
        _require(f"sensitivity[{k}]['published']", row["published"], ("values", "holds"))
        if row.get("sweep") is not None:
            _require(f"sensitivity[{k}]['sweep']", row["sweep"], ("holding", "total", "values"))
    if out["figure_intervals"] is not None:
        _require("'figure_intervals'", out["figure_intervals"])
        _require("'figure_columns'", out["figure_columns"], kind=list)
    return out
