"""From what :func:`~certcal.overview.run.measure` measured to the :class:`Result`: metrics (fractions, with
labels, units and intervals), the ``headline`` table when AutoAttack ran, the dataset's split sizes, one record per
input, warnings (a model at chance first), notes and a summary written from the result's own numbers."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from robustsuite_common.config import to_dict
from robustsuite_common.experiment import ExperimentResult, Table, chance_rate
from robustsuite_common.experiment import Metric as M
from robustsuite_common.intervals import Interval, at_chance, proportion

from .run import Measured

__all__ = ["Result", "TITLE", "build"]

#: the title of the overview's section (a result's own :attr:`Result.title` names the model and the data)
TITLE = "Models and data: clean accuracy, calibration and robust accuracy"


@dataclasses.dataclass(frozen=True)
class Result(ExperimentResult):
    """The overview of one model on one split: an :class:`~robustsuite_common.experiment.ExperimentResult` (tables,
    metrics, ``records["samples"]``, summary, notes, warnings; ``to_dict`` / ``from_dict`` / ``save`` / ``load``)
    with the ``model`` and ``data`` names it describes."""

    model: str = ""
    data: str = ""

    @property
    def title(self) -> str:
        """``"<model> on <data>"``."""
        return f"{self.model} on {self.data}"

    @property
    def model_at_chance(self) -> bool:
        """The clean accuracy's interval contains the chance rate."""
        return bool(self.value("model_at_chance"))

    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "model": self.model, "data": self.data}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Result:
        return dataclasses.replace(super().from_dict(d), model=d.get("model", ""), data=d.get("data", ""))


def _metrics(m: Measured, acc: Interval, chance: float, flat: bool) -> dict[str, M]:
    cfg, cal, conf, correct = m.config, m.calibration, m.confidence, m.correct
    n, n_bins = len(conf), cfg.n_bins
    wrong_conf = float(conf[~correct].mean()) if (~correct).any() else None
    metrics = {
        "accuracy": M.of(acc, f"clean accuracy ({cfg.split}, {n} samples)", "fraction"),
        "chance_rate": M(chance, "chance rate (majority class share)", "fraction"),
        "model_at_chance": M(flat, "clean accuracy's interval contains the chance rate"),
        "ece_debiased": M.of(cal.debiased, f"ECE, debiased ({n_bins} equal-width bins)", "fraction",
                             note=f"plug-in ECE minus its mean under perfect calibration ({cal.null_mean:.4g}); "
                                  "can be below 0"),
        "calibration_p_value": M(cal.p_value, "calibration test p-value (null: perfectly calibrated)", "",
                                 note=f"{cfg.n_boot} consistency resamples: labels drawn from the model's "
                                      "confidences"),
        "ece": M(cal.ece, f"ECE, plug-in ({n_bins} equal-width bins)", "fraction",
                 note="biased upward by binning noise: read the debiased ECE and the calibration test"),
        "ada_ece": M(m.adaptive_ece, f"adaptive ECE, plug-in ({n_bins} equal-mass bins)", "fraction"),
        "brier": M.of(cal.brier, "Brier score (top label)", "fraction"),
        "mean_confidence": M(float(conf.mean()), "mean top-class confidence", "fraction"),
        "mean_confidence_wrong": M(wrong_conf, "mean confidence on wrong predictions", "fraction"),
        "num_samples": M(n, "samples", "count"),
        "num_classes": M(m.n_classes, "classes", "count"),
    }
    if m.data.source:
        metrics["data_source"] = M(m.data.source, "data")
    return metrics


def _label(split, label) -> str | int:
    """The user's name of a class (the integer itself when the data names none)."""
    return split.name_of(int(label)) if split.label_names is not None else int(label)


def _records(m: Measured) -> list[dict[str, Any]]:
    split, name = m.data.split, m.config.split
    robust: list = [None] * len(split)
    if m.attacked is not None:
        robust[:m.attacked.n] = m.attacked.robust
    texts = not hasattr(split.x, "shape")
    return [{"id": split.id_of(i), "input": split.x[i] if texts else f"{name}[{i}]",
             "label": _label(split, m.labels[i]), "prediction": _label(split, m.prediction[i]),
             "confidence": float(m.confidence[i]), "correct": bool(m.correct[i]), "robust": robust[i]}
            for i in range(len(split))]


def _summary(m: Measured, acc: Interval, chance: float, warning: str, rob: Interval | None,
             attack: str | None) -> str:
    conf, cal, n = m.confidence, m.calibration, len(m.confidence)
    wrong = m.confidence[~m.correct]
    gap = float(conf.mean()) - int(m.correct.sum()) / n
    direction = "over-confident" if gap > 0 else "under-confident" if gap < 0 else "exactly calibrated on average"
    iv = cal.debiased
    text = (("The model is at chance: " + warning + " ") if warning else "") + (
        f"Clean accuracy {acc.estimate:.2%} (95 % CI {acc.low:.2%}–{acc.high:.2%}) on {n} {m.config.split} samples "
        f"(chance {chance:.2%}); mean confidence {conf.mean():.3f}"
        + (f" ({float(wrong.mean()):.3f} on wrong predictions)" if wrong.size else "")
        + f", {direction} by {abs(gap):.4f}; debiased ECE {100 * iv.estimate:.2f} % (95 % CI {100 * iv.low:.2f} to "
          f"{100 * iv.high:.2f} %; plug-in {100 * cal.ece:.2f} %), calibration test p = {cal.p_value:.3g} ("
        + ("miscalibration detected" if cal.p_value < 0.05 else "consistent with perfect calibration") + ").")
    if rob is not None and m.attacked is not None:
        text += (f" Robust accuracy under {attack}: {rob.estimate:.2%} (95 % CI {rob.low:.2%}–{rob.high:.2%}) on "
                 f"the first {m.attacked.n} images" + (", which carries no information at chance." if warning else "."))
    return text


