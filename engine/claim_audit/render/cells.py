"""A claim's published, measured and tolerance cells, its figures shown to the published digits.

The record's own `measured` and `tolerance` texts keep four significant digits; a figure
printed to twelve would read as agreeing to four. Here each measured figure is shown to at
least its published figure's digits, and each tolerance to as many more as its ends need to
differ from each other and to place the published figure inside or outside them as the
verdict did.
"""

from __future__ import annotations

import math
import numbers
from decimal import Decimal, InvalidOperation
from typing import Any

MAX_DIGITS = 17  # a float64 round-trips in 17 significant digits: more show nothing


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _places(printed: str) -> tuple[int, bool] | None:
    """(digits, scientific) of a printed figure: decimals, or mantissa decimals in "1.2e-05"."""
    text = printed.strip().replace("−", "-")
    try:
        number = Decimal(text)
    except InvalidOperation:
        return None
    if not number.is_finite():
        return None
    if "e" in text.lower():
        mantissa = text.lower().split("e")[0]
        return len(mantissa.partition(".")[2]), True
    return max(0, -number.as_tuple().exponent), False  # type: ignore[operator]


def _shown(value: float, digits: int, scientific: bool) -> str:
    if not math.isfinite(value):
        return str(value)
    text = f"{value:.{digits}e}" if scientific else f"{value:.{digits}f}"
    return "0" + text[2:] if text.startswith("-0") and float(text) == 0 else text


def _significant(value: float) -> int:
    """Decimals that give `value` four significant digits, as the record prints it."""
    if value == 0 or not math.isfinite(value):
        return 0
    return max(0, 3 - math.floor(math.log10(abs(value))))


def measured_text(value: float, published: str) -> str:
    """`value` to the published figure's digits, or the record's four significant if more."""
    places = _places(published)
    if places is None:
        return f"{value:.4g}"
    digits, scientific = places
    if scientific:
        return _shown(value, max(digits, 3), True)
    if abs(value) < 1e-3 and value != 0 and digits < _significant(value):
        return f"{value:.3e}"  # the record's own form for a small figure
    return _shown(value, min(max(digits, _significant(value)), MAX_DIGITS), False)


def interval_text(low: float, high: float, published: str) -> str:
    """ "[low, high]" with the digits that keep its ends apart and place `published` as they do."""
    places = _places(published)
    if places is None:
        return f"[{low:.4g}, {high:.4g}]"
    digits, scientific = places
    target = float(Decimal(published.strip().replace("−", "-")))
    inside = low <= target <= high
    digits = max(digits, 3 if scientific else _significant(max(abs(low), abs(high))))
    for extra in range(MAX_DIGITS + 1):
        ends = [_shown(end, digits + extra, scientific) for end in (low, high)]
        shown = [float(end) for end in ends]
        apart = ends[0] != ends[1] or low == high
        if apart and (shown[0] <= target <= shown[1]) == inside:
            break
    return f"[{ends[0]}, {ends[1]}]"


def figure_cells(claim: dict) -> tuple[str, str, str]:
    """A claim's (published, measured, tolerance) cells; a figure claim's from its details."""
    details = claim.get("details") or {}
    cells = (str(claim.get("published", "-")), str(claim.get("measured", "-")))
    tolerance = str(claim.get("tolerance", "-"))
    figures = details.get("figures")
    measured = details.get("measured_values", details.get("measured_value"))
    if isinstance(figures, list) and figures and measured is not None:
        values = measured if isinstance(measured, list) else [measured]
        if len(values) == len(figures) and all(map(_is_number, values)):
            printed = [str(f.get("published", "")) for f in figures]
            joint = " ± " if "±" in cells[0] and len(values) == 2 else ", "
            shown = joint.join(measured_text(v, p) for v, p in zip(values, printed, strict=True))
            ends = [f.get("interval") or [None, None] for f in figures]
            if all(_is_number(a) and _is_number(b) for a, b in ends):
                tolerance = ", ".join(
                    interval_text(a, b, p) for (a, b), p in zip(ends, printed, strict=True)
                )
            return cells[0], shown, tolerance
    faithful = ((details.get("orders") or {}).get("faithful") or {}).get("measured")
    if _is_number(faithful) and _places(cells[0]) is not None:
        return cells[0], measured_text(float(faithful), cells[0]), tolerance
    return cells[0], cells[1], tolerance
