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

__all__ = ["paper_effects", "measure_effects", "effects_spec", "osr_model"]


def effects_spec() -> tuple[Effect, ...]:
    """The paper's headline effects, as ``paper_effects.json`` lists them."""
    return package_effects("uncspan.experiment")


def _at_mus(metrics: Mapping[str, Metric]) -> Metric | None:
    """MUS of the adversarially trained model of the first declared pair (``mus_diff_<at>_minus_<std>``)."""
    key = next((k for k in metrics if k.startswith("mus_diff_") and "_minus_" in k), None)
    if key is None:
        return None
    return metrics.get(key[len("mus_diff_"):].split("_minus_")[0] + "_mus_mean")


def osr_model(metrics: Mapping[str, Metric], *, adversarially_trained: bool) -> str | None:
    """The metric prefix (slug) of the first Table V model declared adversarially trained (``True``) or undefended
    (``False``) in ``models.adversarially_trained`` (``<slug>_osr_adversarially_trained``), else ``None``."""
    tail = "_osr_adversarially_trained"
    return next((k[: -len(tail)] for k, m in metrics.items() if k.endswith(tail) and m.value is adversarially_trained),
                None)


def _osr(metrics: Mapping[str, Metric], model: str | None, suffix: str, *, shift: float = 0.0) -> Measurement:
    return None if model is None else from_metric(metrics.get(f"{model}_{suffix}"), shift=shift)


def measure_effects(metrics: Mapping[str, Metric]) -> dict[str, Measurement]:
    """``(measured, low, high)`` of each effect from the result's metrics (``None``: that part was not run). The
    Table V rows read the open-set model declared adversarially trained (the paper's C9 is), the complete-break row
    the one declared undefended (§V-C); an undeclared open-set model is read by neither."""
    at, std = osr_model(metrics, adversarially_trained=True), osr_model(metrics, adversarially_trained=False)
    return {
        "at_shrinks_span": from_metric(find_metric(metrics, r"mus_diff_.+_minus_.+")),
        "at_span_stays_open": from_metric(_at_mus(metrics)),
        "osr_degrades": _osr(metrics, at, "open_set_auroc_change"),
        "osr_no_complete_break": _osr(metrics, at, "open_set_auroc_max_eps", shift=-0.5),
        "ood_degrades": _osr(metrics, at, "ood_auroc_change"),
        "osr_undefended_breaks": _osr(metrics, std, "open_set_auroc_max_eps", shift=-0.5),
    }


def paper_effects(metrics: Mapping[str, Metric]) -> Table:
    """The ``paper_effects`` table built from ``metrics`` (a finished result's)."""
    return paper_effects_table(effects_spec(), measure_effects(metrics))
