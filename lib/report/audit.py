"""Writes the audit: report/audit.{json,md,html} and report/figures/*.{png,svg}.

Everything here reads the experiments through the same cached functions the
claim tests use; nothing is recomputed differently for the report.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import flax
import jax
import numpy as np
import optax

import lib
from lib import data
from lib.report import html, markdown
from lib.report.claim import ClaimRecord
from lib.report.provenance import provenance
from lib.report.table import ordered, summary_line

SCHEMA_VERSION = 1


class ReportError(RuntimeError):
    """The report could not be written (the message says where and why)."""


def metadata(cache_events: list[dict], wall_s: float) -> dict[str, Any]:
    """Versions, platform, provenance (commit, command, device, lock digest), data digests,
    cache activity and wall time of this run."""
    return {
        "created_unix": round(time.time(), 1),
        "wall_s": round(wall_s, 2),
        "versions": {
            "lib": lib.__version__,
            "python": platform.python_version(),
            "jax": jax.__version__,
            "flax": flax.__version__,
            "optax": optax.__version__,
            "numpy": np.__version__,
        },
        "platform": {
            "system": platform.platform(),
            "machine": platform.machine(),
            "jax_backend": jax.default_backend(),
        },
        **provenance(),
        "data_digests": data.data_digests(),
        "cache": {
            "hits": sum(e["status"] == "hit" for e in cache_events),
            "computed": sum(e["status"] == "computed" for e in cache_events),
            "uncached": sum(e["status"] == "uncached" for e in cache_events),
            "events": cache_events,
        },
    }


# Documents with a JSON section and figures; claims of any other document are only listed.
DOCUMENTS = ("calibration", "uncertainty")


def _documents(records: list[ClaimRecord]) -> set[str]:
    return {r.document for r in records} & set(DOCUMENTS)


def robustness(documents: set[str], sweep: tuple[int, ...] | None) -> dict | None:
    """The `robustness` section for the audited documents (lib/robustness/summary.py).

    `sweep`: the seeds of --seeds, or None for the published seeds and choices only.
    None when no document with experiments was audited.
    """
    known = set(documents) & set(DOCUMENTS)
    if not known:
        return None
    try:
        from lib.robustness.summary import robustness_section

        return robustness_section(known, sweep)
    except Exception as error:  # an experiment behind it failed; the claims say which
        raise ReportError(
            f"cannot compute the robustness section ({type(error).__name__}: {error})"
        ) from error


def build(
    records: list[ClaimRecord],
    expected: dict[str, bool],
    cache_events: list[dict],
    wall_s: float,
    robustness: dict | None = None,
) -> dict:
    """The audit as a JSON-able dict (the contract of issues 3 to 5, 7)."""
    documents = _documents(records)
    audit: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if "calibration" in documents:
        from lib.report.sections import calibration_section

        audit["calibration"] = calibration_section()
    if "uncertainty" in documents:
        from lib.report.sections import uncertainty_section

        audit["uncertainty"] = uncertainty_section()
    audit["claims"] = [
        {**r.to_json(), "expected_to_hold": expected.get(r.id, True)} for r in ordered(records)
    ]
    if robustness is not None:
        audit["robustness"] = robustness
    audit["summary"] = summary_line(records, expected)
    audit["metadata"] = metadata(cache_events, wall_s)
    return audit


def write_report(
    report_dir: Path,
    *,
    records: list[ClaimRecord],
    expected: dict[str, bool],
    cache_events: list[dict],
    wall_s: float,
    robustness: dict | None = None,
) -> list[Path]:
    """Write the report into `report_dir`, replacing the previous one only when complete.

    `robustness`: the section made by `robustness()`, if any, with its figure.
    """
    report_dir = Path(report_dir).resolve()
    if report_dir.exists() and not report_dir.is_dir():
        raise ReportError(
            f"the report folder {report_dir} exists and is not a folder (left as it is); pass --report-dir to a folder or --no-report"
        )
    try:
        report_dir.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".report-", dir=report_dir.parent))
        staging.chmod(0o777 & ~_umask())  # mkdtemp makes it private; a report is for sharing
    except OSError as error:
        raise ReportError(
            f"cannot create the report folder {report_dir} ({error}); pass --report-dir to a writable place or --no-report"
        ) from error
    try:
        audit = build(records, expected, cache_events, wall_s, robustness)
        figures, audit["figures"] = _figures(staging / "figures", _documents(records), robustness)
        (staging / "audit.json").write_text(json.dumps(audit, indent=2, allow_nan=False) + "\n")
        (staging / "audit.md").write_text(markdown.render(audit, [f.name for f in figures]))
        (staging / "audit.html").write_text(
            html.render(audit, {f.name: f.read_bytes() for f in figures}), encoding="utf-8"
        )
        _swap_in(staging, report_dir)
    except OSError as error:
        raise ReportError(f"cannot write the report to {report_dir} ({error})") from error
    except Exception as error:  # e.g. an experiment behind the report failed; its claims say so
        raise ReportError(
            f"cannot build the report ({type(error).__name__}: {error}); {report_dir} is left as it was"
        ) from error
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return [
        report_dir / "audit.json",
        report_dir / "audit.md",
        report_dir / "audit.html",
        *(report_dir / "figures" / name for f in figures for name in (f.name, f"{f.stem}.svg")),
    ]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _figures(
    folder: Path, documents: set[str], robustness: dict | None
) -> tuple[list[Path], list[dict]]:
    """Draw the figures; their PNG paths and audit.json's `figures` index of them."""
    from lib.report import figures

    folder.mkdir(parents=True)
    paths = figures.draw_all(folder, documents, robustness=robustness)
    return paths, figures.index([p.name for p in paths], robustness)


def _swap_in(staging: Path, report_dir: Path) -> None:
    """Move the finished report's entries into report_dir, replacing only those entries.

    Other files there (e.g. report/bench.json) are left alone; each entry is renamed
    into place, so the old audit survives until the new one is complete.
    """
    if not report_dir.exists():
        os.replace(staging, report_dir)
        return
    for entry in sorted(staging.iterdir()):
        target = report_dir / entry.name
        if target.is_dir() and not target.is_symlink():
            old = report_dir / f".{entry.name}.old-{os.getpid()}"
            os.replace(target, old)
            os.replace(entry, target)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(entry, target)
