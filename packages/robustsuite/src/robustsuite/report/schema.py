"""Report schema 2.0: the JSON Schema of ``report.json`` (``schema.json``), the section a runner returns, and
reading schema 1.x.

Metrics are structured (``robustsuite_common.experiment.Metric.to_dict()``); schema 1.x flat metrics
(``NAME_ci_low``/``NAME_ci_high`` beside ``NAME``) are folded into that shape by :func:`metrics_from_flat`.
:func:`migrate` is what ``robustsuite report`` and ``collect`` call on a run directory written before 2.0; a
version it does not know raises :class:`ReportVersionError` (a ``ConfigError``: no traceback) naming the version
that wrote it and what to run instead.
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

from robustsuite_common.experiment import Table, json_safe

from ..errors import ConfigError
from .check import CI_HIGH, CI_LOW, top_warnings

SCHEMA_VERSION = "2.1"  # 2.1: verdicts per model, checks per section; 2.0: structured metrics, warnings,
# model_at_chance, deterministic, table units/bounds
READS = ("1.0", "1.1", "2.0", SCHEMA_VERSION)
Scalar = str | int | float | bool | None


#: The JSON Schema of ``report.json`` (``schema.json`` beside this module: any JSON Schema validator can check a
#: report with it); its ``schema_version`` constant is :data:`SCHEMA_VERSION`.
REPORT_SCHEMA: dict[str, Any] = json.loads((Path(__file__).parent / "schema.json").read_text(encoding="utf-8"))


def clean(value: Any) -> Scalar:
    """A JSON-safe scalar: numpy/torch numbers become Python numbers, NaN/inf become None."""
    try:
        return json_safe(value)
    except TypeError:
        raise TypeError(f"report values must be scalars (str, number, bool, None), got {type(value).__name__}") \
            from None


def is_number(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def metrics_from_flat(flat: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Schema-1.x metrics (``NAME`` with ``NAME_ci_low``/``NAME_ci_high``) as 2.0 metrics. The 1.x intervals
    were 95 % intervals of unrecorded method and range (``method`` and ``bounds`` stay empty); they are carried
    over unchecked (a migrated report keeps what it said; :func:`check_report` judges)."""
    out: dict[str, dict[str, Any]] = {}
    for k, v in flat.items():
        if k.endswith((CI_LOW, CI_HIGH)) and k.rsplit("_ci_", 1)[0] in flat:
            continue
        m: dict[str, Any] = {"value": clean(v), "label": "", "unit": ""}
        lo, hi = clean(flat.get(k + CI_LOW)), clean(flat.get(k + CI_HIGH))
        if is_number(m["value"]) and is_number(lo) and is_number(hi):
            m["interval"] = {"estimate": float(m["value"]), "low": float(lo), "high": float(hi), "level": 0.95,
                             "method": "", "bounds": [None, None]}
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
    return {str(k): folded[k] if k in flat else metric_dict(k, v) for k, v in metrics.items()
            if k not in flat or k in folded}


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

    ``metrics`` maps identifiers to ``Metric`` objects, their dicts or legacy flat scalars; ``tables`` are experiment
    tables (``robustsuite_common.experiment.Table``, re-exported here: intervals checked as they are built).
    ``warnings`` are shown first; ``model_at_chance`` marks a model whose clean score's interval contains the chance
    rate (a warning must say so: :func:`robustsuite.report.check_report`).
    """

    title: str
    summary: str
    metrics: dict[str, Any] = field(default_factory=dict)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    model_at_chance: bool = False
    checks: list[Any] = field(default_factory=list)

    def to_dict(self) -> dict:
        metrics = normalise_metrics(self.metrics)
        flag = bool(self.model_at_chance) or metrics.get("model_at_chance", {}).get("value") is True
        return {"warnings": [str(w) for w in self.warnings], "model_at_chance": flag, "title": self.title,
                "summary": self.summary, "metrics": metrics,
                "tables": [t.to_dict() for t in self.tables],
                "figures": [f.to_dict() for f in self.figures], "notes": [str(n) for n in self.notes],
                "checks": [c.to_dict() if hasattr(c, "to_dict") else dict(c) for c in self.checks]}


class ReportVersionError(ConfigError):
    """A ``report.json`` this version cannot read (unknown or newer schema, or not a report at all)."""


def section_from_v1(sec: dict) -> dict:
    """A 1.x section as a 2.0 section (flat metrics folded, ``WARNING:`` notes moved to ``warnings``)."""
    notes = [str(n) for n in sec.get("notes", [])]
    metrics = metrics_from_flat(sec.get("metrics", {}))
    out = {"warnings": [n.removeprefix("WARNING: ") for n in notes if n.startswith("WARNING: ")],
           "model_at_chance": metrics.get("model_at_chance", {}).get("value") is True,
           "deterministic": bool(sec.get("deterministic", False))}
    out |= {k: v for k, v in sec.items() if k not in ("metrics", "tables", "notes", "warnings")}
    return out | {"metrics": metrics, "tables": [{"units": {}, "bounds": {}} | dict(t) for t in sec.get("tables", [])],
                  "notes": [n for n in notes if not n.startswith("WARNING: ")]}


def migrate(report: Any) -> dict:
    """``report`` (a parsed ``report.json``) in schema 2.0; a 2.0 report is returned unchanged.

    Intervals are carried over as they were written (an old interval that excludes its estimate stays, so
    :func:`robustsuite.report.check_report` can name it); the input is not modified.
    """
    if not isinstance(report, dict) or "schema_version" not in report:
        raise ReportVersionError("not a robustsuite report: no schema_version (expected a report.json written by "
                                 "`robustsuite run`, `demo` or `collect`)")
    version = str(report["schema_version"])
    if version == SCHEMA_VERSION:
        return report
    if version == "2.0":  # 2.1 added the verdicts and the sections' checks: a 2.0 report computed none
        old = copy.deepcopy(report)
        return {"schema_version": SCHEMA_VERSION, "warnings": old.get("warnings", []), "verdicts": [],
                "run": dict(old.get("run", {})) | {"migrated_from": version}, "units": old.get("units", []),
                "sections": {k: {"checks": [], **s} for k, s in old.get("sections", {}).items()}}
    if version not in READS:
        writer = (report.get("run") or {}).get("versions", {}).get("robustsuite")
        writer = f"robustsuite {writer}" if writer else "an unknown robustsuite version"
        raise ReportVersionError(
            f"report schema {version!r} (written by {writer}) is not one this robustsuite reads ({', '.join(READS)}): "
            "render it with the version that wrote it, or recompute the run with this one (`robustsuite run CONFIG "
            "--out DIR`; the run's config is in DIR/run.json)")
    old = copy.deepcopy(report)
    sections = {k: section_from_v1(s) for k, s in old.get("sections", {}).items()}
    return {"schema_version": SCHEMA_VERSION, "warnings": top_warnings(sections), "verdicts": [],
            "run": dict(old.get("run", {})) | {"migrated_from": version}, "units": old.get("units", []),
            "sections": sections}
