"""engine/API.md against the code: every public name of `claim_audit` (its `__all__`) has an
entry headed by its current signature, no entry names what the package does not offer, and
the keyword arguments of a claim are ClaimSpec's fields. Runs with the engine installed alone.

An entry is a heading line "### `NAME(SIGNATURE)`" (a constant: "### `NAME = VALUE`"), NAME
a name of `__all__` or one of its methods ("Claims.case"), followed by what it does in a
line. A failure says which line to add, replace or remove."""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
from pathlib import Path
from typing import Any

import claim_audit
from claim_audit.engine.claim import Claims, ClaimSpec

ENGINE = Path(__file__).resolve().parents[1]
PAGE = ENGINE / "API.md"
HEADING = re.compile(r"^### `([A-Za-z_][\w.]*)(.*)`$")
KEYWORD = re.compile(r"^- `([a-z_]+): (.*)`:")
POSITIONAL = ("id", "document", "section", "statement")  # claims(id, section, statement, ...)


class _Shown:
    """An annotation or default as the page prints it: its source text, unquoted."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _resolve(name: str) -> Any:
    owner, _, member = name.partition(".")
    found = getattr(claim_audit, owner)
    return inspect.getattr_static(found, member) if member else found


def _signature(obj: Any, *, method: bool) -> str:
    signature = inspect.signature(obj)
    fields = (
        dataclasses.fields(obj) if inspect.isclass(obj) and dataclasses.is_dataclass(obj) else ()
    )
    factories = {
        f.name: f.default_factory() for f in fields if f.default_factory is not dataclasses.MISSING
    }
    params = [
        p.replace(
            annotation=_Shown(p.annotation) if isinstance(p.annotation, str) else p.annotation,
            default=factories.get(p.name, p.default),
        )
        for p in signature.parameters.values()
    ][1 if method else 0 :]
    returned = signature.return_annotation
    if inspect.isclass(obj) or returned is inspect.Signature.empty:
        return str(signature.replace(parameters=params, return_annotation=inspect.Signature.empty))
    shown = _Shown(returned) if isinstance(returned, str) else returned
    return str(signature.replace(parameters=params, return_annotation=shown))


def entry(name: str) -> str:
    """The heading line `name`'s entry must have, from the code as it is."""
    obj = _resolve(name)
    if isinstance(obj, staticmethod | classmethod):
        obj = obj.__func__
    if not callable(obj) or isinstance(obj, types.GenericAlias):  # a constant, a type alias
        return f"### `{name} = {obj!r}`"
    return f"### `{name}{_signature(obj, method='.' in name)}`"


def documented() -> dict[str, tuple[int, str]]:
    """Name -> (line number, heading line) of each entry on the page."""
    out = {}
    for number, line in enumerate(PAGE.read_text(encoding="utf-8").splitlines(), 1):
        if (match := HEADING.match(line)) is not None:
            assert match[1] not in out, f"API.md:{number}: {match[1]} has a second entry"
            out[match[1]] = (number, line)
    return out


def test_every_public_name_has_an_entry():
    missing = [name for name in claim_audit.__all__ if name not in documented()]
    lines = "\n\n".join(f"{entry(name)}\n\nWhat it does, in one line." for name in missing)
    assert not missing, (
        f"engine/API.md has no entry for {missing}: add, under the heading of its kind, "
        f"each heading line below with one line saying what it does:\n\n{lines}"
    )


def test_every_entry_shows_the_current_signature():
    wrong = {
        name: (number, line, entry(name))
        for name, (number, line) in documented().items()
        if name.split(".")[0] in claim_audit.__all__ and line != entry(name)
    }
    replace = "\n".join(f"API.md:{n}: replace\n  {old}\nwith\n  {new}" for n, old, new in wrong.values())  # fmt: skip
    assert not wrong, f"engine/API.md shows signatures the code no longer has:\n{replace}"


def test_no_entry_names_what_the_package_does_not_offer():
    stray = {
        name: number
        for name, (number, _) in documented().items()
        if name.split(".")[0] not in claim_audit.__all__
    }
    assert not stray, (
        f"engine/API.md has entries for names not in claim_audit.__all__ "
        f"(line numbers): {stray}; remove them, or add the name to __all__ in "
        "engine/claim_audit/__init__.py"
    )


def _keyword(field: dataclasses.Field) -> str:
    default = field.default
    if default is dataclasses.MISSING:  # published: required of ClaimSpec, None for a claim
        default = inspect.signature(Claims._define).parameters[field.name].default
    return f"{field.name}: {field.type} = {default!r}"


def test_a_claims_keyword_arguments_are_claimspecs_fields():
    fields = [f for f in dataclasses.fields(ClaimSpec) if f.name not in POSITIONAL]
    page = PAGE.read_text(encoding="utf-8").splitlines()
    listed = {m[1]: (n, m[0][3:-2]) for n, line in enumerate(page, 1) if (m := KEYWORD.match(line))}  # fmt: skip
    expected = {f.name: _keyword(f) for f in fields}
    add = [f"- `{text}`: what it does." for name, text in expected.items() if name not in listed]
    assert not add, "engine/API.md lacks a claim's keyword arguments; add:\n" + "\n".join(add)
    wrong = [
        f"API.md:{n}: replace `{text}` with `{expected[name]}`"
        for name, (n, text) in listed.items()
        if name in expected and text != expected[name]
    ]
    assert not wrong, "\n".join(wrong)
    stray = sorted(set(listed) - set(expected))
    assert not stray, f"engine/API.md lists keyword arguments ClaimSpec has not: {stray}"


def test_the_page_is_linked_from_the_readme_and_the_guide():
    for path in (ENGINE / "README.md", ENGINE.parent / "docs" / "ADDING_A_DOCUMENT.md"):
        assert "API.md" in path.read_text(encoding="utf-8"), f"{path} does not link API.md"
