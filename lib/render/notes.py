"""The line beside a verdict that says how the orders bore it out, for every renderer."""

from __future__ import annotations


def figure_note(figure: dict) -> str:
    """Where one published figure falls against its orders (a `FigureVerdict.to_json()`)."""
    n = figure["orders"]
    if figure["t_score"] is None:
        return f"{figure['published']}: all {n} orders agree, exact to the printed digits"
    return f"{figure['published']}: t = {figure['t_score']:+.2f}, p = {figure['p_value']:.2g} over {n} orders"


def verdict_note(details: dict) -> str:
    """How the orders bore the verdict out: for a figure claim, where each published figure
    falls in its prediction interval; for a qualitative claim judged in several orders that
    did not all agree, the share of orders where it holds, with its 95% interval."""
    if "figures" in details:
        return "; ".join(figure_note(f) for f in details["figures"])
    k, n = details.get("holds_in_orders", (0, 0))
    if n < 2 or k in (0, n):
        return ""
    low, high = details["share_interval"]
    text = f"holds in {k} of {n} orders (95% CI {low:.0%} to {high:.0%})"
    if "range_over_orders" in details:
        text += f"; figure {details['range_over_orders'][0]:.4g} to {details['range_over_orders'][1]:.4g}"
    return text
