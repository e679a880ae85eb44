"""From what the protocol computed to the :class:`Result`: tables (percent, 2 decimals), metrics (fractions,
unrounded, with readable labels, units and intervals), per-sample records with the user's ids and label names,
warnings (a model at chance first), notes and a summary written from the result's own numbers."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from robustsuite_common.config import to_dict
from robustsuite_common.experiment import ExperimentResult, Metric, Table, chance_rate
from robustsuite_common.intervals import Interval, at_chance, proportion
from robustsuite_common.verdict import Check

from ..act_protocol import ACTComparison
from ..confidence import confidence_bounds
from ..smoothing import max_certifiable_radius
from .effects import paper_effects
from .protocol import Computed, tag

__all__ = ["ACT_LABELS", "Result", "TITLE", "build", "paper_values"]

TITLE = "Certified calibration: CBS and CCE under Gaussian smoothing, calibration attacks, ACT"
ACT_LABELS = {"none": "noise model (not fine-tuned)", "gaussian": "noise fine-tuning", "smoothadv": "AT (SmoothAdv)",
              "brier_act": "Brier-ACT", "acce_act": "ACCE-ACT", "acce_act_exact": "ACCE-ACT (exact adversary)"}
PCT = (0.0, 100.0)


@dataclass(frozen=True)
class Result(ExperimentResult):
    """The experiment's result: an :class:`~robustsuite_common.experiment.ExperimentResult` (tables, metrics,
    records, summary, notes, warnings; ``to_dict`` / ``from_dict`` / ``save`` / ``load``) with a title and typed
    accessors; ``checks``: the audit's ``calibration-under-attack`` check when ``audit.enabled``."""


    @property
    def title(self) -> str:
        return TITLE

    def table(self, name: str) -> Table:
        if name not in self.tables:
            raise KeyError(f"no table {name!r}; tables: {list(self.tables)}")
        return self.tables[name]

    @property
    def model_at_chance(self) -> bool:
        """The at-chance flag (False for the audit preset, which measures no clean accuracy of its own)."""
        return bool(self.value("model_at_chance")) if "model_at_chance" in self.metrics else False


def paper_values() -> dict[str, Any]:
    """The paper's reference values (Tables 1, 2, 7 and settings) shipped beside the experiment."""
    return json.loads(resources.files("certcal.experiment").joinpath("paper.json").read_text(encoding="utf-8"))


def _pct(v: float | None) -> float | None:
    return None if v is None else round(100.0 * float(v), 2)


def _pct_ci(ci: tuple[float, float] | None) -> tuple[float | None, float | None]:
    return (None, None) if ci is None else (_pct(ci[0]), _pct(ci[1]))


def _iv(value: float | None, ci: tuple[float, float] | None, method: str,
        bounds: tuple[float | None, float | None] = (0.0, 1.0)) -> Interval | None:
    if value is None or ci is None:
        return None
    return Interval(float(value), float(ci[0]), float(ci[1]), method=method, bounds=bounds)


BCA = "bootstrap BCa over the inputs"
CP = "Clopper-Pearson"


def _metric(value: Any, label: str, unit: str = "fraction", interval: Interval | None = None,
            note: str = "") -> Metric:
    return Metric(value, label, unit, interval, note)


def _table(name: str, title: str, columns: list[str], rows: list[list[Any]], pct: tuple[str, ...] = ()) -> Table:
    units = {c: "%" for c in pct}
    return Table(name, title, tuple(columns), tuple(tuple(r) for r in rows), units, {c: PCT for c in pct})


# ------------------------------------------------------------------------------------------------------------
# tables