def build(m: Measured) -> Result:
    cfg = m.config
    n, k = len(m.labels), int(m.correct.sum())
    acc = proportion(k, n)
    chance = chance_rate(m.labels, m.n_classes)
    flat = at_chance(k, n, chance)
    metrics = _metrics(m, acc, chance, flat)
    sizes = m.data.sizes or {cfg.split: n}
    tables = {"dataset": Table("dataset", "Dataset splits", ("split", "samples"), tuple(sizes.items()),
                               units={"samples": "count"})}
    notes = ([f"Data: {m.data.source}."] if m.data.source else []) + [
        f"Intervals: Clopper-Pearson for accuracy; the debiased ECE's interval is the plug-in ECE's bootstrap spread "
        f"({cfg.n_boot} resamples over the samples, seed {cfg.resample_seed}) around it; BCa bootstrap for Brier."]
    warnings = []
    if flat:
        warnings.append(f"clean accuracy {acc.estimate:.2%} [{acc.low:.2%}, {acc.high:.2%}] contains the chance rate "
                        f"{chance:.2%} (the majority class's share): this model's calibration and robustness numbers "
                        "carry no information.")
    warnings += m.warnings

    rob = attack = None
    checks = _checks(m, sizes)
    if m.attacked is not None:
        a = m.attacked
        rob, cln = proportion(sum(a.robust), a.n), proportion(sum(a.clean), a.n)
        version = a.outcome.version if a.outcome is not None else cfg.autoattack_version
        attack = f"{version} AutoAttack, {'L∞' if cfg.norm == 'Linf' else 'L2'} ε = {a.eps:g}"
        if a.probes is not None:
            tables["epsilon_sweep"] = _sweep(a.probes)
        metrics["robust_accuracy_autoattack"] = M.of(
            rob, f"robust accuracy under {attack} (first {a.n} {cfg.split} images)", "fraction", note=a.attack)
        metrics["clean_accuracy_attacked_points"] = M.of(cln, f"clean accuracy on those {a.n} images", "fraction")
        headline = Table(
            "headline", f"Clean vs {attack} accuracy of {m.models.name} (first {a.n} {cfg.split} images)",
            ("condition", "clean", "clean_ci_low", "clean_ci_high", "attacked", "attacked_ci_low", "attacked_ci_high",
             "attack", "n"),
            ((attack, cln.estimate, *cln.ci, rob.estimate, *rob.ci, a.attack, a.n),),
            units={"clean": "fraction", "attacked": "fraction", "n": "count"},
            bounds={"clean": (0.0, 1.0), "attacked": (0.0, 1.0)})
        tables = {"headline": headline, **tables}
    elif m.reason:
        notes.append(m.reason + ".")
    summary = _summary(m, acc, chance, warnings[0] if flat else "", rob, attack)
    return Result(experiment="certcal.overview", config=to_dict(cfg), tables=tables, metrics=metrics,
                  summary=summary, records={"samples": _records(m)}, notes=tuple(notes), warnings=tuple(warnings),
                  checks=tuple(checks), model=m.models.name, data=m.data.name)


def _checks(m: Measured, sizes: Mapping[str, int]) -> list:
    """The verdict's validity and attack-strength rows (:mod:`robustsuite_common.indicators`): clean accuracy above
    chance always; the rest where AutoAttack and the probes ran."""
    from robustsuite_common.indicators import attack_checks, validity_checks

    a = m.attacked
    aa = a.outcome if a is not None else None
    probes = a.probes if a is not None else None
    split_size = int(sizes.get(m.config.split) or len(m.labels))
    out = validity_checks(m.correct.tolist(), m.labels.tolist(), aa=aa, probes=probes, split_size=split_size,
                          standard_budget=m.config.autoattack_version == "standard")
    if aa is not None and probes is not None:
        out += attack_checks(aa, probes, seed=int(m.config.resample_seed), claim=m.config.claim or None)
    return out


def _sweep(p) -> Table:
    """Robust accuracy against ε (APGD-CE, the indicators' sweep and the unbounded budget), with Clopper-Pearson
    intervals: the curve a reader checks for monotonicity."""
    rows = []
    for e, flags in [*zip(p.sweep_eps, p.sweep, strict=True), (p.large_eps, p.large)]:
        iv = proportion(int(sum(flags)), len(flags))
        rows.append((float(e), iv.estimate, *iv.ci, f"APGD-CE, {p.n_iter} iterations", len(flags)))
    return Table("epsilon_sweep", f"Robust accuracy against ε ({p.norm}, APGD-CE {p.n_iter} iterations; the last "
                 "row an unbounded budget)", ("eps", "robust_accuracy", "robust_accuracy_ci_low",
                                               "robust_accuracy_ci_high", "attack", "n"), tuple(rows),
                 units={"robust_accuracy": "fraction", "n": "count"}, bounds={"robust_accuracy": (0.0, 1.0)})
