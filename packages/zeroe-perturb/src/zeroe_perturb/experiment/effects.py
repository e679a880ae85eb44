"""The ``paper_effects`` table of the zeroe-perturb experiment: the paper's headline effects
(``paper_effects.json``) measured from the result's own metrics, with the verdict of the one shared rule
(:func:`robustsuite_common.effects.effect_verdict`); and ``ranking_tc``, the high-level ranking on the multi-label
task (AUROC, the paper's TC column) beside the single-label accuracy ranking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from robustsuite_common.effects import (
    Effect,
    Measurement,
    from_metric,
    package_effects,
    paper_effects_table,
)
from robustsuite_common.experiment import Metric, Table

from ..ranking import _reference
from ._measure import TaskMeasure
from .config import Config
from .result import as_rows

__all__ = ["paper_effects", "measure_effects", "effects_spec", "effect_metrics", "defense_metrics", "ranking_tc"]


def effects_spec() -> tuple[Effect, ...]:
    """The paper's headline effects, as ``paper_effects.json`` lists them."""
    return package_effects("zeroe_perturb.experiment")


def _prefix(m: TaskMeasure) -> str:
    return "" if m.task.kind == "classification" else f"{m.task.key}_"


def effect_metrics(measures: Sequence[TaskMeasure], config: Config) -> dict[str, Metric]:
    """Per task in the headline: ``[<task>_]paper_most_gap`` and ``[<task>_]paper_least_gap``, the paired s*(high)
    gaps between the paper's Table 5 ends (visual, phonetic) and the nearest other attacker here."""
    h = config.attack.high
    out: dict[str, Metric] = {}
    for m in measures:
        if not m.in_headline:
            continue
        what = "" if m.task.kind == "classification" else f"{m.task.label}: "
        for end, text in (("paper_most", "s*({h}) of {nb} − s*({h}) of {a} (the paper's most harmful)"),
                          ("paper_least", "s*({h}) of {a} (the paper's least harmful) − s*({h}) of {nb}")):
            g = m.ends.get(end)
            if g is None or g.ci is None:
                continue
            out[f"{_prefix(m)}{end}_gap"] = Metric.of(
                g.ci, what + text.format(h=f"{h:g}", a=g.attack, nb=g.neighbour) + " (paired over the items)",
                "s(p) / s(0)")
    return out


def defense_metrics(tables: Mapping[str, Table], *, seed: int) -> dict[str, Metric]:
    """Table 3's ordering as two paired differences of Δ (Eq. 2) over the attacked cells (tested attacker, p > 0):
    ``defense_one_one_minus_loo``, the 1-1 (α, α) model (trained and tested on the same attacker) minus the
    leave-one-out model that never saw that attacker; ``defense_loo_minus_one_one_off``, leave-one-out minus the
    mean of the 1-1 (α, β) models trained on another attacker α ≠ β. Each with a paired bootstrap over the cells both
    defenses measured; absent without the ``defense`` table (``defense.enabled`` off) or with fewer than two such
    cells."""
    from robustsuite_common.intervals import paired_difference

    t = tables.get("defense")
    if t is None:
        return {}
    diag: dict[tuple[str, float], float] = {}
    off: dict[tuple[str, float], list[float]] = {}
    loo: dict[tuple[str, float], float] = {}
    for r in t.records():
        if r["p"] is None or float(r["p"]) <= 0 or r["Δ"] is None:
            continue
        cell = (str(r["tested on"]), float(r["p"]))
        if r["defense"] == "1-1" and r["trained on"] == r["tested on"]:
            diag[cell] = float(r["Δ"])
        elif r["defense"] == "1-1":
            off.setdefault(cell, []).append(float(r["Δ"]))
        elif r["defense"] == "LOO":
            loo[cell] = float(r["Δ"])
    out: dict[str, Metric] = {}
    pairs = (("defense_one_one_minus_loo", diag, loo, "1-1 (α, α) − leave-one-out"),
             ("defense_loo_minus_one_one_off", loo, {c: float(np.mean(v)) for c, v in off.items()},
              "leave-one-out − 1-1 (α, β) (mean over the training attackers α ≠ β)"))
    for name, a, b, what in pairs:
        shared = sorted(set(a) & set(b))
        if len(shared) < 2:
            continue
        iv = paired_difference([a[c] for c in shared], [b[c] for c in shared], seed=seed, bounds=(-2.0, 2.0))
        out[name] = Metric.of(iv, f"mean Δ of {what} over the {len(shared)} attacked cells both measured (paired "
                                  "bootstrap over the cells)", "s(p)/s(0)")
    return out


def ranking_tc(measures: Sequence[TaskMeasure], config: Config) -> Table | None:
    """The attackers' s*(high) on the multi-label task (AUROC: the paper's TC column) beside single-label accuracy,
    with Table 5's TC rank; ``None`` when the multi-label task was not measured."""
    by = {m.task.kind: m for m in measures}
    ml, main = by.get("multilabel"), by.get("classification")
    if ml is None or main is None or ml.clean == 0:
        return None
    h, ref = config.attack.high, _reference("TC")
    col = f"s*({h:g})"
    rows = []
    for k, a, c in ml.ranking():
        single = main.cells.get((a, main.high))
        ci = c.relative_ci
        rows.append([k, a, c.relative, None if ci is None else ci.low, None if ci is None else ci.high,
                     None if single is None else single.relative, ref.get(a, "-")])
    return Table("ranking_tc", f"Attackers ranked by {col} on the multi-label task (AUROC, the paper's TC column), "
                               f"beside their {col} on single-label accuracy, and Table 5's TC rank",
                 ("rank", "attack", f"{col} AUROC", f"{col} AUROC_ci_low", f"{col} AUROC_ci_high",
                  f"{col} accuracy", "paper TC rank"), as_rows(rows),
                 {f"{col} AUROC": "s(p) / s(0)", f"{col} accuracy": "s(p) / s(0)"}, {f"{col} AUROC": (0.0, None)})


def measure_effects(metrics: Mapping[str, Metric]) -> dict[str, Measurement]:
    """``(measured, low, high)`` of each effect from the result's metrics (``None``: that part was not run)."""
    return {
        "attacks_degrade": from_metric(metrics.get("mean_relative_score_high"), shift=-1.0),
        "attacks_degrade_tc": from_metric(metrics.get("multilabel_mean_relative_score_high"), shift=-1.0),
        "visual_most_harmful_tc": from_metric(metrics.get("multilabel_paper_most_gap")),
        "phonetic_least_harmful": from_metric(metrics.get("paper_least_gap")),
        "defense_ordering": from_metric(metrics.get("defense_one_one_minus_loo")),
    }


def paper_effects(metrics: Mapping[str, Metric]) -> Table:
    """The ``paper_effects`` table built from ``metrics`` (a finished result's)."""
    return paper_effects_table(effects_spec(), measure_effects(metrics))
