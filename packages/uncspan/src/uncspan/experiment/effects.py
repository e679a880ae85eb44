"""The ``paper_effects`` table of the uncspan experiment: the paper's headline effects (``paper_effects.json``)
measured from the result's own metrics, with the verdict of the one shared rule
(:func:`robustsuite_common.effects.effect_verdict`)."""

from __future__ import annotations

from collections.abc import Mapping

from robustsuite_common.effects import (
    Effect,
    Measurement,
    find_metric,
    from_metric,
    package_effects,
    paper_effects_table,
)
from robustsuite_common.experiment import Metric, Table

__all__ = ["paper_effects", "measure_effects", "effects_spec"]


def effects_spec() -> tuple[Effect, ...]:
    """The paper's headline effects, as ``paper_effects.json`` lists them."""
    return package_effects("uncspan.experiment")


def _at_mus(metrics: Mapping[str, Metric]) -> Metric | None:
    """MUS of the adversarially trained model of the first declared pair (``mus_diff_<at>_minus_<std>``)."""
    key = next((k for k in metrics if k.startswith("mus_diff_") and "_minus_" in k), None)
    if key is None:
        return None
    return metrics.get(key[len("mus_diff_"):].split("_minus_")[0] + "_mus_mean")


def measure_effects(metrics: Mapping[str, Metric]) -> dict[str, Measurement]:
    """``(measured, low, high)`` of each effect from the result's metrics (``None``: that part was not run)."""
    return {
        "at_shrinks_span": from_metric(find_metric(metrics, r"mus_diff_.+_minus_.+")),
        "at_span_stays_open": from_metric(_at_mus(metrics)),
        "osr_degrades": from_metric(find_metric(metrics, r".+_open_set_auroc_change")),
        "osr_no_complete_break": from_metric(find_metric(metrics, r".+_open_set_auroc_max_eps"), shift=-0.5),
        "ood_degrades": from_metric(find_metric(metrics, r".+_ood_auroc_change")),
    }


def paper_effects(metrics: Mapping[str, Metric]) -> Table:
    """The ``paper_effects`` table built from ``metrics`` (a finished result's)."""
    return paper_effects_table(effects_spec(), measure_effects(metrics))
