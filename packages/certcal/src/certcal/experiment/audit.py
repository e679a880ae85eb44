"""The audit's part of the experiment: the ``calibration-under-attack`` check of ``models.base``
(:mod:`certcal.audit`): from the β-ACE table's own attacks when the whole experiment runs (``audit.enabled``), or
alone with the ``audit`` preset (``audit.only``: no certification, no ACT, no training data)."""

from __future__ import annotations

import functools
from typing import Any

from robustsuite_common.config import to_dict
from robustsuite_common.experiment import Metric
from robustsuite_common.intervals import Interval
from robustsuite_common.verdict import Check, checks_table

from ..attacks import ACEBenchmark
from ..audit import calibration_under_attack_check, check_from_results
from .config import Config
from .inputs import as_inputs, check_classes, check_split
from .result import Result

__all__ = ["audit_result", "check_of_benchmark"]

#: the ``audit_checks`` table of this experiment
audit_table = functools.partial(checks_table, title="Audit checks: ECE under the strongest β-ACE attack minus clean ECE "
                                "(same points)", units={"statistic": "fraction"}, bounds={"statistic": (-1.0, 1.0)})


def _budget(cfg: Config) -> tuple[str, float]:
    norm = cfg.ace.norms[0]
    return norm, float(cfg.ace.budgets()[norm])


def check_of_benchmark(ace: ACEBenchmark, cfg: Config) -> Check:
    """The check from the experiment's β-ACE attacks under its first norm (no attack is run again)."""
    norm, eps = _budget(cfg)
    results = [(row.configuration, res) for row, res in zip(ace.rows, ace.results, strict=True) if row.norm == norm]
    return check_from_results(results, eps=eps, steps=cfg.ace.steps, n_bins=cfg.calibration.n_bins,
                              n_boot=cfg.calibration.n_boot, seed=cfg.seed, evidence="certcal: tables.ace")




def audit_result(models: Any, data: Any, config: Any) -> Result:
    """The ``audit`` preset's result: the check alone on the first ``audit.n`` test images (inputs checked first)."""
    if not isinstance(config, Config):
        raise TypeError(f"config must be a certcal.experiment.Config, got {type(config).__name__}")
    models, data = as_inputs(models, data)
    x, y = check_split("data.test", data.test, config.audit.n)
    check_classes("data.test", models.base, x, y)
    norm, eps = _budget(config)
    cal = config.calibration
    c = calibration_under_attack_check(models.base, x, y, eps=eps, norm=norm, steps=config.ace.steps,
                                       configurations=config.ace.configurations, n_bins=cal.n_bins,
                                       n_boot=cal.n_boot, seed=config.seed, evidence="certcal: tables.audit_checks")
    metrics = {}
    if c.interval is not None and c.statistic is not None:
        metrics["ece_increase_under_attack"] = Metric.of(
            Interval(c.statistic, c.interval[0], c.interval[1], method="paired BCa bootstrap", bounds=(-1.0, 1.0)),
            "ECE under the strongest β-ACE attack minus clean ECE (same points)", "fraction")
    else:
        metrics["ece_increase_under_attack"] = Metric(c.statistic, "ECE under the strongest β-ACE attack minus "
                                                      "clean ECE (same points)", "fraction",
                                                      note="the BCa interval could not contain the estimate")
    summary = f"calibration-under-attack ({norm} ε = {eps:g}, {c.n} images): {c.status}. {c.detail}."
    return Result(experiment="certcal", config=to_dict(config), tables={"audit_checks": audit_table((c,))},
                  metrics=metrics, summary=summary, checks=(c,))