def _certified_table(c: Computed, ceilings: dict[float, float]) -> Table:
    rows = []
    for sigma, curve in c.curves.items():
        for r in curve.rows:
            rows.append([sigma, r.radius, _pct(r.certified_accuracy), *_pct_ci(r.certified_accuracy_ci),
                         r.n_certified, _pct(r.cbs), *_pct_ci(r.cbs_ci), _pct(r.cce["exact"]),
                         *_pct_ci(r.cce_ci.get("exact")), _pct(r.cce["admm"]), _pct(r.cce["brier"]),
                         _pct(r.clean_ece), r.radius <= ceilings[sigma]])
    cap = ", ".join(f"σ={s:g}: {v:.3g}" for s, v in ceilings.items())
    return _table("certified", "Certified accuracy, CBS and CCE (%) across radii (inputs certified at each radius); "
                  f"largest radius the draw budget can certify: {cap}",
                  ["sigma", "radius", "CA", "CA_ci_low", "CA_ci_high", "certified", "CBS", "CBS_ci_low", "CBS_ci_high",
                   "CCE exact", "CCE exact_ci_low", "CCE exact_ci_high", "CCE ADMM", "CCE Brier", "ECE (MC)",
                   "certifiable"], rows,
                  ("CA", "CBS", "CCE exact", "CCE ADMM", "CCE Brier", "ECE (MC)"))


def _fixed_table(c: Computed) -> Table:
    rows = []
    for sigma, cs in c.fixed.items():
        for j, r in enumerate(cs.radii):
            rows.append([sigma, r, cs.n_inputs, _pct(cs.cbs[j]), *_pct_ci(cs.cbs_ci[j]), _pct(cs.cce[j]),
                         *_pct_ci(cs.cce_ci[j])])
    return _table("fixed_set", "CBS and exact CCE (%) on one fixed input set (those certified at the largest radius): "
                  "non-decreasing in the radius", ["sigma", "radius", "inputs", "CBS", "CBS_ci_low", "CBS_ci_high",
                                                   "CCE exact", "CCE exact_ci_low", "CCE exact_ci_high"], rows,
                  ("CBS", "CCE exact"))


def _bounds_table(c: Computed) -> Table:
    rows = [[w.sigma, r, round(s, 4), round(cdf, 4), round(q, 4)]
            for w in c.widths.values() for r, s, cdf, q in zip(w.radii, w.standard, w.cdf, w.ratio, strict=True)]
    return _table("bounds", "Mean width of the certified confidence interval: Standard vs CDF certificate",
                  ["sigma", "radius", "Standard", "CDF", "CDF / Standard"], rows)


def _ace_table(c: Computed) -> Table:
    rows = []
    for r in c.ace.rows:
        rows.append([r.configuration, r.norm, r.eps, _pct(r.accuracy), *_pct_ci(r.accuracy_ci), _pct(r.clean_ece),
                     *_pct_ci(r.clean_ece_ci), _pct(r.adv_ece), *_pct_ci(r.adv_ece_ci), _pct(r.diff_ece),
                     *_pct_ci(r.diff_ece_ci), r.prediction_unchanged])
    t = Table("ace", "beta-ACE calibration attacks on the base model (ECE %, accuracy %)",
              ("configuration", "norm", "eps", "accuracy", "accuracy_ci_low", "accuracy_ci_high", "clean ECE",
               "clean ECE_ci_low", "clean ECE_ci_high", "attacked ECE", "attacked ECE_ci_low", "attacked ECE_ci_high",
               "ECE increase", "ECE increase_ci_low", "ECE increase_ci_high", "predictions unchanged"),
              tuple(tuple(r) for r in rows), {k: "%" for k in ("accuracy", "clean ECE", "attacked ECE", "ECE increase")},
              {"accuracy": PCT, "clean ECE": PCT, "attacked ECE": PCT, "ECE increase": (-100.0, 100.0)})
    return t


def _headline(ace: Table) -> Table:
    """The β-ACE attacks' picture: the base model's ECE (%) clean against attacked, per configuration (§4)."""
    from robustsuite_common.experiment import ci_of, headline

    return headline("beta-ACE: ECE (%) of the base model, clean against attacked (the attacks keep every prediction)",
                    [(f"{r['configuration']} ({r['norm']})", ci_of(r, "clean ECE"), ci_of(r, "attacked ECE"),
                      f"beta-ACE {r['configuration']}, {r['norm']} eps={r['eps']:g}") for r in ace.records()],
                    unit="%", bounds=PCT)


