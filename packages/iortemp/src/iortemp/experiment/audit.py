"""The audit's part of the experiment: the ``temperature-illusion`` check on the vision model
(:func:`iortemp.audit.temperature_illusion_check`), and the result of the ``audit`` preset (the check alone)."""

from __future__ import annotations

import functools
from typing import Any

from robustsuite_common.config import to_dict
from robustsuite_common.experiment import Metric
from robustsuite_common.intervals import Interval
from robustsuite_common.verdict import Check, checks_table

from ..audit import temperature_illusion_check

__all__ = ["audit_checks", "audit_result"]

#: the ``audit_checks`` table of this experiment
audit_table = functools.partial(checks_table, title="Audit checks (status before the p-values of all checks are "
                                "adjusted together)")


def audit_checks(models: Any, data: Any, cfg: Any) -> tuple[Check, ...]:
    """The audit's checks of ``models.vision`` on the first ``cfg.audit.n`` images of ``data.vision_test``."""
    a = cfg.audit
    split = data.vision_test.head(a.n)
    check = temperature_illusion_check(models.vision, split.x, split.y, eps=a.eps, norm=a.norm, steps=a.steps,
                                       max_evaluations=a.max_evaluations, threshold=cfg.threshold,
                                       confidence_limit=a.confidence_limit, seed=cfg.seed,
                                       evidence="iortemp: tables.audit_checks")
    return (check,)




def audit_result(result_type: type, models: Any, data: Any, cfg: Any) -> Any:
    """The ``audit`` preset's result: the check alone (no text or vision tables)."""
    checks = audit_checks(models, data, cfg)
    metrics: dict[str, Metric] = {}
    c = checks[0]
    if c.statistic is not None and c.interval is not None:
        iv = Interval(c.statistic, c.interval[0], c.interval[1], method="paired bootstrap over images",
                      bounds=(-1.0, 1.0))
        metrics["temperature_illusion_drop"] = Metric.of(
            iv, "robust accuracy, plain PGD minus PGD at the adversary's best temperature (same images)", "fraction")
    if c.p_value is not None:
        metrics["temperature_illusion_p"] = Metric(c.p_value, "McNemar one-sided p (raw), plain vs best temperature",
                                                   "p-value")
    summary = (f"temperature-illusion ({cfg.audit.norm} ε = {cfg.audit.eps:g}, {c.n} images): {c.status}"
               + (f" before adjustment; p = {c.p_value:.3g} would make it {c.status_if_significant}"
                  if c.p_value is not None else "") + f". {c.detail}.")
    return result_type("iortemp", to_dict(cfg), {"audit_checks": audit_table(checks)}, metrics, summary,
                       checks=checks)
