"""The line beside a verdict that says how the orders bore it out, for every renderer."""

from __future__ import annotations

from ..engine.prediction import POWER_TARGET


def _conclude(orders: int | None) -> str:
    if orders is None:
        return "no number of orders would conclude it"
    return f"{orders} orders would conclude it"


def figure_note(figure: dict) -> str:
    """Where one published figure falls against its orders (a `FigureVerdict.to_json()`),
    and the smallest relative shift the rule catches with POWER_TARGET probability."""
    n = figure["orders"]
    if figure["t_score"] is None:
        text = f"{figure['published']}: all {n} orders agree, exact to the printed digits"
    else:
        text = f"{figure['published']}: t = {figure['t_score']:+.2f}, p = {figure['p_value']:.2g} over {n} orders"
    shift = figure.get(f"relative_shift_caught_{POWER_TARGET:g}")
    if shift is not None:
        text += f"; catches a shift of {shift:.0%} with p = {POWER_TARGET:g}"
    if figure.get("verdict") == "inconclusive":
        text += f"; inconclusive: {_conclude(figure['orders_to_conclude'])}"
    return text


def effect_note(effect: dict) -> str:
    """One threshold value's prediction interval over the orders against its region."""
    low, high = effect["interval"]
    name = f"{effect['effect']}: " if effect["effect"] else ""
    return f"{name}interval [{low:.4g}, {high:.4g}] {effect['interval_is']} {effect['region']}"


def verdict_note(details: dict) -> str:
    """How the orders bore the verdict out: for a figure claim, where each published figure
    falls in its prediction interval; for a threshold claim, each value's interval against
    its region; for another qualitative claim judged in several orders that did not all
    agree, the share of orders where it holds, with its 95% interval."""
    if "figures" in details:
        return "; ".join(figure_note(f) for f in details["figures"])
    notes = [details["inconclusive"]] if "inconclusive" in details else []
    k, n = details.get("holds_in_orders", (0, 0))
    if "effects" in details and n > 1:
        notes += [effect_note(e) for e in details["effects"]]
    if n > 1 and k not in (0, n):
        low, high = details["share_interval"]
        notes.append(f"holds in {k} of {n} orders (95% CI {low:.0%} to {high:.0%})")
        if "range_over_orders" in details:
            low, high = details["range_over_orders"]
            notes.append(f"figure {low:.4g} to {high:.4g}")
    return "; ".join(notes)
