"""What the terminal tables and audit.md show of the robustness section, read once.

The section (audit.json's `robustness`, assembled by the documents' side) is turned here
into rows of plain cells; claim_audit.render.table lays them out in fixed-width columns and
claim_audit.render.markdown as Markdown tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def interval_text(interval: dict[str, Any], digits: int = 3) -> str:
    """ "3.67 to >4.99": an interval's ends, '<' / '>' where an end lies beyond the resamples."""
    low = f"{'<' if interval['low_at_edge'] else ''}{interval['low']:.{digits}g}"
    high = f"{'>' if interval['high_at_edge'] else ''}{interval['high']:.{digits}g}"
    return f"{low} to {high}"


def ci_text(ci: dict[str, Any]) -> str:
    """One effect's interval as recorded beside a claim's verdict."""
    text = f"95% CI {interval_text(ci)}: {ci['effect']}"
    return text if ci["within_region"] else f"{text} (not all {ci['region']})"


BESIDE = "Statistics beside the faithful audit: no verdict above depends on them."
NOT_RUN = (
    "Not run: --seeds 0-9 re-runs the recipes on seeds 0-9 and re-evaluates every "
    "comparative claim."
)


def seed_range(seeds: list[int], separator: str = ", ") -> str:
    """ "0-9" for three or more consecutive seeds, else the seeds joined by `separator`."""
    if seeds == list(range(seeds[0], seeds[-1] + 1)) and len(seeds) > 2:
        return f"{seeds[0]}-{seeds[-1]}"
    return separator.join(map(str, seeds))


def methods_text(methods: dict[str, Any]) -> str:
    """The section's intervals in one sentence, from its `methods` (`published`, how the
    published seeds' intervals are computed, only where the project supplies them)."""
    if methods.get("published") is None:
        return f"Intervals are {methods['level']:.0%}, across seeds: {methods['seeds']}."
    return (
        f"Intervals are {methods['level']:.0%}: {methods['published']}; across seeds, "
        f"{methods['seeds']}."
    )


class SectionError(ValueError):
    """A robustness section that does not follow the contract (claim_audit.report.hooks)."""


_PUBLISHED_KEYS = ("seeds", "effects", "units", "regions", "region_bounds", "values", "holds")
_SWEEP_KEYS = ("seeds", "effects", "regions", "values", "intervals", "per_seed_values")
_SWEEP_KEYS += ("per_seed_holds", "subset_values", "subset_holds", "holding", "total")
_SWEEP_KEYS += ("unit", "label")
_ROW_KEYS = ("claim_id", "variant", "post_choice", "effect", "region", "published")


def _require(where: str, value: Any, keys: tuple[str, ...], kind: type = dict) -> None:
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
    """The section with the engine's defaults for the keys a project may leave out:
    `methods` (claim_audit.engine.sweep's words), `sensitivity` ([]),
    `figure_intervals` (None), `figure_group`, `figure_columns` and each claim's
    `published.intervals` (None).

    Raises:
      SectionError: a required key is missing or of the wrong kind; the message names it.
    """
    from ..engine.sweep import methods  # the engine's words for what is left out

    _require("the section", section, ("published_seeds", "sweep_seeds", "claims"))
    _require("'published_seeds'", section["published_seeds"], (), list)
    if section["sweep_seeds"] is not None:
        _require("'sweep_seeds'", section["sweep_seeds"], (), list)
    _require("'claims'", section["claims"], ())
    out = {
        "sensitivity": [],
        "figure_intervals": None,
        "figure_group": "group",
        "figure_columns": [],
        **section,
        "methods": {**methods(None), **section.get("methods", {})},
        "claims": {},
    }
    for claim_id, claim in section["claims"].items():
        where = f"claims[{claim_id!r}]"
        _require(where, claim, ("published",))
        _require(f"{where}['published']", claim["published"], _PUBLISHED_KEYS)
        _per_effect(f"{where}['published']", claim["published"], _PUBLISHED_KEYS[1:-1])
        published = {"intervals": None, **claim["published"]}
        if "sweep" in claim:
            if section["sweep_seeds"] is None:
                raise SectionError(f"{where} has a 'sweep' but 'sweep_seeds' is None")
            _require(f"{where}['sweep']", claim["sweep"], _SWEEP_KEYS)
            _per_effect(f"{where}['sweep']", claim["sweep"], ("regions", "values", "intervals"))
        out["claims"][claim_id] = {**claim, "published": published}
    _require("'sensitivity'", out["sensitivity"], (), list)
    for k, row in enumerate(out["sensitivity"]):
        _require(f"sensitivity[{k}]", row, _ROW_KEYS)
        _require(f"sensitivity[{k}]['published']", row["published"], ("values", "holds"))
        if row.get("sweep") is not None:
            _require(f"sensitivity[{k}]['sweep']", row["sweep"], ("holding", "total", "values"))
    if out["figure_intervals"] is not None:
        _require("'figure_intervals'", out["figure_intervals"], ())
        _require("'figure_columns'", out["figure_columns"], (), list)
    return out


@dataclass(frozen=True)
class SweepRow:
    """One effect of a comparative claim across the sweep's seeds."""

    claim_id: str
    first: bool  # the claim's first effect: the row that names the claim
    effect: str
    region: str
    holding: str  # "9/10"
    unit: str
    value: float
    interval: dict | None
    per_seed: list[tuple[float, bool]] | None  # each seed's value and whether it holds
    label: str


def sweep_rows(claims: dict[str, dict]) -> list[SweepRow]:
    """A row per effect of each claim that has a `sweep`."""
    rows = []
    for claim_id, claim in claims.items():
        sweep = claim.get("sweep")
        if sweep is None:
            continue
        for k, effect in enumerate(sweep["effects"]):
            per_seed = None
            if sweep["per_seed_values"] is not None:
                per_seed = [
                    (values[k], holds)
                    for values, holds in zip(
                        sweep["per_seed_values"], sweep["per_seed_holds"], strict=True
                    )
                ]
            rows.append(
                SweepRow(
                    claim_id,
                    k == 0,
                    effect,
                    sweep["regions"][k],
                    f"{sweep['holding']}/{sweep['total']}",
                    sweep["unit"],
                    sweep["values"][k],
                    sweep["intervals"][k],
                    per_seed,
                    sweep["label"],
                )
            )
    return rows


@dataclass(frozen=True)
class SensitivityRow:
    """A claim under one variant of a choice the post fixed (binning, OOD score)."""

    claim_id: str
    variant: str
    post_choice: bool
    effect: str
    region: str
    value: float  # on the published seeds
    holds: bool
    sweep_holding: str | None  # "9/10" on the sweep's seeds, None without a sweep
    sweep_value: float | None


def sensitivity_rows(rows: list[dict]) -> list[SensitivityRow]:
    out = []
    for row in rows:
        published, sweep = row["published"], row.get("sweep")
        out.append(
            SensitivityRow(
                row["claim_id"],
                row["variant"],
                row["post_choice"],
                row["effect"],
                row["region"],
                published["values"][0],
                published["holds"],
                None if sweep is None else f"{sweep['holding']}/{sweep['total']}",
                None if sweep is None else sweep["values"][0],
            )
        )
    return out
