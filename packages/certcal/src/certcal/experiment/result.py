"""The experiment's :class:`Result`, and :func:`build`, from what :func:`~certcal.experiment.run.compute` computed to
the result: its tables (:mod:`.tables`), metrics (:mod:`.metrics`), per-sample records (:mod:`.records`),
warnings, notes and summary (:mod:`.prose`)."""

from __future__ import annotations

from dataclasses import dataclass

from robustsuite_common.config import to_dict
from robustsuite_common.experiment import ExperimentResult, Table, chance_rate
from robustsuite_common.verdict import Check

from ..smoothing import max_certifiable_radius
from . import prose
from .effects import paper_effects
from .metrics import metrics as metrics_of
from .records import records as records_of
from .run import Computed
from .tables import (
    ace_table,
    act_tables,
    bounds_table,
    calibration_table,
    certified_table,
    fixed_table,
    headline_table,
)

__all__ = ["Result", "TITLE", "build"]

TITLE = "Certified calibration: CBS and CCE under Gaussian smoothing, calibration attacks, ACT"


@dataclass(frozen=True)
class Result(ExperimentResult):
    """The experiment's result: an :class:`~robustsuite_common.experiment.ExperimentResult` (tables, metrics,
    records, summary, notes, warnings; ``to_dict`` / ``from_dict`` / ``save`` / ``load``) with a title and typed
    accessors; ``checks``: the audit's ``calibration-under-attack`` check when ``audit.enabled``."""

    @property
    def title(self) -> str:
        """The experiment's title (:data:`TITLE`)."""
        return TITLE

    def table(self, name: str) -> Table:
        if name not in self.tables:
            raise KeyError(f"no table {name!r}; tables: {list(self.tables)}")
        return self.tables[name]

    @property
    def model_at_chance(self) -> bool:
        """The at-chance flag (False for the audit preset, which measures no clean accuracy of its own)."""
        return bool(self.value("model_at_chance")) if "model_at_chance" in self.metrics else False


def build(c: Computed) -> Result:
    """The :class:`Result` of what the protocol computed."""
    p = c.prepared
    cfg = p.cfg
    ceilings = {s: max_certifiable_radius(sigma=s, n=cfg.certify.n, alpha=cfg.certify.alpha) for s in c.curves}
    chance = chance_rate(p.y, p.n_classes)
    ace = ace_table(c)
    tables = [headline_table(ace), certified_table(c, ceilings), fixed_table(c), bounds_table(c), ace,
              calibration_table(c)]
    if c.act is not None:
        tables += act_tables(c, c.act)
    metrics = metrics_of(c, ceilings, chance)
    tables.append(paper_effects(metrics))
    warnings = prose.warnings(c, metrics, chance)
    checks: tuple[Check, ...] = ()
    if cfg.audit.enabled:
        from .audit import audit_table, check_of_benchmark

        checks = (check_of_benchmark(c.ace, cfg),)
        tables.append(audit_table(checks))
    return Result(experiment="certcal", config=to_dict(cfg), tables={t.name: t for t in tables}, metrics=metrics,
                  summary=prose.summary(c, metrics, warnings), records=records_of(c),
                  notes=tuple(prose.notes(c, ceilings)),
                  warnings=tuple(warnings), checks=checks)
