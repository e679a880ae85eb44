"""The unified report: one versioned JSON (the source of truth) rendered to Markdown and HTML.

``report.json`` follows :data:`REPORT_SCHEMA` (JSON Schema, validated on every write): run metadata and
provenance, the units of work, and one section per method with metrics, tables, figures and notes.
``report.md`` and ``report.html`` (figures embedded as base64 PNG, no external files) are renderings of it.
"""

from __future__ import annotations

import base64
import html
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ._io import write_json, write_text

SCHEMA_VERSION = "1.1"  # 1.1: seeds, samples, uv.lock hash, user_git, NAME_ci_low/high convention
Scalar = str | int | float | bool | None

_SCALAR = {"type": ["string", "number", "integer", "boolean", "null"]}
REPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "robustsuite report",
    "type": "object",
    "required": ["schema_version", "run", "units", "sections"],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "run": {
            "type": "object",
            "required": ["id", "created", "seed", "device", "config", "versions", "command"],
            "properties": {
                "id": {"type": "string"},
                "created": {"type": "string"},
                "finished": {"type": ["string", "null"]},
                "seed": {"type": "integer"},
                "device": {"type": "string"},
                "config": {"type": "object"},
                "versions": {"type": "object", "additionalProperties": {"type": ["string", "null"]}},
                "git": {"type": ["string", "null"]},
                "seeds": {"type": "array", "items": {"type": "integer"}},
                "uv_lock_sha256": {"type": ["string", "null"]},
                "user_git": {"type": ["object", "null"],
                             "properties": {"commit": {"type": "string"}, "repository": {"type": "string"},
                                            "dirty": {"type": "boolean"}}},
                "command": {"type": "string"},
                "platform": {"type": "string"},
            },
        },
        "units": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "method", "model", "dataset", "status"],
                "properties": {
                    "id": {"type": "string"},
                    "method": {"type": "string"},
                    "model": {"type": "string"},
                    "dataset": {"type": "string"},
                    "status": {"enum": ["done", "failed", "pending"]},
                    "seconds": {"type": ["number", "null"]},
                    "error": {"type": ["string", "null"]},
                    "seed": {"type": "integer"},
                    "samples": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
        "sections": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["title", "summary", "metrics", "tables", "figures", "notes"],
                "properties": {
                    "title": {"type": "string"},
                    "summary": {"type": "string"},
                    "paper": {"type": ["string", "null"]},
                    "model": {"type": ["string", "null"]},
                    "dataset": {"type": ["string", "null"]},
                    "method": {"type": "string"},
                    "seeds": {"type": "array", "items": {"type": "integer"}},
                    "samples": {"type": "array", "items": {"type": "string"}},
                    "seconds": {"type": ["number", "null"]},
                    "metrics": {"type": "object", "additionalProperties": _SCALAR},
                    "tables": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["name", "title", "columns", "rows"],
                            "properties": {
                                "name": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+$"},
                                "title": {"type": "string"},
                                "columns": {"type": "array", "items": {"type": "string"}},
                                "rows": {"type": "array", "items": {"type": "array", "items": _SCALAR}},
                            },
                        },
                    },
                    "figures": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["name", "path", "caption"],
                            "properties": {"name": {"type": "string"}, "path": {"type": "string"},
                                           "caption": {"type": "string"}},
                        },
                    },
                    "notes": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
}


def _clean(value: Any) -> Scalar:
    """A JSON-safe scalar: numpy/torch numbers become Python numbers, NaN/inf become None."""
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, str | bool | int | float):
        return value
    raise TypeError(f"report values must be scalars (str, number, bool, None), got {type(value).__name__}")


@dataclass(frozen=True)
class Table:
    name: str
    title: str
    columns: list[str]
    rows: list[list[Scalar]]

    def __post_init__(self) -> None:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"table {self.name!r}: row {i} has {len(row)} cells for {len(self.columns)} columns")

    def to_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "columns": list(self.columns),
                "rows": [[_clean(v) for v in row] for row in self.rows]}


@dataclass(frozen=True)
class Figure:
    name: str
    path: str  # relative to the run directory
    caption: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Section:
    """One method's part of the report (what a runner returns)."""

    title: str
    summary: str
    metrics: dict[str, Scalar] = field(default_factory=dict)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"title": self.title, "summary": self.summary,
                "metrics": {str(k): _clean(v) for k, v in self.metrics.items()},
                "tables": [t.to_dict() for t in self.tables], "figures": [f.to_dict() for f in self.figures],
                "notes": [str(n) for n in self.notes]}


