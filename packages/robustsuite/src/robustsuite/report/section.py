"""A report section (schema 2.0) from an experiment's ``Result`` (the one place that knows both shapes).

What a package's ``Result`` provides and where it lands in the section:

- ``metrics`` (``Metric``: value, label, unit, interval with method and bounds, note) -> ``metrics`` as they are;
- ``tables`` (with ``units``/``bounds``) -> ``tables``; a table named ``headline`` (columns ``condition``,
  ``clean``/``_ci_low``/``_ci_high``, ``attacked``/``_ci_low``/``_ci_high``) is drawn first as a bar chart;
- ``warnings`` -> the section's ``warnings`` (shown first); a ``model_at_chance`` metric (bool) or attribute
  -> the section's ``model_at_chance`` flag;
- ``checks`` (``robustsuite_common.verdict.Check``) -> the section's ``checks``, gathered per model into the
  report's ``verdicts`` (:mod:`robustsuite.report.verdicts`);
- ``records`` -> per-sample files (``--log-samples``); ``figures(result)`` -> saved figures; ``notes``, ``summary``,
  and ``title`` (an attribute, when the result has one).
"""

from __future__ import annotations


def model_at_chance(result) -> bool:
    """The result's at-chance flag: its ``model_at_chance`` attribute, else its ``model_at_chance`` metric."""
    flag = getattr(result, "model_at_chance", None)
    if flag is None and "model_at_chance" in result.metrics:
        flag = result.metrics["model_at_chance"].value
    return bool(flag)


def section_from_result(ctx, result, figures=None, title: str = ""):
    """The report :class:`~robustsuite.report.Section` of ``result``; records and figures are written through
    ``ctx`` (``ctx.log_samples``, ``ctx.figure``); ``title`` when the result has none."""
    from ..report import Section

    for name, rows in result.records.items():
        if rows:
            ctx.log_samples(list(rows), name=name)
    figs = [ctx.figure(f.figure, f.name, f.caption) for f in (figures(result) if figures is not None else [])]
    return Section(title=str(getattr(result, "title", "") or title), summary=result.summary,
                   metrics=dict(result.metrics), tables=list(result.tables.values()),
                   figures=figs, notes=list(result.notes), warnings=list(result.warnings),
                   model_at_chance=model_at_chance(result), checks=list(getattr(result, "checks", ())))
