"""What a reader takes in at a glance: a verdict's mark, a plain sentence from the record, and a
small inline picture of the draws with the published value and the interval or line marked."""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .cells import measured_text


@dataclass(frozen=True)
class Mark:
    """A verdict's symbol and colour: the symbol survives print and colour blindness."""

    symbol: str
    colour: str
    meaning: str


_GOOD, _BAD, _FINDING = "#1a7f37", "#cf222e", "#9a6700"
_SHAKY, _OPEN, _SPAN, _NEUTRAL = "#bc4c00", "#57606a", "#8250df", "#57606a"
MARKS = {  # by the label a row shows (markdown.verdict_label) or a sweep's label
    "holds": Mark("✓", _GOOD, "holds"),
    "REFUTED": Mark("✗", _BAD, "refuted, not a recorded finding: fails the run"),
    "refuted": Mark("✗", _BAD, "refuted"),
    "refuted*": Mark("✗", _FINDING, "refuted, a recorded finding"),
    "refuted†": Mark("✗", _NEUTRAL, "refuted on this machine's timing"),
    "sensitive": Mark("~", _SHAKY, "depends on the machine"),
    "inconclusive": Mark("?", _OPEN, "the draws cannot yet tell"),
    "unpinned": Mark("↔", _SPAN, "the recipe cannot pin the figure"),
    "ERROR": Mark("!", _BAD, "could not be checked"),
    "FINDING GONE": Mark("!", _BAD, "a recorded finding no longer refuted"),
    "robust": Mark("✓", _GOOD, "holds across seeds"),
    "fails": Mark("✗", _BAD, "fails across seeds"),
    "fragile": Mark("~", _SHAKY, "holds on some seeds, not on others"),
}
UNKNOWN = Mark("•", _NEUTRAL, "a verdict this report does not know")
HOLDING = frozenset({"holds", "robust"})  # the labels a reader need not look at


def mark(label: str) -> Mark:
    """The mark of a row's `label`; an unknown word gets a neutral one, never an error."""
    return MARKS.get(label, UNKNOWN)


def marked(label: str) -> str:
    """ "✓ holds": the label behind its symbol, as plain text."""
    return f"{mark(label).symbol} {label}"


def _number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def _g(value: float) -> str:
    return f"{value:.4g}"


def _apart(values: list[float]) -> list[str]:
    """`values` in four significant digits, or as many more as tell them apart."""
    for digits in range(4, 17):
        texts = [f"{v:.{digits}g}" for v in values]
        if len(set(texts)) == len(set(values)):
            return texts
    return [repr(v) for v in values]


def _draws(n: int) -> str:
    return f"{n} draw{'' if n == 1 else 's'}"


def _figure_sentence(figure: dict, verdict: str) -> str:
    published, n = str(figure.get("published", "?")), figure.get("orders", 0)
    low, high = figure.get("interval") or (None, None)
    if figure.get("copies") and n == 1:
        return f"the draws collapsed to one value, so nothing checks the published {published}"
    if n == 1 and figure.get("copies_by_value"):
        agreeing = _draws(n + figure["copies_by_value"])
        said = "reproduces" if verdict == "holds" else "does not reproduce"
        return f"{agreeing} agree to float noise (one draw): it {said} the published {published}"
    if not (_number(low) and _number(high)):
        return f"the published {published} over {_draws(n)}"
    span = f"{measured_text(low, published)} to {measured_text(high, published)}"
    if verdict == "inconclusive":
        needed = figure.get("orders_to_conclude")
        more = f"; about {needed} draws would conclude it" if needed else ""
        return f"the recipe's range {span} over {_draws(n)} is too wide to check the published {published}{more}"
    if verdict == "unpinned":
        return f"the published {published} lies inside the recipe's range {span} over {_draws(n)}, too wide for any number of draws to pin it"
    where = "inside" if verdict == "holds" else "outside"
    return f"the published {published} lies {where} the recipe's range {span} over {_draws(n)}"


def _effect_sentence(effect: dict) -> str:
    (k, n), (low, high) = effect["in_region"], effect["range"]
    name = effect.get("effect") or "the value"
    values = f"{_g(low)} in every draw" if _g(low) == _g(high) else f"{_g(low)} to {_g(high)}"
    return f"{name} {values} ({k} of {n} {effect['region']})"