def validate(report: dict) -> None:
    """Raise ``jsonschema.ValidationError`` if ``report`` does not follow :data:`REPORT_SCHEMA`."""
    import jsonschema

    jsonschema.validate(report, REPORT_SCHEMA)


def format_value(v: Scalar, digits: int = 4) -> str:
    """A report cell: floats to ``digits`` significant figures, None as an en dash, bools as yes/no."""
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


_fmt = format_value


CI_LOW, CI_HIGH = "_ci_low", "_ci_high"


def metric_rows(metrics: dict[str, Scalar]) -> list[tuple[str, str]]:
    """``(name, text)`` per metric; ``NAME`` with ``NAME_ci_low``/``NAME_ci_high`` becomes ``x [lo, hi]``."""
    rows = []
    for k, v in metrics.items():
        if k.endswith((CI_LOW, CI_HIGH)) and k.rsplit("_ci_", 1)[0] in metrics:
            continue
        lo, hi = metrics.get(k + CI_LOW), metrics.get(k + CI_HIGH)
        text = _fmt(v) + (f" [{_fmt(lo)}, {_fmt(hi)}]" if lo is not None and hi is not None else "")
        rows.append((k, text))
    return rows


def table_cells(columns: list[str], rows: list[list[Scalar]]) -> tuple[list[str], list[list[str]]]:
    """Columns ``C``, ``C_ci_low``, ``C_ci_high`` rendered as one column ``C`` holding ``x [lo, hi]``."""
    keep = [i for i, c in enumerate(columns)
            if not (c.endswith((CI_LOW, CI_HIGH)) and c.rsplit("_ci_", 1)[0] in columns)]
    out = []
    for row in rows:
        cells = []
        for i in keep:
            c = columns[i]
            text = _fmt(row[i])
            if c + CI_LOW in columns and c + CI_HIGH in columns:
                lo, hi = row[columns.index(c + CI_LOW)], row[columns.index(c + CI_HIGH)]
                if lo is not None and hi is not None:
                    text += f" [{_fmt(lo)}, {_fmt(hi)}]"
            cells.append(text)
        out.append(cells)
    return [columns[i] for i in keep], out


