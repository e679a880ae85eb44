"""The experiment's prose, written from the result's own numbers: warnings (a model at chance first), notes on
how each number was obtained, and the summary."""

from __future__ import annotations

import numpy as np

from robustsuite_common.experiment import Metric

from .config import paper_values
from .run import Computed, tag
from .tables import ACT_LABELS, movement, pct

__all__ = ["notes", "summary", "warnings"]


def warnings(c: Computed, metrics: dict[str, Metric], chance: float) -> list[str]:
    out = []
    if metrics["model_at_chance"].value:
        acc = metrics["base_clean_accuracy"]
        assert acc.interval is not None  # a proportion's Clopper-Pearson interval
        out.append(f"the base model's clean accuracy {acc.value:.1%} [{acc.interval.low:.1%}, {acc.interval.high:.1%}] "
                   f"is compatible with the chance rate {chance:.1%}: its β-ACE numbers carry no information")
    for sigma in c.curves:
        if metrics[f"sigma_{tag(sigma)}_at_chance"].value:
            out.append(f"the smoothed classifier at σ={sigma:g} is at chance (certified accuracy at the smallest radius "
                       f"compatible with {chance:.1%}): its certified calibration numbers carry no information")
    return out


def notes(c: Computed, ceilings: dict[float, float]) -> list[str]:
    p = c.prepared
    cfg = p.cfg
    given = [s for s, g in c.given_noise.items() if g]
    tuned = [s for s, g in c.given_noise.items() if not g]
    notes = []
    if given:
        notes.append("Smoothing base models given for σ = " + ", ".join(f"{s:g}" for s in given) + " (models.noise).")
    if tuned:
        notes.append("Smoothing base models fine-tuned here from the base model with Gaussian noise of σ = "
                     + ", ".join(f"{s:g}" for s in tuned) + f" ({cfg.noise_training.epochs} epochs, Cohen et al.'s "
                     "recipe: certcal.gaussian_noise_training).")
    e = float(np.sqrt(np.log(2.0 / cfg.certify.alpha) / (2.0 * cfg.certify.n)))
    notes += [
        "Intervals are 95 %: Clopper-Pearson for certified accuracy and accuracy, BCa bootstrap "
        f"({cfg.calibration.n_boot} resamples of the inputs, robustsuite_common) for CBS, CCE and ECE; a cell "
        "without an interval is one where the BCa interval could not contain its estimate.",
        f"Certificates use n = {cfg.certify.n} Monte-Carlo draws (paper: 100,000) at alpha = {cfg.certify.alpha}: no "
        "input can be certified beyond " + ", ".join(f"r = {v:.3g} (σ={s:g})" for s, v in ceilings.items())
        + f", and each confidence bound carries ±{e:.3f} of sampling slack (paper: "
        f"±{np.sqrt(np.log(2.0 / 0.001) / 2e5):.4f}). Confidence bounds are Kumar et al.'s "
        f"{cfg.calibration.bound.upper()} certificate; CBS and CCE are computed over the inputs certified at each "
        "radius.",
        "CCE (exact) is the exact optimum of the paper's mixed-integer program (6) (sign decomposition solved by a "
        "dynamic programme); CCE (ADMM) is the paper's ACCE solver; Brier is the ECE of the Brier-maximising "
        "confidences.",
        table1_note(),
        "The base model's calibration: the plug-in ECE is biased upwards on few inputs; the debiased ECE subtracts "
        "its expected value under perfect calibration (consistency resampling), and the calibration test's p-value "
        "says whether the confidences are distinguishable from calibrated ones.",
    ]
    comp = c.act
    if comp is not None:
        a = cfg.act
        start = ("the σ noise model fine-tuned with SmoothAdv for "
                 f"{a.start_epochs} epoch(s)" if a.start == "smoothadv" else "the σ noise model as is")
        notes.append(f"ACT rows fine-tune {start} (σ={comp.sigma:g}) for {a.epochs} epoch(s) on "
                     f"{comp.config['n_train']} train images; 'none' is that start model. The paper fine-tunes "
                     "SmoothAdv models for 10 epochs on a 16-point grid (Table 7 beside, for comparison). A method's "
                     "CBS/CCE is empty where none of its models came within the selection margin. A comparison is "
                     "labelled inconclusive, with the reason, where the CCE intervals overlap, a method has no CCE, "
                     "or the radius is beyond what the draw budget certifies.")
    return notes