def sentence(claim: dict) -> str:
    """One plain sentence from the record: how the draws bore its verdict out."""
    details, verdict = claim.get("details") or {}, claim.get("verdict", "")
    if verdict == "error":
        return f"could not be checked: {details.get('error') or 'no reason recorded'}"
    figures = details.get("figures")
    if isinstance(figures, list) and figures:
        worst = [f for f in figures if f.get("verdict") == verdict] or figures
        shown = worst if len(worst) < len(figures) else figures
        text = "; ".join(_figure_sentence(f, f.get("verdict", verdict)) for f in shown[:3])
        if len(shown) > 3:
            text += f"; and {len(shown) - 3} more figures"
        return text
    parts = []
    if details.get("inconclusive"):
        parts.append(str(details["inconclusive"]))
    if details.get("collapsed"):
        parts.append(str(details["collapsed"]))
    counts = details.get("holds_in_orders")
    if details.get("fact"):
        k, n = counts
        failing = ", ".join(details.get("fails_in_orders", ()))
        return f"a fact, judged once: it holds in {k} of {n} orders" + (
            f"; fails in {failing}" if failing else ""
        )
    if counts == [1, 1] or counts == [0, 1]:  # a claim no float order changes: judged once
        return "; ".join(
            [*parts, "judged once: " + ("it holds" if counts[0] else "it does not hold")]
        )
    if isinstance(counts, list) and len(counts) == 2:
        k, n = counts
        effects = [_effect_sentence(e) for e in details.get("effects") or ()]
        parts.append(
            f"holds in {k} of {_draws(n)}" + (f": {', '.join(effects[:3])}" if effects else "")
        )
        if verdict == "inconclusive" and details.get("shown_by_counts"):
            parts.append(details["shown_by_counts"].partition(": ")[2])  # what they do show
        if details.get("draws_to_conclude"):
            parts.append(f"about {details['draws_to_conclude']} draws would conclude it")
    if not parts:
        parts.append(f"measured {claim.get('measured', '-')} against {claim.get('tolerance', '-')}")
    return "; ".join(parts)


_REGION = re.compile(r"^(<=|<|>=|>) (\S+)$|^in ([\[(])(\S+), (\S+)[\])]$")


def region_parts(region: str) -> tuple[float | None, float | None, bool] | None:
    """(low, high, closed) of a region as `Region.__str__` writes it ("> 0.3", "in [3, 4]"),
    None for an open end; None when `region` is not one."""
    match = _REGION.match(region.strip())
    if match is None:
        return None
    try:
        if match[1]:
            bound, closed = float(match[2]), match[1].endswith("=")
            return (None, bound, closed) if match[1].startswith("<") else (bound, None, closed)
        return float(match[4]), float(match[5]), match[3] == "["
    except ValueError:
        return None


def region_bounds(region: str) -> tuple[float | None, float | None] | None:
    """(low, high) of a region written by `Region.__str__`, or None."""
    parts = region_parts(region)
    return None if parts is None else parts[:2]


def in_region(value: float, region: str) -> bool | None:
    """Whether `value` lies in the region written by `Region.__str__`; None if unreadable."""
    parts = region_parts(region)
    if parts is None or not _number(value):
        return None
    low, high, closed = parts
    if closed:
        return (low is None or value >= low) and (high is None or value <= high)
    return (low is None or value > low) and (high is None or value < high)


@dataclass(frozen=True)
class Strip:
    """One quantity's draws, with what they are judged against."""

    draws: list[float]
    published: float | None = None
    band: tuple[float | None, float | None] | None = None  # the range or region (None: open)
    label: str = ""
    region: str | None = None  # a threshold's region: each draw is marked in it or not


def strips(claim: dict) -> list[Strip]:
    """The quantities of a claim judged over draws: a figure's against its range, a threshold
    claim's against its region; none for a claim judged once or on words."""
    details = claim.get("details") or {}
    orders = details.get("orders") or {}
    figures = details.get("figures")
    out = []
    if isinstance(figures, list) and figures and len(orders) > 1:
        for i, figure in enumerate(figures):
            draws = []
            for entry in orders.values():
                value = entry.get("measured") if isinstance(entry, dict) else None
                value = value[i] if isinstance(value, list) and i < len(value) else value
                if _number(value):
                    draws.append(float(value))
            try:
                published = float(str(figure.get("published")).replace("−", "-"))
            except ValueError:
                published = None
            interval = figure.get("interval") or (None, None)
            band = tuple(interval) if all(map(_number, interval)) else None
            label = f"published {figure.get('published')}"
            out.append(Strip(draws, published, band, label))  # type: ignore[arg-type]
    for effect in details.get("effects") or ():
        draws = [float(v) for v in effect.get("values") or () if _number(v)]
        if len(draws) > 1:
            bounds = region_bounds(str(effect.get("region", "")))  # None: no band drawn
            name = f"{effect.get('effect') or 'value'} {effect.get('region', '')}"
            region = str(effect.get("region", ""))
            out.append(Strip(draws, None, bounds, name.strip(), region))
    return [s for s in out if len(s.draws) > 1]