def _md(text: str) -> str:
    """Text safe inside a Markdown table cell or paragraph (pipes, backticks, angle brackets, newlines)."""
    return (str(text).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`").replace("<", "&lt;")
            .replace(">", "&gt;").replace("\n", " "))


def provenance_lines(run: dict) -> list[str]:
    """Provenance as plain lines (package versions, lock hash, the user's own git commit if any)."""
    lines = [f"created {run['created']} · finished {run.get('finished') or '–'} · seed(s) "
             f"{', '.join(map(str, run.get('seeds') or [run['seed']]))} · device {run['device']}",
             "versions: " + ", ".join(f"{k} {v}" for k, v in run["versions"].items() if v),
             f"uv.lock sha256: {run.get('uv_lock_sha256') or 'not found'}"]
    ug = run.get("user_git")
    if ug:
        lines.append(f"your git repository {ug['repository']} at commit {ug['commit']}"
                     + (" (with uncommitted changes)" if ug.get("dirty") else ""))
    else:
        lines.append("your git commit: none recorded (the run was not started inside a git repository)")
    if run.get("git"):
        lines.append(f"git: {run['git']}")
    lines.append(f"command: {run['command']}")
    return lines


def render_markdown(report: dict) -> str:
    run = report["run"]
    out = [f"# robustsuite report `{run['id']}`", ""] + [f"- {_md(line)}" for line in provenance_lines(run)] + [""]
    out += ["## Units", "", "| unit | method | model | dataset | seed | status | seconds | error |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    out += [f"| {_md(u['id'])} | {_md(u['method'])} | {_md(u['model'])} | {_md(u['dataset'])} | "
            f"{u.get('seed', '–')} | {u['status']} | {_fmt(u.get('seconds'))} | {_md(u.get('error') or '')} |"
            for u in report["units"]]
    out.append("")
    for key, sec in report["sections"].items():
        out += [f"## {_md(sec['title'])}", "", f"*section {_md(key)}; model {_md(sec.get('model'))}, dataset "
                f"{_md(sec.get('dataset'))}*", "", _md(sec["summary"]), ""]
        if sec["metrics"]:
            out += ["| metric | value |", "| --- | --- |"]
            out += [f"| {_md(k)} | {text} |" for k, text in metric_rows(sec["metrics"])]
            out.append("")
        for t in sec["tables"]:
            cols, rows = table_cells(t["columns"], t["rows"])
            out += [f"**{_md(t['title'])}**", "", "| " + " | ".join(_md(c) for c in cols) + " |", "|" + " --- |" * len(cols)]
            out += ["| " + " | ".join(_md(v) for v in row) + " |" for row in rows]
            out.append("")
        for f in sec["figures"]:
            out += [f"![{_md(f['caption'])}]({f['path']})", "", f"*{_md(f['caption'])}*", ""]
        out += [f"> {_md(n)}" for n in sec["notes"]]
        if sec.get("samples"):
            out += ["", "Per-sample records: " + ", ".join(f"`{p}`" for p in sec["samples"])]
        out.append("")
    return "\n".join(out)


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}figure{margin:1em 0}
img{max-width:100%;border:1px solid #ddd}.meta{color:#666;font-size:.9em}.note{background:#fff8e1;padding:.4em .8em}
section{border-top:2px solid #444;margin-top:2em}.failed{background:#fde8e8}td.err{text-align:left;font-family:monospace}"""


def render_html(report: dict, run_dir: Path) -> str:
    """Self-contained HTML: figures are read from ``run_dir`` and embedded as data URIs."""
    e = html.escape
    run = report["run"]
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>robustsuite {e(run['id'])}</title>",
             f"<style>{_CSS}</style></head><body><h1>robustsuite report <code>{e(run['id'])}</code></h1>",
             "<p class='meta'>" + "<br>".join(e(line) for line in provenance_lines(run)) + "</p>",
             "<h2>Units</h2><table><tr><th>unit</th><th>method</th><th>model</th><th>dataset</th><th>seed</th>"
             "<th>status</th><th>seconds</th><th>error</th></tr>"]
    for u in report["units"]:
        cls = " class='failed'" if u["status"] != "done" else ""
        parts.append(f"<tr{cls}><td>{e(u['id'])}</td><td>{e(u['method'])}</td><td>{e(u['model'])}</td>"
                     f"<td>{e(u['dataset'])}</td><td>{e(str(u.get('seed', '–')))}</td><td>{e(u['status'])}</td>"
                     f"<td>{e(_fmt(u.get('seconds')))}</td><td class='err'>{e(u.get('error') or '')}</td></tr>")
    parts.append("</table>")
    for key, sec in report["sections"].items():
        parts.append(f"<section id='{e(key)}'><h2>{e(sec['title'])}</h2><p class='meta'>model "
                     f"<code>{e(str(sec.get('model')))}</code> · dataset <code>{e(str(sec.get('dataset')))}</code></p>"
                     f"<p>{e(sec['summary'])}</p>")
        if sec["metrics"]:
            parts.append("<table><tr><th>metric</th><th>value</th></tr>" + "".join(
                f"<tr><td>{e(k)}</td><td>{e(text)}</td></tr>" for k, text in metric_rows(sec["metrics"])) + "</table>")
        for t in sec["tables"]:
            cols, rows = table_cells(t["columns"], t["rows"])
            parts.append(f"<h3>{e(t['title'])}</h3><table><tr>" + "".join(f"<th>{e(c)}</th>" for c in cols)
                         + "</tr>" + "".join("<tr>" + "".join(f"<td>{e(v)}</td>" for v in row) + "</tr>"
                                             for row in rows) + "</table>")
        for f in sec["figures"]:
            png = Path(run_dir) / f["path"]
            src = ("data:image/png;base64," + base64.b64encode(png.read_bytes()).decode()) if png.is_file() else ""
            parts.append(f"<figure><img alt='{e(f['caption'])}' src='{src}'><figcaption>{e(f['caption'])}"
                         "</figcaption></figure>")
        parts += [f"<p class='note'>{e(n)}</p>" for n in sec["notes"]]
        if sec.get("samples"):
            parts.append("<p class='meta'>per-sample records: " + ", ".join(f"<code>{e(p)}</code>" for p in sec["samples"])
                         + "</p>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(run_dir: Path, report: dict) -> dict[str, Path]:
    """Validate ``report`` and write report.json, report.md and report.html atomically into ``run_dir``."""
    validate(report)
    run_dir = Path(run_dir)
    paths = {"json": run_dir / "report.json", "md": run_dir / "report.md", "html": run_dir / "report.html"}
    write_json(paths["json"], report)
    write_text(paths["md"], render_markdown(report))
    write_text(paths["html"], render_html(report, run_dir))
    return paths


def rerender(run_dir: Path) -> dict[str, Path]:
    """Re-render Markdown and HTML from an existing ``report.json`` (after validating it)."""
    report = json.loads((Path(run_dir) / "report.json").read_text(encoding="utf-8"))
    return write_report(run_dir, report)
