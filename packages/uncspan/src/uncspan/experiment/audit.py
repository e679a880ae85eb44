"""The audit's part of the experiment: the ``uncertainty-under-attack`` check of every ranked model
(:func:`uncspan.audit.uncertainty_under_attack_check`), and the result of the ``audit`` preset (the checks alone)."""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Any

from robustsuite_common.config import to_dict
from robustsuite_common.experiment import Metric
from robustsuite_common.intervals import Interval
from robustsuite_common.verdict import Check, checks_table

from ..audit import uncertainty_under_attack_check
from .inputs import labels
from .result import Result, slug

__all__ = ["audit_checks", "audit_result"]

#: the ``audit_checks`` table of this experiment
audit_table = functools.partial(checks_table, title="Audit checks: detection AUROC of misclassified points by entropy "
                                "under attack", bounds={"statistic": (0.0, 1.0)})


def audit_checks(models: Any, data: Any, cfg: Any) -> tuple[Check, ...]:
    """One check per ranked model on the first ``cfg.audit.n`` test points (its model named in ``evidence``)."""
    test = data.test.head(cfg.audit.n)
    y = labels(test)
    return tuple(replace(uncertainty_under_attack_check(m, test.x, y, eps=cfg.attack.eps, norm=cfg.attack.norm,
                                                        steps=cfg.audit.steps, seed=cfg.seed,
                                                        n_boot=cfg.metrics.auroc_n_boot,
                                                        batch_size=cfg.attack.batch_size,
                                                        evidence=f"uncspan: tables.audit_checks, model {name}"),
                         model=name)
                 for name, m in models.ranked.items())


def audit_result(models: Any, data: Any, cfg: Any) -> Result:
    """The ``audit`` preset's result: the checks alone, a metric ``<model>_auroc_under_attack`` per checked model."""
    checks = audit_checks(models, data, cfg)
    metrics: dict[str, Metric] = {}
    for name, c in zip(models.ranked, checks, strict=True):
        if c.statistic is not None and c.interval is not None and c.status != "not-applicable":
            iv = Interval(c.statistic, c.interval[0], c.interval[1], method="stratified bootstrap", bounds=(0.0, 1.0))
            metrics[f"{slug(name)}_auroc_under_attack"] = Metric.of(
                iv, f"detection AUROC of misclassified points by entropy under attack, {name}", "AUROC")
    summary = " ".join(f"{name}: uncertainty-under-attack {c.status} ({cfg.attack.norm} ε = {cfg.attack.eps:g}, "
                       f"{c.n} points). {c.detail}." for name, c in zip(models.ranked, checks, strict=True))
    return Result(experiment="uncspan", config=to_dict(cfg), tables={"audit_checks": audit_table(checks)},
                  metrics=metrics, summary=summary, checks=checks)
