"""The ``paper_effects`` table of the certcal experiment: the paper's headline effects (``paper_effects.json``)
measured from the result's own metrics, with the verdict of the one shared rule
(:func:`robustsuite_common.effects.effect_verdict`)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from robustsuite_common.effects import (
    Effect,
    Measurement,
    difference,
    find_metric,
    from_metric,
    package_effects,
    paper_effects_table,
)
from robustsuite_common.experiment import Metric, Table

__all__ = ["paper_effects", "measure_effects", "effects_spec"]


def effects_spec() -> tuple[Effect, ...]:
    """The paper's headline effects, as ``paper_effects.json`` lists them."""
    return package_effects("certcal.experiment")


def _strongest(metrics: Mapping[str, Metric], pattern: str) -> Metric | None:
    """The metric matching ``pattern`` with the largest value (the strongest attack / the largest σ's growth)."""
    rx = re.compile(pattern)
    found = [m for k, m in metrics.items() if rx.fullmatch(k) and isinstance(m.value, int | float)
             and m.interval is not None]
    return max(found, key=lambda m: float(m.value)) if found else None  # type: ignore[arg-type]


def measure_effects(metrics: Mapping[str, Metric]) -> dict[str, Measurement]:
    """``(measured, low, high)`` of each effect from the result's metrics (``None``: that part was not run). The
    radius growth is the first σ's (the run's order); the ACT comparison is at r = 0.5, with the paired bootstrap
    interval of the difference where the run computed it (``act.paired``), else the conservative interval of two
    unpaired ones."""
    paired = metrics.get("act_acce_act_minus_smoothadv_r_0p5_cce_diff")
    act = (from_metric(paired) if paired is not None and paired.interval is not None else
           difference(from_metric(metrics.get("act_acce_act_r_0p5_cce_exact")),
                      from_metric(metrics.get("act_smoothadv_r_0p5_cce_exact"))))
    return {
        "beta_ace_raises_ece": from_metric(_strongest(metrics, r"ace_.+_linf_ece_increase")),
        "cbs_grows_with_radius": from_metric(find_metric(metrics, r"fixed_sigma_.+_cbs_increase")),
        "cce_grows_with_radius": from_metric(find_metric(metrics, r"fixed_sigma_.+_cce_increase")),
        "acce_act_lowers_cce": act,
    }


def paper_effects(metrics: Mapping[str, Metric]) -> Table:
    """The ``paper_effects`` table built from ``metrics`` (a finished result's)."""
    return paper_effects_table(effects_spec(), measure_effects(metrics))