def table1_note() -> str:
    t1 = paper_values()["table1"]
    rows = [r for r in t1["rows"] if r[0] == "ST"]
    parts = ", ".join(f"{r[1]} ε={r[2]}: {r[3]:g}% → up to {max(r[4:]):g}%" for r in rows)
    return (f"For scale, the paper's Table 1 (standard models, ECE clean → under the strongest β-ACE attack): "
            f"{parts}; accuracy unchanged.")


def summary(c: Computed, metrics: dict[str, Metric], warnings: list[str]) -> str:
    sigma0 = next(iter(c.curves))
    rows = c.curves[sigma0].rows
    r_mid = rows[min(2, len(rows) - 1)]
    ace = c.ace
    best = ace.worst
    text = ""
    if warnings:
        text += "Warning: " + "; ".join(warnings) + ". "
    text += (f"σ={sigma0:g}: certified accuracy {r_mid.certified_accuracy:.1%} at radius {r_mid.radius:g}, "
             f"certified Brier score {pct(r_mid.cbs)}% and certified calibration error {pct(r_mid.cce['exact'])}% "
             f"(ADMM finds {pct(r_mid.cce['admm'])}%). beta-ACE attacks move the base model's ECE from "
             f"{pct(ace.rows[-1].clean_ece)}% up to {pct(best.adv_ece)}% ({best.configuration}, {best.norm}) "
             + ("without changing a single prediction" if ace.predictions_unchanged else "but CHANGED some predictions")
             + f"; in {ace.n_increase_above_zero} of {len(ace.rows)} attacks the bootstrap interval of the ECE "
             f"increase lies above 0 and in {ace.n_attacked_above_clean} the attacked ECE's interval lies above the "
             "clean one's (in the others they overlap or the attack lowers the ECE).")
    k = c.calibration
    text += (f" The base model's clean ECE {pct(k.ece)}% is {pct(k.debiased.estimate)}% "
             f"[{pct(k.debiased.low)}, {pct(k.debiased.high)}] after removing the {pct(k.null_mean)}% a perfectly "
             f"calibrated model would show on {k.n} inputs (calibration test p = {k.p_value:.3g}).")
    for sigma, cs in c.fixed.items():
        text += (f" On the {cs.n_inputs} inputs certified at r={max(cs.radii):g} (σ={sigma:g}) CBS grows by "
                 f"{pct(cs.cbs_increase)} points and CCE by {pct(cs.cce_increase)} points from r={min(cs.radii):g} "
                 f"({'both' if cs.increase_separated else 'not both'} separated from 0 by their bootstrap "
                 "intervals).")
    comp = c.act
    v = comp.verdict() if comp is not None else None
    if comp is not None:
        text += f" ACT: the draw budget certifies at most r = {comp.max_radius:.3g}."
        moved = movement(comp)
        if moved:
            text += " Fine-tuning moved the weights by at most " + ", ".join(
                f"{mx:.2g} ({ACT_LABELS.get(m, m)})" for m, (mx, _) in moved.items()) + "."
    if v is not None and v.radius is None:
        text += f" ACT: inconclusive — {v.reason}."
    elif v is not None:
        verdict = (("ACT lowers the CCE" if v.lowers else "ACT raises the CCE") + " (intervals disjoint)"
                   if v.conclusive else f"inconclusive: {v.reason}")
        ci = v.cce_ci or (None, None)
        bci = v.baseline_cce_ci or (None, None)
        text += (f" ACT at r={v.radius:g}: {v.method} CCE {pct(v.cce)}% [{pct(ci[0])}, {pct(ci[1])}] "
                 f"vs {v.baseline} {pct(v.baseline_cce)}% [{pct(bci[0])}, {pct(bci[1])}], CA "
                 f"{pct(v.certified_accuracy)}% vs {pct(v.baseline_certified_accuracy)}%; {verdict}.")
    return text