def _calibration_table(c: Computed) -> Table:
    k = c.calibration
    d = k.debiased
    return Table("calibration", "Calibration of the base model on the clean test inputs: plug-in ECE, debiased ECE "
                 "(minus its expected value under perfect calibration) and the calibration test, Brier score (%)",
                 ("inputs", "ECE plug-in", "ECE debiased", "ECE debiased_ci_low", "ECE debiased_ci_high",
                  "ECE expected if calibrated", "calibration test p", "Brier", "Brier_ci_low", "Brier_ci_high"),
                 ((k.n, _pct(k.ece), _pct(d.estimate), _pct(d.low), _pct(d.high), _pct(k.null_mean),
                   round(k.p_value, 4), _pct(k.brier.estimate), _pct(k.brier.low), _pct(k.brier.high)),),
                 {"ECE plug-in": "%", "ECE debiased": "%", "Brier": "%"},
                 {"ECE debiased": (-100.0, 100.0), "Brier": PCT})


def _label(method: str, start: str) -> str:
    """A method's row label; ``none`` is the start model (the noise model, or the SmoothAdv start)."""
    if method == "none" and start == "smoothadv":
        return "SmoothAdv start (not fine-tuned further)"
    return ACT_LABELS.get(method, method)


def _act_tables(c: Computed, comp: ACTComparison) -> list[Table]:
    cfg = c.prepared.cfg
    verdicts = {(m, r): (v, ok, why) for m, r, v, ok, why in comp.comparisons()}
    moved = _movement(comp)
    rows = []
    for r in comp.rows:
        v = verdicts.get((r.method, r.radius))
        rows.append([_label(r.method, cfg.act.start), r.radius, _pct(r.certified_accuracy),
                     _pct(r.certified_accuracy_ci_low), _pct(r.certified_accuracy_ci_high), _pct(r.cbs),
                     _pct(r.cbs_ci_low), _pct(r.cbs_ci_high), _pct(r.cce), _pct(r.cce_ci_low), _pct(r.cce_ci_high),
                     r.n_selected, r.certifiable, "baseline" if v is None else v[0], "" if v is None else v[2]])
    moves = "; ".join(f"{ACT_LABELS.get(m, m)} max {mx:.2g}, mean {mn:.2g}" for m, (mx, mn) in moved.items())
    n_train, n_test = comp.config["n_train"], comp.config["n_test"]
    title = (f"Adversarial calibration training at σ={comp.sigma:g}, ε={comp.epsilon:g} ({cfg.act.epochs} fine-tuning "
             f"epoch(s) on {n_train} train images, lr grid {comp.config['grid']['lr']}, seeds {list(comp.seeds)}, "
             f"{n_test} test inputs; selection: models within {100 * cfg.act.selection_margin:g} % of the best CA, "
             f"lowest CCE / CBS): CA, CBS, CCE exact (%). Largest certifiable radius with n = {comp.config['n']} "
             f"draws: {comp.max_radius:.3g}. Weight change |Δw| from the start: {moves or 'none fine-tuned'}")
    act = _table("act", title, ["method", "radius", "CA", "CA_ci_low", "CA_ci_high", "CBS", "CBS_ci_low",
                                "CBS_ci_high", "CCE exact", "CCE exact_ci_low", "CCE exact_ci_high", "seeds selected",
                                "certifiable", "CCE vs start", "why"], rows, ("CA", "CBS", "CCE exact"))
    wrows = [[ACT_LABELS.get(w.method, w.method), json.dumps(w.params, sort_keys=True), w.seed, w.max_abs_change,
              w.mean_abs_change, w.n_parameters] for w in comp.weights if w.method != "none"]
    weights = Table("act_weights", "How far each fine-tune moved the weights from the start model: max and mean "
                    "|w - w_start| over all parameters (a fine-tune that barely moves them cannot differ from the start)",
                    ("method", "grid point", "seed", "max |Δw|", "mean |Δw|", "parameters"),
                    tuple(tuple(r) for r in wrows))
    ref = paper_values()["table7"]
    prow = [[m, r, lo, hi, a, b] for m in ref["acce"] for r, (lo, hi), a, b in
            zip(ref["radii"], ref["ca_range"], ref["acce"][m], ref["cbs"][m], strict=True)]
    paper = Table("act_paper", ref["title"] + " — for comparison, not reproduced here",
                  ("method", "radius", "CA range low", "CA range high", "ACCE", "CBS"), tuple(tuple(r) for r in prow),
                  {"ACCE": "%", "CBS": "%"})
    return [act, weights, paper]


