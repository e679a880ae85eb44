"""A report section from an experiment's ``Result`` (the one place that knows both shapes)."""

from __future__ import annotations

from typing import Any


def section_from_result(ctx, result, figures=None):
    """A report section from an experiment's ``Result``: metrics (with their intervals as ``NAME_ci_low`` /
    ``NAME_ci_high``), tables, per-sample records (``--log-samples``), figures, warnings first, then notes."""
    from ..report import Section, Table

    metrics: dict[str, Any] = {}
    for key, m in result.metrics.items():
        metrics[key] = m.value
        if m.interval is not None:
            metrics[f"{key}_ci_low"], metrics[f"{key}_ci_high"] = m.interval.ci
    tables = [Table(t.name, t.title, list(t.columns), [list(r) for r in t.rows]) for t in result.tables.values()]
    for name, rows in result.records.items():
        if rows:
            ctx.log_samples(list(rows), name=name)
    figs = [ctx.figure(f.figure, f.name, f.caption) for f in (figures(result) if figures is not None else [])]
    notes = [f"WARNING: {w}" for w in result.warnings] + list(result.notes)
    return Section(title=str(getattr(result, "title", "") or ""), summary=result.summary, metrics=metrics,
                   tables=tables, figures=figs, notes=notes)
