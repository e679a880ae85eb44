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

SCHEMA_VERSION = "1.0"
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


def _fmt(v: Scalar) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def render_markdown(report: dict) -> str:
    run = report["run"]
    out = [f"# robustsuite report `{run['id']}`", "",
           f"- created: {run['created']}  finished: {run.get('finished') or '–'}",
           f"- seed: {run['seed']}  device: {run['device']}  git: {run.get('git') or '–'}",
           "- versions: " + ", ".join(f"{k} {v}" for k, v in run["versions"].items()), ""]
    failed = [u for u in report["units"] if u["status"] != "done"]
    if failed:
        out += ["## Units not finished", ""] + [f"- `{u['id']}`: {u['status']} {u.get('error') or ''}" for u in failed]
        out.append("")
    for key, sec in report["sections"].items():
        out += [f"## {sec['title']}", "", f"*section `{key}`; model `{sec.get('model')}`, dataset "
                f"`{sec.get('dataset')}`*", "", sec["summary"], ""]
        if sec["metrics"]:
            out += ["| metric | value |", "| --- | --- |"]
            out += [f"| {k} | {_fmt(v)} |" for k, v in sec["metrics"].items()]
            out.append("")
        for t in sec["tables"]:
            out += [f"**{t['title']}**", "", "| " + " | ".join(t["columns"]) + " |",
                    "|" + " --- |" * len(t["columns"])]
            out += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in t["rows"]]
            out.append("")
        for f in sec["figures"]:
            out += [f"![{f['caption']}]({f['path']})", "", f"*{f['caption']}*", ""]
        out += [f"> {n}" for n in sec["notes"]]
        out.append("")
    return "\n".join(out)


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}figure{margin:1em 0}
img{max-width:100%;border:1px solid #ddd}.meta{color:#666;font-size:.9em}.note{background:#fff8e1;padding:.4em .8em}
section{border-top:2px solid #444;margin-top:2em}"""


def render_html(report: dict, run_dir: Path) -> str:
    """Self-contained HTML: figures are read from ``run_dir`` and embedded as data URIs."""
    e = html.escape
    run = report["run"]
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>robustsuite {e(run['id'])}</title>",
             f"<style>{_CSS}</style></head><body><h1>robustsuite report <code>{e(run['id'])}</code></h1>",
             f"<p class='meta'>created {e(run['created'])} · seed {run['seed']} · device {e(run['device'])} · git "
             f"{e(str(run.get('git') or '–'))}<br>" + e(", ".join(f"{k} {v}" for k, v in run["versions"].items()))
             + "</p>"]
    for key, sec in report["sections"].items():
        parts.append(f"<section id='{e(key)}'><h2>{e(sec['title'])}</h2><p class='meta'>model "
                     f"<code>{e(str(sec.get('model')))}</code> · dataset <code>{e(str(sec.get('dataset')))}</code></p>"
                     f"<p>{e(sec['summary'])}</p>")
        if sec["metrics"]:
            parts.append("<table><tr><th>metric</th><th>value</th></tr>" + "".join(
                f"<tr><td>{e(k)}</td><td>{e(_fmt(v))}</td></tr>" for k, v in sec["metrics"].items()) + "</table>")
        for t in sec["tables"]:
            parts.append(f"<h3>{e(t['title'])}</h3><table><tr>" + "".join(f"<th>{e(c)}</th>" for c in t["columns"])
                         + "</tr>" + "".join("<tr>" + "".join(f"<td>{e(_fmt(v))}</td>" for v in row) + "</tr>"
                                             for row in t["rows"]) + "</table>")
        for f in sec["figures"]:
            png = Path(run_dir) / f["path"]
            src = ("data:image/png;base64," + base64.b64encode(png.read_bytes()).decode()) if png.is_file() else ""
            parts.append(f"<figure><img alt='{e(f['caption'])}' src='{src}'><figcaption>{e(f['caption'])}"
                         "</figcaption></figure>")
        parts += [f"<p class='note'>{e(n)}</p>" for n in sec["notes"]]
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
