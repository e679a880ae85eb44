"""Reading reports written by older versions: schema 1.0 and 1.1 ``report.json`` files become 2.0.

:func:`migrate` is what ``robustsuite report`` and ``robustsuite collect`` call on a run directory written
before 2.0; a version it does not know raises :class:`ReportVersionError` naming the version that wrote it
and what to run instead (no traceback: it is a :class:`~robustsuite.errors.ConfigError`).
"""

from __future__ import annotations

import copy
from typing import Any

from ..errors import ConfigError
from .schema import SCHEMA_VERSION, metrics_from_flat

READS = ("1.0", "1.1", SCHEMA_VERSION)
_WARNING = "WARNING: "  # how 1.x sections from experiment results carried their warnings (as notes)


class ReportVersionError(ConfigError):
    """A ``report.json`` this version cannot read (unknown or newer schema, or not a report at all)."""


def _writer(report: dict) -> str:
    v = (report.get("run") or {}).get("versions", {}).get("robustsuite") if isinstance(report, dict) else None
    return f"robustsuite {v}" if v else "an unknown robustsuite version"


def section_from_v1(sec: dict) -> dict:
    """A 1.x section as a 2.0 section (flat metrics folded, ``WARNING:`` notes moved to ``warnings``)."""
    notes = [str(n) for n in sec.get("notes", [])]
    warnings = [n[len(_WARNING):] for n in notes if n.startswith(_WARNING)]
    metrics = metrics_from_flat(sec.get("metrics", {}))
    flag = metrics.get("model_at_chance", {}).get("value") is True
    out = {"warnings": warnings, "model_at_chance": flag, "deterministic": bool(sec.get("deterministic", False))}
    out |= {k: v for k, v in sec.items() if k not in ("metrics", "tables", "notes", "warnings")}
    out["metrics"] = metrics
    out["tables"] = [{"units": {}, "bounds": {}} | dict(t) for t in sec.get("tables", [])]
    out["notes"] = [n for n in notes if not n.startswith(_WARNING)]
    return out


def top_warnings(sections: dict[str, dict]) -> list[dict[str, str]]:
    """The report's top-level ``warnings``: every section's, in section order."""
    return [{"section": k, "message": w} for k, s in sections.items() for w in s.get("warnings", [])]


def migrate(report: Any) -> dict:
    """``report`` (a parsed ``report.json``) in schema 2.0; a 2.0 report is returned unchanged.

    Intervals are carried over as they were written (an old interval that excludes its estimate stays, so
    :func:`robustsuite.report.check_report` can name it). Raises :class:`ReportVersionError` for anything
    else, naming the version that wrote it.
    """
    if not isinstance(report, dict) or "schema_version" not in report:
        raise ReportVersionError("not a robustsuite report: no schema_version (expected a report.json written by "
                                 "`robustsuite run`, `demo` or `collect`)")
    version = str(report["schema_version"])
    if version == SCHEMA_VERSION:
        return report
    if version not in READS:
        raise ReportVersionError(
            f"report schema {version!r} (written by {_writer(report)}) is not one this robustsuite reads "
            f"({', '.join(READS)}): render it with the version that wrote it, or recompute the run with this one "
            "(`robustsuite run CONFIG --out DIR`; the run's config is in DIR/run.json)")
    old = copy.deepcopy(report)
    sections = {k: section_from_v1(s) for k, s in old.get("sections", {}).items()}
    run = dict(old.get("run", {})) | {"migrated_from": version}
    return {"schema_version": SCHEMA_VERSION, "warnings": top_warnings(sections), "run": run,
            "units": old.get("units", []), "sections": sections}