def _movement(comp: ACTComparison) -> dict[str, tuple[float, float]]:
    """Per fine-tuned method: the largest max |Δw| and the largest mean |Δw| over its grid points and seeds."""
    out: dict[str, tuple[float, float]] = {}
    for w in comp.weights:
        if w.method == "none":
            continue
        mx, mn = out.get(w.method, (0.0, 0.0))
        out[w.method] = (max(mx, w.max_abs_change), max(mn, w.mean_abs_change))
    return out


# ------------------------------------------------------------------------------------------------------------
# metrics


def _metrics(c: Computed, ceilings: dict[float, float], chance: float) -> dict[str, Metric]:
    m: dict[str, Metric] = {}
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
    for sigma, curve in c.curves.items():
        s = tag(sigma)
        m[f"sigma_{s}_max_certifiable_radius"] = _metric(ceilings[sigma], f"largest radius certifiable at σ={sigma:g} "
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
    for sigma, w in c.widths.items():
        for r, q in zip(w.radii, w.ratio, strict=True):
            m[f"sigma_{tag(sigma)}_r_{tag(r)}_cdf_over_standard_width"] = _metric(
                q, f"CDF / Standard certificate width (σ={sigma:g}, r={r:g})", "ratio")
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
    comp = c.act
    if comp is not None:
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
        for method, (mx, mn) in _movement(comp).items():
            m[f"act_{method}_max_weight_change"] = _metric(mx, f"largest |Δw| of any {ACT_LABELS.get(method, method)} "
                                                           "fine-tune from the start", "weight units")
            m[f"act_{method}_mean_weight_change"] = _metric(mn, f"mean |Δw| of the {ACT_LABELS.get(method, method)} "
                                                            "fine-tune that moved most", "weight units")
        m["act_conclusive_comparisons"] = _metric(sum(ok for *_, ok, _ in comp.comparisons()),
                                                  "ACT comparisons with the start model the intervals decide", "count")
    gaps = [g for curve in c.curves.values() if (g := curve.solver_gap("admm", "exact")) is not None]
    m["max_exact_minus_admm"] = _metric(max(gaps) if gaps else None, "largest gap exact CCE - ADMM's ACCE")
    return m


def _pair(lo: float | None, hi: float | None) -> tuple[float, float] | None:
    return None if lo is None or hi is None else (lo, hi)


# ------------------------------------------------------------------------------------------------------------
# per-sample records


def _records(c: Computed) -> dict[str, list[dict[str, Any]]]:
    p = c.prepared
    test = p.data.test
    cal = p.cfg.calibration
    y = p.y
    out: dict[str, list[dict[str, Any]]] = {}

    def name(k: int) -> str:
        return "abstain" if k < 0 else test.name_of(k)

    for sigma, cert in c.certificates.items():
        rows = []
        conf = cert.scores.mean(1) if cert.scores is not None else np.full(len(y), np.nan)
        per_r = {}
        for r in cal.radii:
            mask = cert.certified_at(r)
            lo, hi = np.full(len(y), None, dtype=object), np.full(len(y), None, dtype=object)
            if mask.any() and cert.scores is not None:
                b = confidence_bounds(cert.scores[mask], cert.sigma, r, alpha=cert.alpha, method=cal.bound)
                lo[mask], hi[mask] = b.lower, b.upper
            per_r[r] = (lo, hi)
        for i in range(len(y)):
            row = {"id": test.id_of(i), "input": f"test[{i}]", "label": test.name_of(int(y[i])),
                   "label_index": int(y[i]), "prediction": name(int(cert.prediction[i])),
                   "prediction_index": int(cert.prediction[i]), "correct": bool(cert.prediction[i] == y[i]),
                   "confidence": float(conf[i]), "p_lower": float(cert.p_lower[i]),
                   "certified_radius": float(cert.radius[i]), "sigma": float(sigma)}
            for r, (lo, hi) in per_r.items():
                row[f"lower_r{tag(r)}"] = None if lo[i] is None else float(lo[i])
                row[f"upper_r{tag(r)}"] = None if hi[i] is None else float(hi[i])
            rows.append(row)
        out[f"certificates-sigma{tag(sigma)}"] = rows
    ace_rows = []
    for row, res in zip(c.ace.rows, c.ace.results, strict=True):
        for i in range(len(y)):
            ace_rows.append({"id": test.id_of(i), "input": f"test[{i}]", "label": test.name_of(int(y[i])),
                             "attack": row.configuration, "norm": row.norm, "eps": row.eps,
                             "prediction": test.name_of(int(res.clean_prediction[i])),
                             "attacked_prediction": test.name_of(int(res.adv_prediction[i])),
                             "correct": bool(res.correct[i]), "clean_confidence": float(res.clean_confidence[i]),
                             "attacked_confidence": float(res.adv_confidence[i])})
    out["ace"] = ace_rows
    comp = c.act
    if comp is not None:
        act_rows = []
        for (method, gi, seed), cert in comp.certificates.items():
            params = comp.grid_points[method][gi]
            conf = cert.scores.mean(1) if cert.scores is not None else np.full(cert.prediction.shape, np.nan)
            for i in range(cert.prediction.shape[0]):
                act_rows.append({"id": test.id_of(i), "input": f"test[{i}]", "label": test.name_of(int(y[i])),
                                 "method": method, "lr": params.get("lr"), "seed": seed,
                                 "prediction": name(int(cert.prediction[i])), "correct": bool(cert.prediction[i] == y[i]),
                                 "confidence": float(conf[i]), "certified_radius": float(cert.radius[i])})
        out["act"] = act_rows
    return out


# ------------------------------------------------------------------------------------------------------------
# summary, notes, warnings


def _warnings(c: Computed, metrics: dict[str, Metric], chance: float) -> list[str]:
    out = []
    if metrics["model_at_chance"].value:
        acc = metrics["base_clean_accuracy"]
        out.append(f"the base model's clean accuracy {acc.value:.1%} [{acc.interval.low:.1%}, {acc.interval.high:.1%}] "
                   f"is compatible with the chance rate {chance:.1%}: its β-ACE numbers carry no information")
    for sigma in c.curves:
        if metrics[f"sigma_{tag(sigma)}_at_chance"].value:
            out.append(f"the smoothed classifier at σ={sigma:g} is at chance (certified accuracy at the smallest radius "
                       f"compatible with {chance:.1%}): its certified calibration numbers carry no information")
    return out


def _notes(c: Computed, ceilings: dict[float, float]) -> list[str]:
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
        _table1_note(),
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


def _table1_note() -> str:
    t1 = paper_values()["table1"]
    rows = [r for r in t1["rows"] if r[0] == "ST"]
    parts = ", ".join(f"{r[1]} ε={r[2]}: {r[3]:g}% → up to {max(r[4:]):g}%" for r in rows)
    return (f"For scale, the paper's Table 1 (standard models, ECE clean → under the strongest β-ACE attack): "
            f"{parts}; accuracy unchanged.")


def _summary(c: Computed, metrics: dict[str, Metric], warnings: list[str]) -> str:
    sigma0 = next(iter(c.curves))
    rows = c.curves[sigma0].rows
    r_mid = rows[min(2, len(rows) - 1)]
    ace = c.ace
    best = ace.worst
    text = ""
    if warnings:
        text += "Warning: " + "; ".join(warnings) + ". "
    text += (f"σ={sigma0:g}: certified accuracy {r_mid.certified_accuracy:.1%} at radius {r_mid.radius:g}, "
             f"certified Brier score {_pct(r_mid.cbs)}% and certified calibration error {_pct(r_mid.cce['exact'])}% "
             f"(ADMM finds {_pct(r_mid.cce['admm'])}%). beta-ACE attacks move the base model's ECE from "
             f"{_pct(ace.rows[-1].clean_ece)}% up to {_pct(best.adv_ece)}% ({best.configuration}, {best.norm}) "
             + ("without changing a single prediction" if ace.predictions_unchanged else "but CHANGED some predictions")
             + f"; in {ace.n_increase_above_zero} of {len(ace.rows)} attacks the bootstrap interval of the ECE "
             f"increase lies above 0 and in {ace.n_attacked_above_clean} the attacked ECE's interval lies above the "
             "clean one's (in the others they overlap or the attack lowers the ECE).")
    k = c.calibration
    text += (f" The base model's clean ECE {_pct(k.ece)}% is {_pct(k.debiased.estimate)}% "
             f"[{_pct(k.debiased.low)}, {_pct(k.debiased.high)}] after removing the {_pct(k.null_mean)}% a perfectly "
             f"calibrated model would show on {k.n} inputs (calibration test p = {k.p_value:.3g}).")
    for sigma, cs in c.fixed.items():
        text += (f" On the {cs.n_inputs} inputs certified at r={max(cs.radii):g} (σ={sigma:g}) CBS grows by "
                 f"{_pct(cs.cbs_increase)} points and CCE by {_pct(cs.cce_increase)} points from r={min(cs.radii):g} "
                 f"({'both' if cs.increase_separated else 'not both'} separated from 0 by their bootstrap "
                 "intervals).")
    comp = c.act
    v = comp.verdict() if comp is not None else None
    if comp is not None:
        text += f" ACT: the draw budget certifies at most r = {comp.max_radius:.3g}."
        moved = _movement(comp)
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
        text += (f" ACT at r={v.radius:g}: {v.method} CCE {_pct(v.cce)}% [{_pct(ci[0])}, {_pct(ci[1])}] "
                 f"vs {v.baseline} {_pct(v.baseline_cce)}% [{_pct(bci[0])}, {_pct(bci[1])}], CA "
                 f"{_pct(v.certified_accuracy)}% vs {_pct(v.baseline_certified_accuracy)}%; {verdict}.")
    return text


def build(c: Computed) -> Result:
    p = c.prepared
    cfg = p.cfg
    ceilings = {s: max_certifiable_radius(s, cfg.certify.n, cfg.certify.alpha) for s in c.curves}
    chance = chance_rate(p.y, p.n_classes)
    ace = _ace_table(c)
    tables = [_headline(ace), _certified_table(c, ceilings), _fixed_table(c), _bounds_table(c), ace,
              _calibration_table(c)]
    if c.act is not None:
        tables += _act_tables(c, c.act)
    metrics = _metrics(c, ceilings, chance)
    tables.append(paper_effects(metrics))
    warnings = _warnings(c, metrics, chance)
    checks: tuple[Check, ...] = ()
    if cfg.audit.enabled:
        from .audit import audit_table, check_of_benchmark

        checks = (check_of_benchmark(c.ace, cfg),)
        tables.append(audit_table(checks))
    return Result(experiment="certcal", config=to_dict(cfg), tables={t.name: t for t in tables}, metrics=metrics,
                  summary=_summary(c, metrics, warnings), records=_records(c), notes=tuple(_notes(c, ceilings)),
                  warnings=tuple(warnings), checks=checks)
