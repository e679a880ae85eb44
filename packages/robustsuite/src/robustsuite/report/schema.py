"""Report schema 2.0: the JSON Schema of ``report.json`` and the section a runner returns.

A section's metrics are structured (``robustsuite_common.experiment.Metric.to_dict()``): ``{"value", "label",
"unit", "interval": {"estimate", "low", "high", "level", "method", "bounds"}, "note"}``. A section also carries
``warnings`` (first in JSON, Markdown and HTML), ``model_at_chance`` and ``deterministic``; tables carry
``units`` and ``bounds``. Schema 1.x sections (flat metrics, ``NAME_ci_low``/``NAME_ci_high`` beside
``NAME``) are folded into this shape by :func:`metrics_from_flat` (legacy runners) and
:func:`robustsuite.report.migrate` (old ``report.json`` files).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA_VERSION = "2.0"  # 2.0: structured metrics, warnings, model_at_chance, deterministic, table units/bounds
Scalar = str | int | float | bool | None
CI_LOW, CI_HIGH = "_ci_low", "_ci_high"

_SCALAR = {"type": ["string", "number", "integer", "boolean", "null"]}
_STR_LIST = {"type": "array", "items": {"type": "string"}}
_BOUND = {"type": ["number", "null"]}
_INTERVAL = {
    "type": "object", "additionalProperties": False,
    "required": ["estimate", "low", "high", "level", "method", "bounds"],
    "properties": {"estimate": {"type": "number"}, "low": {"type": "number"}, "high": {"type": "number"},
                   "level": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                   "method": {"type": "string"},
                   "bounds": {"type": "array", "items": _BOUND, "minItems": 2, "maxItems": 2}},
}
_METRIC = {
    "type": "object", "additionalProperties": False, "required": ["value", "label", "unit"],
    "properties": {"value": _SCALAR, "label": {"type": "string"}, "unit": {"type": "string"},
                   "interval": _INTERVAL, "note": {"type": "string"}},
}
_TABLE = {
    "type": "object", "required": ["name", "title", "columns", "rows", "units", "bounds"],
    "properties": {
        "name": {"type": "string", "pattern": "^[A-Za-z0-9_.-]+$"}, "title": {"type": "string"}, "columns": _STR_LIST,
        "rows": {"type": "array", "items": {"type": "array", "items": _SCALAR}},
        "units": {"type": "object", "additionalProperties": {"type": "string"}},
        "bounds": {"type": "object", "additionalProperties": {"type": "array", "items": _BOUND, "minItems": 2,
                                                               "maxItems": 2}},
    },
}
_SECTION = {
    "type": "object",
    "required": ["warnings", "model_at_chance", "deterministic", "title", "summary", "metrics", "tables", "figures",
                 "notes"],
    "properties": {
        "warnings": _STR_LIST, "model_at_chance": {"type": "boolean"}, "deterministic": {"type": "boolean"},
        "title": {"type": "string"}, "summary": {"type": "string"}, "paper": {"type": ["string", "null"]},
        "model": {"type": ["string", "null"]}, "dataset": {"type": ["string", "null"]},
        "data_identity": {"type": ["string", "null"]}, "method": {"type": "string"},
        "seeds": {"type": "array", "items": {"type": "integer"}}, "samples": _STR_LIST,
        "seconds": {"type": ["number", "null"]},
        "metrics": {"type": "object", "propertyNames": {"pattern": "^[A-Za-z0-9_.:-]+$"},
                    "additionalProperties": _METRIC},
        "tables": {"type": "array", "items": _TABLE},
        "figures": {"type": "array", "items": {
            "type": "object", "required": ["name", "path", "caption"],
            "properties": {"name": {"type": "string"}, "path": {"type": "string"}, "caption": {"type": "string"}}}},
        "notes": _STR_LIST,
    },
}
REPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "robustsuite report",
    "type": "object",
    "required": ["schema_version", "warnings", "run", "units", "sections"],
    "additionalProperties": False,
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "warnings": {"type": "array", "items": {"type": "object", "required": ["section", "message"],
                                                "properties": {"section": {"type": "string"},
                                                               "message": {"type": "string"}}}},
        "run": {
            "type": "object",
            "required": ["id", "created", "seed", "device", "config", "versions", "command"],
            "properties": {
                "id": {"type": "string"}, "created": {"type": "string"}, "finished": {"type": ["string", "null"]},
                "seed": {"type": "integer"}, "device": {"type": "string"}, "config": {"type": "object"},
                "versions": {"type": "object", "additionalProperties": {"type": ["string", "null"]}},
                "git": {"type": ["string", "null"]}, "seeds": {"type": "array", "items": {"type": "integer"}},
                "uv_lock_sha256": {"type": ["string", "null"]},
                "user_git": {"type": ["object", "null"],
                             "properties": {"commit": {"type": "string"}, "repository": {"type": "string"},
                                            "dirty": {"type": "boolean"}}},
                "command": {"type": "string"}, "platform": {"type": "string"},
                "migrated_from": {"type": "string"},
            },
        },
        "units": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["id", "method", "model", "dataset", "status"],
                "properties": {
                    "id": {"type": "string"}, "method": {"type": "string"}, "model": {"type": "string"},
                    "dataset": {"type": "string"}, "status": {"enum": ["done", "failed", "pending"]},
                    "seconds": {"type": ["number", "null"]}, "error": {"type": ["string", "null"]},
                    "seed": {"type": "integer"}, "samples": _STR_LIST, "deterministic": {"type": "boolean"},
                },
            },
        },
        "sections": {"type": "object", "additionalProperties": _SECTION},
    },
}


def clean(value: Any) -> Scalar:
    """A JSON-safe scalar: numpy/torch numbers become Python numbers, NaN/inf become None."""
    if hasattr(value, "item") and callable(value.item) and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, str | bool | int | float):
        return value
    raise TypeError(f"report values must be scalars (str, number, bool, None), got {type(value).__name__}")


def is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def interval_dict(estimate: float, low: float, high: float, *, level: float = 0.95, method: str = "",
                  bounds: tuple[float | None, float | None] | list = (None, None)) -> dict[str, Any]:
    """A 2.0 interval, not checked here (a migrated report keeps what it said; :func:`check_report` judges)."""
    return {"estimate": float(estimate), "low": float(low), "high": float(high), "level": float(level),
            "method": method, "bounds": [None if b is None else float(b) for b in bounds]}


def metrics_from_flat(flat: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Schema-1.x metrics (``NAME`` with ``NAME_ci_low``/``NAME_ci_high``) as 2.0 metrics. The 1.x intervals
    were 95 % intervals of unrecorded method and range (``method`` and ``bounds`` stay empty)."""
    out: dict[str, dict[str, Any]] = {}
    for k, v in flat.items():
        if k.endswith((CI_LOW, CI_HIGH)) and k.rsplit("_ci_", 1)[0] in flat:
            continue
        m: dict[str, Any] = {"value": clean(v), "label": "", "unit": ""}
        lo, hi = clean(flat.get(k + CI_LOW)), clean(flat.get(k + CI_HIGH))
        if is_number(m["value"]) and is_number(lo) and is_number(hi):
            m["interval"] = interval_dict(m["value"], lo, hi)
        out[str(k)] = m
    return out


