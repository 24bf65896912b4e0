"""Claims written where their tests live: the statement on the test, the comparison in its body.

    claims = Claims("toy")

    @claims("toy-1", "Fit", "The fit prints the slope 2.0", published="2.0")
    def test_slope(fits):
        return fits.slope

The decorator defines the claim once (a `ClaimSpec` in the `claims` registry) and turns the
body into the claim's test, which closes over the spec (a case of `claims.each` carries its
spec on its `claim` marker, which also tells the plugin the test is a claim's). The engine
runs the body once per valid float order: every argument that is an `Orders` is handed to
the body one order's results at a time (the other fixtures as they are), and the verdict is
taken over what the body returned in each order (claim_audit.engine.claim). A body
returns

- a number (a 0-d numpy array too), or a sequence of numbers for a tuple of published
  figures, or `figure(value, **details)` to record figures beside it (e.g. per seed; an
  array among them is recorded as a list): a figure claim;
- `over_seeds(values, ddof=...)`: figures over seeds, for a figure published as a mean
  ("6.20") or as a mean and its sd over seeds ("6.20 ± 1.13");
- a `Judgement` (`satisfied`, `within`, a comparison's): a qualitative claim; its
  `published` may be left out, the claim's is used.

A claim whose published text is figures ("6.20", "6.20 ± 1.13", ("1.37", "2.07")) is a
figure claim and its body returns figures; any other returns a `Judgement`.

A body whose arguments hold no `Orders` is judged once (a claim about the code or the
recipe, which no float order changes). A parametrized claim gives each case its own claim:
`claims.each(argnames, [claims.case(id, section, statement, *values, published=...), ...])`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pytest

from ..orders import FAITHFUL, Orders
from .claim import ClaimRecord, ClaimSpec, ClaimSpecs, Published, conclude, decide, record_property
from .verdict import Judgement, Measured, mean_and_sd, printed_figures

Body = Callable[..., Any]


@dataclasses.dataclass(frozen=True)
class OverSeeds:
    """Per-seed values of one figure, and the ddof of the sd a document prints beside their
    mean (0: the population sd, numpy's default; 1: the sample sd)."""

    values: tuple[float, ...]
    ddof: int

    def figures(self, published: Published) -> Measured:
        """The mean (and, for "m ± s", the sd) against the published figures."""
        if not isinstance(published, str):
            raise ValueError(
                f"over_seeds figures are published as one mean ('6.20') or a mean and its sd "
                f"('6.20 ± 1.13'); got {published!r}"
            )
        pair = mean_and_sd(published)
        x = np.asarray(self.values, dtype=np.float64)
        details = {"per_seed": list(self.values), "sd_ddof": self.ddof}
        if pair is None:
            return Measured((published,), (float(x.mean()),), details)
        return Measured(pair, (float(x.mean()), float(x.std(ddof=self.ddof))), details)


@dataclasses.dataclass(frozen=True)
class Figures:
    """A figure claim's measured figures in one order, with details recorded beside them
    (the numbers as the body gave them; the engine makes them floats where it judges them)."""

    values: tuple[Any, ...]
    details: dict[str, Any]


def figure(value: float | Sequence[float], **details: Any) -> Figures:
    """A figure (or one per published figure) and `details` recorded beside it."""
    values = (value,) if _is_number(value) else tuple(value)  # type: ignore[arg-type]
    if not values or not all(_is_number(v) for v in values):
        raise TypeError(f"figure(...) takes a number or a sequence of numbers; got {value!r:.60}")
    return Figures(values, details)


def is_figures(published: Published) -> bool:
    """Whether a claim's published text is figures (each a number, or a mean ± sd)."""
    if published is None:
        return False
    return all(_parses(p) for p in printed_figures(published))


def _parses(printed: str) -> bool:
    try:
        float(printed)
    except ValueError:
        return False
    return True


def over_seeds(values: Iterable[float], *, ddof: int) -> OverSeeds:
    """A figure's values over seeds; the claim judges their mean, and their sd with the
    given `ddof` where the document prints one ("6.20 ± 1.13")."""
    values = tuple(_as_float(v, "over_seeds(...) was given") for v in values)
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 (population sd) or 1 (sample sd); got {ddof!r}")
    if len(values) <= ddof:
        raise ValueError(f"an sd with ddof={ddof} needs more than {ddof} seeds; got {values}")
    return OverSeeds(values, ddof)


def _is_number(value: Any) -> bool:
    """A real number; a 0-d numpy array of one (what numpy reductions often return) too."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.dtype.kind in "iuf"
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _as_float(value: Any, where: str) -> float:
    """`value` as a float; an int beyond a float's range (10**400) is a ValueError saying so,
    not an OverflowError from inside the engine."""
    try:
        return float(value)
    except OverflowError:
        raise ValueError(
            f"{where} {value!r:.40}... is too large for a float (beyond ±1.8e308); "
            "the experiment or its input is broken, so there is no verdict"
        ) from None


def _as_judgement(claim_id: str, published: Published, value: Any) -> Judgement | Measured:
    """What a claim body returned, as the engine judges it (see the module's docstring)."""
    figures = is_figures(published)
    if figures == isinstance(value, Judgement):
        kind = "figures" if figures else "a Judgement (satisfied, within, a comparison's)"
        raise TypeError(
            f"{claim_id}: its body returned {type(value).__name__} {value!r:.60}; with "
            f"published {published!r} it returns {kind}"
        )
    if isinstance(value, Judgement):
        if value.published is None:
            return dataclasses.replace(value, published=published)
        return value
    if isinstance(value, Measured):
        return value
    if isinstance(value, OverSeeds):
        return value.figures(published)
    if published is None:
        raise ValueError(f"{claim_id}: a figure claim needs its published figure (published=)")
    if isinstance(published, str) and mean_and_sd(published):
        raise ValueError(
            f"{claim_id}: published {published!r} is a mean and its sd over seeds; "
            "return over_seeds(values, ddof=...)"
        )
    printed = published if isinstance(published, tuple) else (published,)
    if isinstance(value, Figures):
        if len(value.values) != len(printed):
            raise ValueError(
                f"{claim_id}: {len(value.values)} figures measured, {len(printed)} published"
            )
        value, details = value.values, dict(value.details)
    elif _is_number(value):
        value, details = (value,), {}
    else:
        details = {}
    if (
        isinstance(value, Sequence | np.ndarray)
        and len(value) == len(printed)
        and all(_is_number(v) for v in value)
    ):
        measured = tuple(_as_float(v, f"{claim_id}: its body returned the figure") for v in value)
        return Measured(printed, measured, details)
    raise TypeError(
        f"{claim_id}: its body returned {type(value).__name__} {value!r:.60}; a claim body "
        f"returns a number (or one per published figure: {len(printed)}), over_seeds(...), "
        "or a Judgement (satisfied, within)"
    )


def judge_body(spec: ClaimSpec, body: Body, arguments: Mapping[str, Any]) -> ClaimRecord:
    """Run `body` once per order of its `Orders` arguments (once, when it has none or its
    claim is `once`) and decide the claim over what it returned."""
    orders = {name: value for name, value in arguments.items() if isinstance(value, Orders)}
    names = [FAITHFUL]
    copies = 0
    if orders and not spec.once:
        names = list(next(iter(orders.values())))
        differ = {k: list(v) for k, v in orders.items() if list(v) != names}
        if differ:
            raise ValueError(
                f"{spec.id}: its Orders arguments name different orders: {names} and {differ}"
            )
        # A copy in every argument is a copy of the draw (claim_audit.orders).
        repeated = set.intersection(*(set(o.copies()) for o in orders.values()))
        copies = len(repeated)
        names = [name for name in names if name not in repeated]

    def in_order(name: str) -> dict[str, Any]:
        return {k: v[name] if k in orders else v for k, v in arguments.items()}

    judgements = {
        name: _as_judgement(spec.id, spec.published, body(**in_order(name))) for name in names
    }
    return decide(spec, judgements, copies=copies)


def run_claim(
    spec: ClaimSpec, body: Body, arguments: Mapping[str, Any], user_properties: list
) -> ClaimRecord:
    """What a claim's test does: judge `body` (`judge_body`), record the claim among its
    report's `user_properties`, then pass or fail as the verdict says."""
    record = judge_body(spec, body, arguments)
    user_properties.append(record_property(record))
    conclude(spec, record)
    return record


class Claims(ClaimSpecs):
    """One document's claims, each defined by decorating its test (`claims(...)`), or by a
    case of a parametrized test (`claims.each`, `claims.case`)."""

    def __init__(self, document: str, specs: Iterable[ClaimSpec] = ()):
        if not isinstance(document, str) or not document:
            raise ValueError(f"a document's name must be a non-empty string; got {document!r}")
        self.document = document
        super().__init__(specs)

    def __call__(
        self, id: str, section: str, statement: str, *, published: Published = None, **kw: Any
    ) -> Callable[[Body], Body]:
        """Define the claim `id` and make the decorated body its test. `kw`: `reading`,
        `finding`, `once`, `beside`, `origin`, `gates` (`ClaimSpec`)."""

        def decorate(body: Body) -> Body:
            spec = self._define(id, section, statement, published, body, kw)
            return spec.mark(_claim_test(body, lambda request: spec))

        return decorate

    def case(
        self,
        id: str,
        section: str,
        statement: str,
        *values: Any,
        published: Published = None,
        **kw: Any,
    ) -> Any:
        """One case of a parametrized claim test (`each`): its own claim, with the test's
        parameters `values`; the test is named after the claim id."""
        spec = self._define(id, section, statement, published, _unbound(id), kw)
        return pytest.param(*values, marks=spec.mark, id=id)

    def each(self, argnames: str | Sequence[str], cases: Sequence[Any]) -> Callable[[Body], Body]:
        """Parametrize the decorated body over `cases` (`case(...)`): each case is its own
        claim, judged by this body."""

        def decorate(body: Body) -> Body:
            bound = []
            for case in cases:
                marks = [m for m in case.marks if m.name == "claim"]
                if len(marks) != 1:
                    raise ValueError(f"{body.__name__}: each case is a claims.case(...)")
                spec = self._rebind(marks[0].args[0].id, body)
                others = [m for m in case.marks if m.name != "claim"]
                bound.append(pytest.param(*case.values, marks=[*others, spec.mark], id=case.id))
            test = _claim_test(body, lambda request: spec_of(request.node))
            return pytest.mark.parametrize(argnames, bound)(test)

        return decorate

    def _define(
        self,
        id: str,
        section: str,
        statement: str,
        published: Published,
        body: Body,
        kw: dict[str, Any],
    ) -> ClaimSpec:
        spec = ClaimSpec(
            id,
            self.document,
            section,
            statement,
            published,
            body,
            figure=is_figures(published),
            **kw,
        )
        self.add(spec)
        return spec

    def _rebind(self, claim_id: str, body: Body) -> ClaimSpec:
        """Make `body` the judge of a case's claim (defined by `case`, before its test)."""
        spec = dataclasses.replace(self[claim_id], judge=body)
        self.add(spec, replace=True)
        return spec


def _unbound(claim_id: str) -> Body:
    def unbound(**_: Any) -> Any:
        raise RuntimeError(f"{claim_id}: a claims.case(...) outside claims.each(...)")

    return unbound


def spec_of(item: pytest.Item) -> ClaimSpec | None:
    """The claim a collected test judges (its `claim` marker's spec), if it is a claim's."""
    marker = item.get_closest_marker("claim")
    return marker.args[0] if marker is not None and marker.args else None


def _claim_test(body: Body, spec: Callable[[pytest.FixtureRequest], ClaimSpec]) -> Body:
    """The test pytest runs for a claim body: it asks for the body's own fixtures (and
    `request`), judges the body over the orders, records the claim on its report, then
    passes or fails as the verdict says."""
    params = list(inspect.signature(body).parameters.values())
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
        raise ValueError(f"{body.__name__}: a claim body names each fixture it reads")
    wants_request = any(p.name == "request" for p in params)

    @functools.wraps(body)
    def test(request: pytest.FixtureRequest, **arguments: Any) -> None:
        if wants_request:
            arguments["request"] = request
        run_claim(spec(request), body, arguments, request.node.user_properties)

    request_param = inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    named = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params if p.name != "request"]
    test.__signature__ = inspect.Signature([request_param, *named])  # type: ignore[attr-defined]
    return test
