"""The experiment's metrics: fractions, unrounded, each with a readable label, its unit and its interval."""

from __future__ import annotations

from typing import Any

from robustsuite_common.experiment import Metric
from robustsuite_common.intervals import Interval, at_chance, proportion

from ..act import ACTComparison
from .run import Computed, tag
from .tables import ACT_LABELS, movement

__all__ = ["metrics"]

def _iv(value: float | None, ci: tuple[float, float] | None, method: str,
        bounds: tuple[float | None, float | None] = (0.0, 1.0)) -> Interval | None:
    if value is None or ci is None:
        return None
    return Interval(float(value), float(ci[0]), float(ci[1]), method=method, bounds=bounds)


BCA = "bootstrap BCa over the inputs"
PAIRED = "paired bootstrap BCa over the shared test inputs (both models on each resample)"
CP = "Clopper-Pearson"


def _metric(value: Any, label: str, unit: str = "fraction", interval: Interval | None = None,
            note: str = "") -> Metric:
    return Metric(value, label, unit, interval, note)


def metrics(c: Computed, ceilings: dict[float, float], chance: float) -> dict[str, Metric]:
    """Every metric of the result, keyed: the base model's, each σ's certified ones, the certificates' widths,
    the β-ACE attacks', ACT's, and the largest gap between the exact CCE and ADMM's."""
    m: dict[str, Metric] = {}
    _base(m, c, chance)
    for sigma in c.curves:
        _smoothed(m, c, sigma, ceilings[sigma], chance)
    for sigma, w in c.widths.items():
        for r, q in zip(w.radii, w.ratio, strict=True):
            m[f"sigma_{tag(sigma)}_r_{tag(r)}_cdf_over_standard_width"] = _metric(
                q, f"CDF / Standard certificate width (σ={sigma:g}, r={r:g})", "ratio")
    _ace(m, c)
    if c.act is not None:
        _act(m, c.act)
    gaps = [g for curve in c.curves.values() if (g := curve.solver_gap("admm", "exact")) is not None]
    m["max_exact_minus_admm"] = _metric(max(gaps) if gaps else None, "largest gap exact CCE - ADMM's ACCE")
    return m


def _base(m: dict[str, Metric], c: Computed, chance: float) -> None:
    """The base model's clean accuracy (and its at-chance flag) and calibration."""
    p = c.prepared
    n = int(p.y.shape[0])
    ace0 = c.ace.results[0]
    k_clean = int(ace0.correct.sum())
    base_at_chance = at_chance(k_clean, n, chance)
    m["model_at_chance"] = _metric(base_at_chance, "base model's clean accuracy compatible with chance", "")
    m["chance_rate"] = _metric(chance, "chance rate (majority-class share of the test inputs)")
    m["base_clean_accuracy"] = Metric.of(proportion(k_clean, n), "base model clean accuracy", "fraction")
    k = c.calibration
    m["base_ece"] = _metric(k.ece, f"base model ECE (plug-in, {p.cfg.calibration.n_bins} bins)")
    m["base_ece_debiased"] = Metric.of(k.debiased, "base model ECE, debiased (minus its value under calibration)")
    m["base_ece_expected_if_calibrated"] = _metric(k.null_mean, "ECE a perfectly calibrated model would show here")
    m["base_calibration_p_value"] = _metric(k.p_value, "calibration test p-value (small: miscalibrated)", "")
    m["base_brier"] = Metric.of(k.brier, "base model top-label Brier score")


def _smoothed(m: dict[str, Metric], c: Computed, sigma: float, ceiling: float, chance: float) -> None:
    """The smoothed classifier of ``sigma``: its at-chance flag, CA / CBS / CCE across radii and on the fixed set."""
    p = c.prepared
    n = int(p.y.shape[0])
    curve = c.curves[sigma]
    s = tag(sigma)
    m[f"sigma_{s}_max_certifiable_radius"] = _metric(ceiling, f"largest radius certifiable at σ={sigma:g} "
                                                     f"with n = {p.cfg.certify.n} draws", "L2")
    r0 = min(curve.rows, key=lambda row: row.radius)  # the smallest radius: the smoothed classifier's accuracy
    k0 = int(round(r0.certified_accuracy * n))
    m[f"sigma_{s}_at_chance"] = _metric(at_chance(k0, n, chance), f"smoothed classifier σ={sigma:g} at r="
                                        f"{r0.radius:g} compatible with chance", "")
    for r in curve.rows:
        t = f"sigma_{s}_r_{tag(r.radius)}"
        where = f"σ={sigma:g}, r={r.radius:g}"
        m[f"{t}_certified_accuracy"] = _metric(r.certified_accuracy, f"certified accuracy ({where})", "fraction",
                                               _iv(r.certified_accuracy, r.certified_accuracy_ci, CP))
        m[f"{t}_n_certified"] = _metric(r.n_certified, f"inputs certified ({where})", "count")
        m[f"{t}_cbs"] = _metric(r.cbs, f"certified Brier score ({where})", "fraction", _iv(r.cbs, r.cbs_ci, BCA))
        m[f"{t}_cce_exact"] = _metric(r.cce["exact"], f"certified calibration error, exact ({where})", "fraction",
                                      _iv(r.cce["exact"], r.cce_ci.get("exact"), BCA))
        m[f"{t}_cce_admm"] = _metric(r.cce["admm"], f"certified calibration error, ADMM ({where})")
        m[f"{t}_cce_brier"] = _metric(r.cce["brier"], f"ECE of the Brier-maximising confidences ({where})")
    cs = c.fixed.get(sigma)
    if cs is not None:
        for j, r in enumerate(cs.radii):
            t = f"fixed_sigma_{s}_r_{tag(r)}"
            where = f"σ={sigma:g}, r={r:g}, fixed set"
            m[f"{t}_cbs"] = _metric(cs.cbs[j], f"certified Brier score ({where})", "fraction",
                                    _iv(cs.cbs[j], cs.cbs_ci[j], BCA))
            m[f"{t}_cce_exact"] = _metric(cs.cce[j], f"certified calibration error, exact ({where})", "fraction",
                                          _iv(cs.cce[j], cs.cce_ci[j], BCA))
        t = f"fixed_sigma_{s}"
        m[f"{t}_n_inputs"] = _metric(cs.n_inputs, f"inputs certified at r={max(cs.radii):g} (σ={sigma:g})", "count")
        m[f"{t}_cbs_increase"] = _metric(cs.cbs_increase, f"CBS increase from r={cs.radii[0]:g} to "
                                         f"r={cs.radii[-1]:g} (σ={sigma:g}, fixed set)", "fraction",
                                         _iv(cs.cbs_increase, cs.diff_cbs_ci, BCA, (-1.0, 1.0)))
        m[f"{t}_cce_increase"] = _metric(cs.cce_increase, f"CCE increase from r={cs.radii[0]:g} to "
                                         f"r={cs.radii[-1]:g} (σ={sigma:g}, fixed set)", "fraction",
                                         _iv(cs.cce_increase, cs.diff_cce_ci, BCA, (-1.0, 1.0)))


