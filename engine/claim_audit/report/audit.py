"""Writes the audit: report/audit.{json,md,html} and report/figures/, rendered from `build`'s dict."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..engine.claim import ClaimRecord
from ..engine.sweep import methods
from ..render import drawing, markdown
from ..render.documents import SCHEMA_VERSION, Document
from ..render.table import ordered, summary_line, verdict_counts
from .provenance import UNKNOWN_PROJECT, Project, metadata


class ReportError(RuntimeError):
    """The report could not be written (the message says where and why)."""


Registered = Sequence[Document | Sequence[Document]]  # documents, or the hook's lists of them


def registered(documents: Registered) -> list[Document]:
    """The documents registered, in order; ReportError for a non-Document or a repeat."""
    out: dict[str, Document] = {}
    figures: dict[str, str] = {}  # file -> the document declaring it
    try:
        for entry in documents:
            for document in [entry] if isinstance(entry, Document) else entry:
                if not isinstance(document, Document):
                    raise TypeError(
                        f"pytest_claims_audit_documents must return Document objects; got {document!r}"
                    )
                if document.name in out:
                    raise ValueError(f"document {document.name!r} is registered twice")
                for file in (spec.file for spec in document.figures):
                    if figures.setdefault(file, document.name) != document.name:
                        raise ValueError(
                            f"figure {file} is declared by {figures[file]!r} and {document.name!r}"
                        )
                out[document.name] = document
    except (TypeError, ValueError) as error:
        raise ReportError(f"the documents registered for the report are wrong: {error}") from error
    return list(out.values())


def audited(records: list[ClaimRecord], documents: Registered) -> list[Document]:
    """The registered documents that have claims among `records`, in registration order."""
    names = {r.document for r in records}
    return [d for d in registered(documents) if d.name in names]


_PUBLISHED_KEYS = ("seeds", "effects", "units", "regions", "region_bounds", "values", "holds")
_SWEEP_KEYS = ("seeds", "effects", "regions", "values", "intervals", "per_seed_values", "unit")
_SWEEP_KEYS += ("per_seed_holds", "subset_values", "subset_holds", "holding", "total", "label")
_CLAIM_KEYS = {  # a claim's part: its keys, and those holding one item per effect
    "published": (_PUBLISHED_KEYS, _PUBLISHED_KEYS[1:-1]),
    "sweep": (_SWEEP_KEYS, ("regions", "values", "intervals")),
}
_ROW_KEYS = ("claim_id", "variant", "post_choice", "effect", "region", "published")


def _require(where: str, value: Any, keys=(), kind: type = dict, per_effect=()) -> None:
    """ReportError unless `value` is a `kind` with `keys`, and `per_effect` keys one per effect."""
    if not isinstance(value, kind):
        raise _malformed(f"{where} is {type(value).__name__}, expected {kind.__name__}")
    if missing := [key for key in keys if key not in value]:
        raise _malformed(f"{where} has no key {missing[0]!r}")
    n = len(value["effects"]) if per_effect else 0
    for k in per_effect:
        if value.get(k) is not None and len(value[k]) != n:
            raise _malformed(f"{where}[{k!r}] has {len(value[k])} items for {n} effects")


def _malformed(problem: str) -> ReportError:
    return ReportError(
        f"the pytest_claims_audit_robustness hook returned a malformed section: {problem} (docs/ADDING_A_DOCUMENT.md gives its keys; claim_audit.seed_section computes one)"
    )


def checked(section: Any) -> dict[str, Any]:
    """The section with the engine's defaults filled in; ReportError names a bad or missing key."""
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
        if "sweep" in claim and section["sweep_seeds"] is None:
            raise _malformed(f"{where} has a 'sweep' but 'sweep_seeds' is None")
        for part, (keys, per_effect) in _CLAIM_KEYS.items():
            if part in claim:
                _require(f"{where}[{part!r}]", claim[part], keys, per_effect=per_effect)
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


def build(
    records: list[ClaimRecord],
    expected: dict[str, bool],
    cache_events: list[dict],
    wall_s: float,
    robustness: dict | None = None,
    partial: list[str] | None = None,
    documents: Registered = (),
    missing: dict[str, str] | None = None,
    project: Project = UNKNOWN_PROJECT,
    environment: Mapping[str, Any] | None = None,
) -> dict:
    """The audit as a JSON-able dict. `partial`: why the run was not complete (then without
    the documents' sections, which could start experiments); `missing`: claim id -> why."""
    shown = audited(records, documents)
    audit: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if partial:
        audit["partial"] = partial
    if missing:
        audit["missing"] = missing
    for document in [] if partial else shown:
        if document.section is not None:
            audit[document.name] = document.section()
    audit["claims"] = [
        {**r.to_json(), "expected_to_hold": expected.get(r.id, True)} for r in ordered(records)
    ]
    if robustness is not None:
        audit["robustness"] = robustness
    audit["summary"] = summary_line(records, expected)
    audit["counts"] = verdict_counts(records, expected)
    audit["metadata"] = metadata(cache_events, wall_s, shown, project, environment)
    return audit