def metric_dict(key: str, m: Any) -> dict[str, Any]:
    """One 2.0 metric from a ``robustsuite_common`` ``Metric``, a 2.0 dict or a bare scalar."""
    if hasattr(m, "to_dict") and hasattr(m, "label"):
        d = m.to_dict()
    elif isinstance(m, dict):
        if "value" not in m:
            raise TypeError(f"metric {key!r}: a dict metric needs 'value' (and 'label', 'unit', optional "
                            f"'interval', 'note'), got keys {sorted(m)}")
        d = {"value": m["value"], "label": str(m.get("label", "")), "unit": str(m.get("unit", ""))}
        if m.get("interval") is not None:
            d["interval"] = dict(m["interval"])
        if m.get("note"):
            d["note"] = str(m["note"])
    else:
        return {"value": clean(m), "label": "", "unit": ""}
    d["value"] = clean(d["value"])
    return d


def normalise_metrics(metrics: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """2.0 metrics from a mapping that may mix ``Metric`` objects, 2.0 dicts and legacy flat scalars."""
    flat = {k: v for k, v in metrics.items() if not isinstance(v, dict) and not hasattr(v, "to_dict")}
    folded = metrics_from_flat(flat)
    out = {}
    for k, v in metrics.items():
        if k in flat:
            if k in folded:
                out[str(k)] = folded[k]
        else:
            out[str(k)] = metric_dict(k, v)
    return out


@dataclass(frozen=True)
class Table:
    """A report table; ``units`` maps a column to its unit, ``bounds`` a column to its range ``(lo, hi)``
    (columns ``X_ci_low``/``X_ci_high`` beside ``X`` hold X's interval). Lists, as the flat-``DEFAULTS`` runners
    build them; an experiment's ``robustsuite_common.experiment.Table`` (tuples, intervals checked on construction)
    becomes one with :meth:`of`. Once every runner is declarative this class can be that one."""

    name: str
    title: str
    columns: list[str]
    rows: list[list[Scalar]]
    units: dict[str, str] = field(default_factory=dict)
    bounds: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"table {self.name!r}: row {i} has {len(row)} cells for {len(self.columns)} columns")

    def to_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "columns": [str(c) for c in self.columns],
                "rows": [[clean(v) for v in row] for row in self.rows], "units": dict(self.units),
                "bounds": {k: [None if b is None else float(b) for b in v] for k, v in self.bounds.items()}}

    @classmethod
    def of(cls, t: Any) -> Table:
        """A report table from a ``robustsuite_common.experiment.Table`` (or anything with its fields)."""
        return cls(t.name, t.title, list(t.columns), [list(r) for r in t.rows], dict(getattr(t, "units", {})),
                   {k: tuple(v) for k, v in getattr(t, "bounds", {}).items()})


@dataclass(frozen=True)
class Figure:
    name: str
    path: str  # relative to the run directory
    caption: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Section:
    """One method's part of the report (what a runner returns).

    ``metrics`` maps identifiers to ``robustsuite_common.experiment.Metric`` objects (or their dicts); bare
    scalars are accepted from legacy runners (``NAME_ci_low``/``NAME_ci_high`` folded into NAME's interval).
    ``warnings`` are shown before everything else; ``model_at_chance`` marks a model whose clean score's
    interval contains the chance rate (a warning must say so: :func:`robustsuite.report.check_report`).
    """

    title: str
    summary: str
    metrics: dict[str, Any] = field(default_factory=dict)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    model_at_chance: bool = False

    def to_dict(self) -> dict:
        metrics = normalise_metrics(self.metrics)
        flag = bool(self.model_at_chance) or metrics.get("model_at_chance", {}).get("value") is True
        return {"warnings": [str(w) for w in self.warnings], "model_at_chance": flag, "title": self.title,
                "summary": self.summary, "metrics": metrics,
                "tables": [(t if isinstance(t, Table) else Table.of(t)).to_dict() for t in self.tables],
                "figures": [f.to_dict() for f in self.figures], "notes": [str(n) for n in self.notes]}


def validate(report: dict) -> None:
    """Raise ``jsonschema.ValidationError`` if ``report`` does not follow :data:`REPORT_SCHEMA`."""
    import jsonschema

    jsonschema.validate(report, REPORT_SCHEMA)