def _ace(m: dict[str, Metric], c: Computed) -> None:
    """Every β-ACE attack's ECE and ECE increase, and the base model's clean numbers."""
    for r in c.ace.rows:
        t = f"ace_{r.configuration}_{r.norm}"
        where = f"{r.configuration}, {r.norm} ε={r.eps:g}"
        m[f"{t}_ece"] = _metric(r.adv_ece, f"ECE under β-ACE ({where})", "fraction", _iv(r.adv_ece, r.adv_ece_ci, BCA))
        m[f"{t}_ece_increase"] = _metric(r.diff_ece, f"ECE increase under β-ACE ({where})", "fraction",
                                         _iv(r.diff_ece, r.diff_ece_ci, BCA, (-1.0, 1.0)))
    r0 = c.ace.rows[0]
    m["ace_clean_ece"] = _metric(r0.clean_ece, "base model clean ECE (plug-in)", "fraction",
                                 _iv(r0.clean_ece, r0.clean_ece_ci, BCA))
    m["ace_accuracy"] = _metric(r0.accuracy, "base model accuracy (unchanged by β-ACE)", "fraction",
                                _iv(r0.accuracy, r0.accuracy_ci, CP))
    m["ace_predictions_unchanged"] = _metric(c.ace.predictions_unchanged, "no β-ACE attack changed a prediction", "")


def _act(m: dict[str, Metric], comp: ACTComparison) -> None:
    """ACT's certified numbers per method and radius, how far each fine-tune moved, the conclusive comparisons."""
    m["act_max_certifiable_radius"] = _metric(comp.max_radius, f"largest radius certifiable in ACT (σ="
                                              f"{comp.sigma:g}, n = {comp.config['n']})", "L2")
    for r in comp.rows:
        t = f"act_{r.method}_r_{tag(r.radius)}"
        where = f"{ACT_LABELS.get(r.method, r.method)}, r={r.radius:g}"
        ca_ci = (r.certified_accuracy_ci_low, r.certified_accuracy_ci_high)
        m[f"{t}_certified_accuracy"] = _metric(r.certified_accuracy, f"ACT certified accuracy ({where})",
                                               "fraction", _iv(r.certified_accuracy, ca_ci, CP))
        m[f"{t}_cce_exact"] = _metric(r.cce, f"ACT certified calibration error ({where})", "fraction",
                                      _iv(r.cce, _pair(r.cce_ci_low, r.cce_ci_high), BCA))
        m[f"{t}_cbs"] = _metric(r.cbs, f"ACT certified Brier score ({where})", "fraction",
                                _iv(r.cbs, _pair(r.cbs_ci_low, r.cbs_ci_high), BCA))
    for method, (mx, mn) in movement(comp).items():
        m[f"act_{method}_max_weight_change"] = _metric(mx, f"largest |Δw| of any {ACT_LABELS.get(method, method)} "
                                                       "fine-tune from the start", "weight units")
        m[f"act_{method}_mean_weight_change"] = _metric(mn, f"mean |Δw| of the {ACT_LABELS.get(method, method)} "
                                                        "fine-tune that moved most", "weight units")
    for d in comp.differences:
        where = (f"{ACT_LABELS.get(d.method, d.method)} − {ACT_LABELS.get(d.baseline, d.baseline)}, "
                 f"r={d.radius:g}")
        m[f"act_{d.method}_minus_{d.baseline}_r_{tag(d.radius)}_cce_diff"] = _metric(
            d.difference, f"ACT CCE difference, paired ({where})", "fraction",
            _iv(d.difference, _pair(d.low, d.high), PAIRED, (-1.0, 1.0)), d.reason)
    m["act_conclusive_comparisons"] = _metric(sum(ok for *_, ok, _ in comp.comparisons()),
                                              "ACT comparisons with the start model the intervals decide", "count")


def _pair(lo: float | None, hi: float | None) -> tuple[float, float] | None:
    return None if lo is None or hi is None else (lo, hi)

