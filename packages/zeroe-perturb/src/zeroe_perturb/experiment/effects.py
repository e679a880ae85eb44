"""The ``paper_effects`` table of the zeroe-perturb experiment: the paper's headline effects
(``paper_effects.json``) measured from the result's own metrics, with the verdict of the one shared rule
(:func:`robustsuite_common.effects.effect_verdict`); and ``ranking_tc``, the high-level ranking on the multi-label
task (AUROC, the paper's TC column) beside the single-label accuracy ranking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

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
    """``defense_one_one_minus_loo``: Δ (Eq. 2) of the 1-1 (α, α) model (trained and tested on the same attacker)
    minus Δ of the leave-one-out model that never saw that attacker, paired over the attacked cells (tested
    attacker, p > 0) both defenses measured, with a paired bootstrap over those cells; absent without the
    ``defense`` table (``defense.enabled`` off) or without cells both defenses share."""
    from robustsuite_common.intervals import paired_difference

    t = tables.get("defense")
    if t is None:
        return {}
    diag: dict[tuple[str, float], float] = {}
    loo: dict[tuple[str, float], float] = {}
    for r in t.records():
        if r["p"] is None or float(r["p"]) <= 0 or r["Δ"] is None:
            continue
        cell = (str(r["tested on"]), float(r["p"]))
        if r["defense"] == "1-1" and r["trained on"] == r["tested on"]:
            diag[cell] = float(r["Δ"])
        elif r["defense"] == "LOO":
            loo[cell] = float(r["Δ"])
    shared = sorted(set(diag) & set(loo))
    if len(shared) < 2:
        return {}
    iv = paired_difference([diag[c] for c in shared], [loo[c] for c in shared], seed=seed, bounds=(-2.0, 2.0))
    return {"defense_one_one_minus_loo": Metric.of(
        iv, f"mean Δ of 1-1 (α, α) − leave-one-out over the {len(shared)} attacked cells both measured (paired "
            "bootstrap over the cells)", "s(p)/s(0)")}


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
