"""The line beside a verdict that says how the orders bore it out, for every renderer."""

from __future__ import annotations

from ..engine.prediction import POWER_TARGET
from ..engine.share import HOLDS_AT, REFUTED_AT, SENSITIVE_BETWEEN, SHARE_ALPHA


def rule_note(method: str = "") -> list[tuple[str, bool]]:
    """How a verdict is taken, for every renderer: (text, emphasised) runs, so that the
    Markdown and the HTML say the same (`method`: a note on how the orders were computed)."""
    low, high = SENSITIVE_BETWEEN
    confidence = f"{1 - SHARE_ALPHA:.0%}"
    return [
        (
            "Every claim is judged on the reproduction in several valid float orders, each a draw "
            "of what another valid computation gives (the documents' own order first: its "
            "figures are the ones shown; an order that repeats another bit for bit counts once). "
            "A printed figure ",
            False,
        ),
        ("holds", True),
        (
            " when it is a plausible draw of the recipe over those draws: inside the prediction "
            "interval shown as its tolerance, computed on the quantity's own scale (log for a "
            "positive quantity, logit for a share), at a false-refutation rate of 1 in 5,000 per "
            f"figure{method}; otherwise it is ",
            False,
        ),
        ("refuted", True),
        ("; it is ", False),
        ("inconclusive", True),
        (
            " (never a pass) when the interval holds 0 or is wider than half the figure either "
            "way. A qualitative claim (a ratio in a range, a value above a bound, an identity) is "
            "judged by the share of valid computations that give it, bounded at "
            f"{confidence} from the count of draws it holds in and the draws' margins: it ",
            False,
        ),
        ("holds", True),
        (f" when at least {HOLDS_AT:.0%} of valid computations give it, is ", False),
        ("refuted", True),
        (f" when at most {REFUTED_AT:.0%} do, is ", False),
        ("sensitive", True),
        (
            f" when the share lies between {low:.0%} and {high:.0%} (it depends on the machine), "
            "and is ",
            False,
        ),
        ("inconclusive", True),
        (
            " when the draws cannot yet tell (the report says how many would), or when they "
            "collapsed to one copy. Each row says in how many draws the claim holds. Refuted rows "
            "marked 'known finding' are recorded findings and do not fail the run; any other "
            "refutation or error does. Sensitive and inconclusive claims never fail the run.",
            False,
        ),
    ]


def _conclude(orders: int | None) -> str:
    if orders is None:
        return "no number of orders would conclude it"
    return f"{orders} orders would conclude it"


def figure_note(figure: dict) -> str:
    """Where one published figure falls against its orders (a `FigureVerdict.to_json()`),
    and the smallest relative shift the rule catches with POWER_TARGET probability."""
    n = figure["orders"]
    scale = "" if figure.get("scale", "linear") == "linear" else f" on the {figure['scale']} scale"
    if figure.get("copies") and n == 1:
        return f"{figure['published']}: the draws collapsed to one"
    if figure["t_score"] is None:
        text = f"{figure['published']}: all {n} orders agree, exact to the printed digits"
    else:
        text = (
            f"{figure['published']}: t = {figure['t_score']:+.2f}, p = {figure['p_value']:.2g} "
            f"over {n} orders{scale}"
        )
    shift = figure.get(f"relative_shift_caught_{POWER_TARGET:g}")
    if shift is not None:
        text += f"; catches a shift of {shift:.0%} with p = {POWER_TARGET:g}"
    if figure.get("verdict") == "inconclusive":
        text += f"; inconclusive: {_conclude(figure['orders_to_conclude'])}"
    return text


def effect_note(effect: dict) -> str:
    """One threshold value over the draws against its region."""
    low, high = effect["range"]
    name = f"{effect['effect']}: " if effect["effect"] else ""
    k, n = effect["in_region"]
    scale = "" if effect.get("scale", "linear") == "linear" else f", {effect['scale']} scale"
    return f"{name}{low:.4g} to {high:.4g} over the draws, {k} of {n} {effect['region']}{scale}"


def share_note(details: dict) -> str:
    """How many distinct draws a qualitative claim holds in, and what that says of the
    share of valid computations that give it."""
    k, n = details["holds_in_orders"]
    low, high = details["share_interval"]
    text = f"holds in {k} of {n} draws"
    if details.get("copies"):
        text += f" ({details['copies']} copies left out)"
    text += f"; share of valid computations {low:.0%} to {high:.0%} ({details['share_method']})"
    if "draws_to_conclude" in details:
        needed = details["draws_to_conclude"]
        text += (
            "; no number of draws would conclude it"
            if needed is None
            else f"; about {needed} draws would conclude it"
        )
    return text


def verdict_note(details: dict) -> str:
    """How the draws bore the verdict out: for a figure claim, where each published figure
    falls in its prediction interval; for a qualitative claim judged over several draws,
    the count of draws it holds in (k = 0 and k = n too), what that says of its share, and
    each compared value's range against its region."""
    if "figures" in details:
        notes = [figure_note(f) for f in details["figures"]]
        return "; ".join(notes + ([details["collapsed"]] if "collapsed" in details else []))
    notes = [details["inconclusive"]] if "inconclusive" in details else []
    if "collapsed" in details:
        notes.append(details["collapsed"])
    if "share_interval" in details:
        notes.append(share_note(details))
        notes += [effect_note(e) for e in details.get("effects", ())]
    return "; ".join(notes)
