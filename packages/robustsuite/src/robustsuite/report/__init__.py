"""The unified report: one versioned JSON (the source of truth) rendered to Markdown and HTML.

``report.json`` follows :data:`REPORT_SCHEMA` (schema 2.0, :mod:`.schema`, which also reads schema 1.x through
:func:`migrate`). Every write validates the schema and runs the whole-report check (:func:`check_report`);
``report.md`` and ``report.html`` (figures embedded as base64 PNG) are renderings of it (:mod:`.render`).
Per-sample records live in :mod:`.samples`.
"""

from __future__ import annotations

import json
from pathlib import Path

from robustsuite_common.experiment import Table

from .check import ReportCheckError, check_report, top_warnings
from .render import format_value, headline_path, headline_png, render_html, render_markdown
from .schema import REPORT_SCHEMA, SCHEMA_VERSION, Figure, ReportVersionError, Section, migrate

__all__ = [
    "REPORT_SCHEMA", "SCHEMA_VERSION", "Figure", "ReportCheckError", "ReportVersionError", "Section", "Table",
    "check_report", "format_value", "headline_path", "migrate", "read_report", "render_html", "render_markdown",
    "rerender", "top_warnings", "write_report",
]


def write_report(run_dir: Path, report: dict) -> dict[str, Path]:
    """Validate ``report`` (:data:`REPORT_SCHEMA`, then :func:`check_report`) and write report.json, report.md,
    report.html and the sections' headline charts atomically into ``run_dir``; nothing is written when a check
    fails (``jsonschema.ValidationError``, :class:`ReportCheckError`)."""
    import jsonschema

    from robustsuite_common.io import write_bytes, write_json, write_text

    jsonschema.validate(report, REPORT_SCHEMA)
    problems = check_report(report)
    if problems:
        raise ReportCheckError(problems)
    run_dir = Path(run_dir)
    for key, sec in report["sections"].items():
        png = headline_png(sec)
        if png is not None:
            write_bytes(run_dir / headline_path(key), png)
    paths = {"json": run_dir / "report.json", "md": run_dir / "report.md", "html": run_dir / "report.html"}
    write_json(paths["json"], report)
    write_text(paths["md"], render_markdown(report))
    write_text(paths["html"], render_html(report, run_dir))
    return paths


def read_report(run_dir: Path) -> dict:
    """``run_dir/report.json`` in the current schema (migrated from 1.x); :class:`ReportVersionError` (a
    ``ConfigError``: exit status 2 on the command line) when it is missing, unreadable or of an unknown version."""
    path = Path(run_dir) / "report.json"
    if not path.is_file():
        raise ReportVersionError(f"no report.json in {run_dir}")
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ReportVersionError(f"{path} is not valid JSON ({e}); recompute it with `robustsuite collect "
                                 f"{run_dir}`") from None
    try:
        return migrate(report)
    except ReportVersionError:
        raise
    except (TypeError, KeyError, AttributeError, ValueError) as e:  # a 1.x report this reader cannot follow
        version = report.get("schema_version") if isinstance(report, dict) else None
        raise ReportVersionError(
            f"{path} has report schema {version!r}, which could not be read as schema {SCHEMA_VERSION} "
            f"({type(e).__name__}: {e}); rebuild it from the unit records with `robustsuite collect {run_dir}`, or "
            f"recompute the run with this version (`robustsuite run CONFIG --out {run_dir}`)") from None


def rerender(run_dir: Path) -> dict[str, Path]:
    """Re-render Markdown and HTML from ``run_dir/report.json`` (a 1.x report is migrated and rewritten as 2.0).

    A migrated report that fails the whole-report check raises :class:`ReportVersionError` naming the version
    that wrote it, the problems, and what to run.
    """
    report = read_report(run_dir)
    old = report["run"].get("migrated_from")
    problems = check_report(report) if old is not None else []
    if problems:
        writer = report["run"].get("versions", {}).get("robustsuite") or "an unknown version"
        raise ReportVersionError(
            f"{Path(run_dir) / 'report.json'} was written with report schema {old} by robustsuite {writer}; read "
            f"as schema {SCHEMA_VERSION} it fails the report check ({'; '.join(problems[:5])}). Recompute the run "
            f"with this version: `robustsuite run CONFIG --out {run_dir}` (its config is in run.json; "
            "`robustsuite demo` for the demo), which rewrites the report")
    return write_report(run_dir, report)