def write_report(
    report_dir: Path, *, documents: Registered = (), figure_cache: Path | None = None, **fields: Any
) -> list[Path]:
    """Write `build(**fields, documents=documents)` into `report_dir` (partial: audit.json and
    audit.md alone), replacing the previous report once whole; figures kept in `figure_cache`."""
    report_dir = Path(report_dir).resolve()
    try:
        if report_dir.exists() and not report_dir.is_dir():
            raise ReportError(
                f"the report folder {report_dir} exists and is not a folder (left as it is); pass --report-dir to a folder or --no-report"
            )
        report_dir.mkdir(parents=True, exist_ok=True)
        lock = os.open(report_dir, os.O_RDONLY)  # flock on the folder itself dies with us
    except OSError as error:  # also a name too long, which `exists` raises
        raise ReportError(
            f"cannot create the report folder {report_dir} ({error}); pass --report-dir to a writable place or --no-report"
        ) from error
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for stale in report_dir.glob(f"{_STAGING}*"):  # killed writers' (we hold the lock)
            if (stale / _OURS).is_file():
                shutil.rmtree(stale, ignore_errors=True)
        with tempfile.TemporaryDirectory(
            prefix=_STAGING, dir=report_dir, ignore_cleanup_errors=True
        ) as staging:
            staged, partial, figures = Path(staging), fields.get("partial"), []
            (staged / _OURS).touch()
            audit = build(**fields, documents=documents)
            if not partial:
                (staged / "figures").mkdir()
                shown, robustness = audited(fields["records"], documents), audit.get("robustness")
                figures = drawing.draw_all(
                    staged / "figures", shown, robustness=robustness, cache_dir=figure_cache
                )
                audit["figures"] = drawing.index(shown, robustness)
                html = markdown.render_html(audit, {f.name: f.read_bytes() for f in figures})
                (staged / "audit.html").write_text(html, encoding="utf-8")
            text = json.dumps(audit, indent=2, allow_nan=False) + "\n"
            (staged / "audit.json").write_text(text, encoding="utf-8")
            text = markdown.render(audit, [f.name for f in figures])
            (staged / "audit.md").write_text(text, encoding="utf-8")
            _move_in(staged, report_dir, drawing.figure_names(registered(documents)))
    except ReportError:
        raise
    except OSError as error:
        raise ReportError(f"cannot write the report to {report_dir} ({error})") from error
    except Exception as error:  # e.g. an experiment behind the report failed; its claims say so
        raise ReportError(
            f"cannot build the report ({type(error).__name__}: {error}); {report_dir} is left as it was"
        ) from error
    finally:
        os.close(lock)
    names = ["audit.json", "audit.md", *([] if partial else ["audit.html"])]
    drawn = [report_dir / "figures" / n for f in figures for n in (f.name, f"{f.stem}.svg")]
    return [report_dir / name for name in names] + drawn


_ENTRIES = ("audit.md", "audit.html", "audit.json")  # moved in in this order: audit.json last
_STAGING = ".claims-report-"
_OURS = ".claims-report-staging"  # marks a staging folder as ours, not the user's
_HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _move_in(staging: Path, report_dir: Path, ours: set[str]) -> None:
    """Move the staged report in with `os.replace`, every target checked first, audit.json last."""
    names = [name for name in ("figures", *_ENTRIES) if (staging / name).exists()]
    for name in names:
        target, wrong = report_dir / name, None
        if target.is_symlink():
            wrong = "a symbolic link"
        elif target.exists() and target.is_dir() != (name == "figures"):
            wrong = "a folder" if target.is_dir() else "a file"
        if wrong:
            raise ReportError(
                f"{target} is {wrong}, where the report puts its {name}; move it away (the report in {report_dir} is left as it was)"
            )
    # Ctrl-C, `kill` or a closed terminal waits until the moves are done (main thread only).
    main = threading.current_thread() is threading.main_thread()
    held = [n for n in _HELD_SIGNALS if main and signal.getsignal(n) is not None]
    caught: list[int] = []
    previous = {n: signal.signal(n, lambda got, _: caught.append(got)) for n in held}
    try:
        if "figures" in names:
            (report_dir / "figures").mkdir(exist_ok=True)
            drawn = {path.name for path in (staging / "figures").iterdir()}
            for name in ours - drawn:  # the report's figures not drawn again; the user's stay
                (report_dir / "figures" / name).unlink(missing_ok=True)
            for name in sorted(drawn):
                os.replace(staging / "figures" / name, report_dir / "figures" / name)
        for name in (name for name in names if name != "figures"):  # in `_ENTRIES`' order
            os.replace(staging / name, report_dir / name)
        shutil.rmtree(staging, ignore_errors=True)  # before a held signal ends the process
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
        for number in dict.fromkeys(caught):
            signal.raise_signal(number)