_W, _H, _PAD, _TOP, _BAND = 240, 40, 10, 11, 16  # the band drawn from _TOP, _BAND high


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def _text(x: float, y: float, text: str, anchor: str) -> str:
    """A label at `x`, moved in so that it stays inside the picture (about 5 px a character)."""
    width = 5.0 * len(text)
    lowest = {"start": 1.0, "middle": width / 2, "end": width}[anchor]
    x = round(min(max(x, lowest), _W - width + lowest - 1.0), 2)
    return f'<text x="{x}" y="{y}" text-anchor="{anchor}">{_escape(text)}</text>'


def strip_svg(strip: Strip) -> str:
    """`strip` as a small inline SVG on one line: the band shaded green, its ends (a threshold:
    its line) dashed and labelled beneath, each draw a dot (a threshold's: green in its region,
    red outside), the published value a black bar labelled above; a <title> says it in words."""
    band = strip.band or (None, None)
    known = [*strip.draws, *(b for b in band if b is not None)]
    known += [] if strip.published is None else [strip.published]
    left, right = min(known), max(known)
    span = right - left or abs(right) * 1e-6 or 1.0
    left, right = left - 0.08 * span, right + 0.08 * span

    def x(value: float) -> float:
        return round(_PAD + (value - left) / (right - left) * (_W - 2 * _PAD), 2)

    bottom, parts = _TOP + _BAND, []
    if strip.band is not None:
        low = x(band[0]) if band[0] is not None else 0.0
        high = x(band[1]) if band[1] is not None else float(_W)
        parts.append(
            f'<rect x="{low}" y="{_TOP}" width="{max(high - low, 1)}" height="{_BAND}" fill="#1a7f37" fill-opacity="0.15"/>'
        )
        ends = [(x(b), b, a) for b, a in zip(band, ("end", "start"), strict=True) if b is not None]
        for at, _, _ in ends:
            parts.append(
                f'<line x1="{at}" x2="{at}" y1="{_TOP}" y2="{bottom}" stroke="#1a7f37" stroke-dasharray="3 2"/>'
            )
        said = _apart([value for _, value, _ in ends])
        if len(ends) == 2 and ends[1][0] - ends[0][0] < 5.0 * len(" ".join(said)) + 10:
            middle = (ends[0][0] + ends[1][0]) / 2  # too close for a label each
            parts.append(_text(middle, _H - 1, " to ".join(said), "middle"))
        else:
            parts += [
                _text(end[0], _H - 1, text, end[2]) for end, text in zip(ends, said, strict=True)
            ]
    for i, value in enumerate(strip.draws):
        inside = None if strip.region is None else in_region(value, strip.region)
        colour = {None: "#24292f", True: "#1a7f37", False: "#cf222e"}[inside]
        y = _TOP + _BAND / 2 + (i % 3 - 1) * 4  # a little apart where draws coincide
        parts.append(
            f'<circle cx="{x(value)}" cy="{y}" r="2.6" fill="{colour}" fill-opacity="0.8"/>'
        )
    if strip.published is not None:
        p = x(strip.published)
        parts.append(f'<rect x="{p - 1.25}" y="{_TOP - 2}" width="2.5" height="{_BAND + 4}"/>')
        parts.append(_text(p, _TOP - 3, strip.label.removeprefix("published "), "middle"))
    elif strip.label:  # a threshold's: which quantity, where a claim compares several
        name = strip.label if len(strip.label) <= 46 else strip.label[:45] + "…"
        parts.append(_text(1.0, _TOP - 3, name, "start"))
    title = f"{len(strip.draws)} draws from {_g(min(strip.draws))} to {_g(max(strip.draws))}"
    if strip.band is not None:
        ends_text = [
            "-∞" if band[0] is None else _g(band[0]),
            "∞" if band[1] is None else _g(band[1]),
        ]
        title += f"; shaded: {ends_text[0]} to {ends_text[1]}"
    title += f"; {strip.label}" if strip.label else ""
    return (
        f'<svg class="draws" role="img" width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" '
        'xmlns="http://www.w3.org/2000/svg" font-size="9" font-family="sans-serif" '
        f'fill="#24292f"><title>{_escape(title)}</title>{"".join(parts)}</svg>'
    )


def pictures(claim: dict, most: int = 4) -> list[str]:
    """The claim's strips as inline SVGs (at most `most`)."""
    return [strip_svg(s) for s in strips(claim)[:most]]


def counts_by_label(labels: Sequence[str]) -> dict[str, int]:
    """How many rows show each label, in MARKS' order, unknown labels last."""
    order = [*MARKS, *sorted(set(labels) - set(MARKS))]
    return {label: labels.count(label) for label in order if label in labels}
