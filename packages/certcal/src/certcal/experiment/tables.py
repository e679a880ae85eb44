"""The experiment's tables (percent, 2 decimals): certified accuracy / CBS / CCE across radii, the fixed input set,
the two certificates' widths, the β-ACE attacks and their headline, the base model's calibration, and ACT's."""

from __future__ import annotations

import json
from typing import Any

from robustsuite_common.experiment import Table

from ..act import ACTComparison
from .config import paper_values
from .run import Computed

__all__ = ["ACT_LABELS", "ace_table", "act_tables", "bounds_table", "calibration_table", "certified_table",
           "fixed_table", "headline_table", "movement", "pct", "pct_ci"]

ACT_LABELS = {"none": "noise model (not fine-tuned)", "gaussian": "noise fine-tuning", "smoothadv": "AT (SmoothAdv)",
              "brier_act": "Brier-ACT", "acce_act": "ACCE-ACT", "acce_act_exact": "ACCE-ACT (exact adversary)"}
PCT = (0.0, 100.0)


def pct(v: float | None) -> float | None:
    return None if v is None else round(100.0 * float(v), 2)


def pct_ci(ci: tuple[float, float] | None) -> tuple[float | None, float | None]:
    return (None, None) if ci is None else (pct(ci[0]), pct(ci[1]))


def _table(name: str, title: str, columns: list[str], rows: list[list[Any]], pct: tuple[str, ...] = ()) -> Table:
    units = {c: "%" for c in pct}
    return Table(name, title, tuple(columns), tuple(tuple(r) for r in rows), units, {c: PCT for c in pct})



def certified_table(c: Computed, ceilings: dict[float, float]) -> Table:
    rows = []
    for sigma, curve in c.curves.items():
        for r in curve.rows:
            rows.append([sigma, r.radius, pct(r.certified_accuracy), *pct_ci(r.certified_accuracy_ci),
                         r.n_certified, pct(r.cbs), *pct_ci(r.cbs_ci), pct(r.cce["exact"]),
                         *pct_ci(r.cce_ci.get("exact")), pct(r.cce["admm"]), pct(r.cce["brier"]),
                         pct(r.clean_ece), r.radius <= ceilings[sigma]])
    cap = ", ".join(f"σ={s:g}: {v:.3g}" for s, v in ceilings.items())
    return _table("certified", "Certified accuracy, CBS and CCE (%) across radii (inputs certified at each radius); "
                  f"largest radius the draw budget can certify: {cap}",
                  ["sigma", "radius", "CA", "CA_ci_low", "CA_ci_high", "certified", "CBS", "CBS_ci_low", "CBS_ci_high",
                   "CCE exact", "CCE exact_ci_low", "CCE exact_ci_high", "CCE ADMM", "CCE Brier", "ECE (MC)",
                   "certifiable"], rows,
                  ("CA", "CBS", "CCE exact", "CCE ADMM", "CCE Brier", "ECE (MC)"))


def fixed_table(c: Computed) -> Table:
    rows = []
    for sigma, cs in c.fixed.items():
        for j, r in enumerate(cs.radii):
            rows.append([sigma, r, cs.n_inputs, pct(cs.cbs[j]), *pct_ci(cs.cbs_ci[j]), pct(cs.cce[j]),
                         *pct_ci(cs.cce_ci[j])])
    return _table("fixed_set", "CBS and exact CCE (%) on one fixed input set (those certified at the largest radius): "
                  "non-decreasing in the radius", ["sigma", "radius", "inputs", "CBS", "CBS_ci_low", "CBS_ci_high",
                                                   "CCE exact", "CCE exact_ci_low", "CCE exact_ci_high"], rows,
                  ("CBS", "CCE exact"))


def bounds_table(c: Computed) -> Table:
    rows = [[w.sigma, r, round(s, 4), round(cdf, 4), round(q, 4)]
            for w in c.widths.values() for r, s, cdf, q in zip(w.radii, w.standard, w.cdf, w.ratio, strict=True)]
    return _table("bounds", "Mean width of the certified confidence interval: Standard vs CDF certificate",
                  ["sigma", "radius", "Standard", "CDF", "CDF / Standard"], rows)


def ace_table(c: Computed) -> Table:
    rows = []
    for r in c.ace.rows:
        rows.append([r.configuration, r.norm, r.eps, pct(r.accuracy), *pct_ci(r.accuracy_ci), pct(r.clean_ece),
                     *pct_ci(r.clean_ece_ci), pct(r.adv_ece), *pct_ci(r.adv_ece_ci), pct(r.diff_ece),
                     *pct_ci(r.diff_ece_ci), r.prediction_unchanged])
    t = Table("ace", "beta-ACE calibration attacks on the base model (ECE %, accuracy %)",
              ("configuration", "norm", "eps", "accuracy", "accuracy_ci_low", "accuracy_ci_high", "clean ECE",
               "clean ECE_ci_low", "clean ECE_ci_high", "attacked ECE", "attacked ECE_ci_low", "attacked ECE_ci_high",
               "ECE increase", "ECE increase_ci_low", "ECE increase_ci_high", "predictions unchanged"),
              tuple(tuple(r) for r in rows), {k: "%" for k in ("accuracy", "clean ECE", "attacked ECE", "ECE increase")},
              {"accuracy": PCT, "clean ECE": PCT, "attacked ECE": PCT, "ECE increase": (-100.0, 100.0)})
    return t


def headline_table(ace: Table) -> Table:
    """The β-ACE attacks' picture: the base model's ECE (%) clean against attacked, per configuration (§4)."""
    from robustsuite_common.experiment import ci_of, headline

    return headline("beta-ACE: ECE (%) of the base model, clean against attacked (the attacks keep every prediction)",
                    [(f"{r['configuration']} ({r['norm']})", ci_of(r, "clean ECE"), ci_of(r, "attacked ECE"),
                      f"beta-ACE {r['configuration']}, {r['norm']} eps={r['eps']:g}") for r in ace.records()],
                    unit="%", bounds=PCT)


def calibration_table(c: Computed) -> Table:
    k = c.calibration
    d = k.debiased
    return Table("calibration", "Calibration of the base model on the clean test inputs: plug-in ECE, debiased ECE "
                 "(minus its expected value under perfect calibration) and the calibration test, Brier score (%)",
                 ("inputs", "ECE plug-in", "ECE debiased", "ECE debiased_ci_low", "ECE debiased_ci_high",
                  "ECE expected if calibrated", "calibration test p", "Brier", "Brier_ci_low", "Brier_ci_high"),
                 ((k.n, pct(k.ece), pct(d.estimate), pct(d.low), pct(d.high), pct(k.null_mean),
                   round(k.p_value, 4), pct(k.brier.estimate), pct(k.brier.low), pct(k.brier.high)),),
                 {"ECE plug-in": "%", "ECE debiased": "%", "Brier": "%"},
                 {"ECE debiased": (-100.0, 100.0), "Brier": PCT})


def act_label(method: str, start: str) -> str:
    """A method's row label; ``none`` is the start model (the noise model, or the SmoothAdv start)."""
    if method == "none" and start == "smoothadv":
        return "SmoothAdv start (not fine-tuned further)"
    return ACT_LABELS.get(method, method)


def act_tables(c: Computed, comp: ACTComparison) -> list[Table]:
    cfg = c.prepared.cfg
    verdicts = {(m, r): (v, ok, why) for m, r, v, ok, why in comp.comparisons()}
    moved = movement(comp)
    rows = []
    for r in comp.rows:
        v = verdicts.get((r.method, r.radius))
        rows.append([act_label(r.method, cfg.act.start), r.radius, pct(r.certified_accuracy),
                     pct(r.certified_accuracy_ci_low), pct(r.certified_accuracy_ci_high), pct(r.cbs),
                     pct(r.cbs_ci_low), pct(r.cbs_ci_high), pct(r.cce), pct(r.cce_ci_low), pct(r.cce_ci_high),
                     r.n_selected, r.certifiable, "baseline" if v is None else v[0], "" if v is None else v[2]])
    moves = "; ".join(f"{ACT_LABELS.get(m, m)} max {mx:.2g}, mean {mn:.2g}" for m, (mx, mn) in moved.items())
    n_train, n_test = comp.config["n_train"], comp.config["n_test"]
    title = (f"Adversarial calibration training at σ={comp.sigma:g}, ε={comp.epsilon:g} ({cfg.act.epochs} fine-tuning "
             f"epoch(s) on {n_train} train images, lr grid {comp.config['grid']['lr']}{_factors(comp)}, "
             f"seeds {list(comp.seeds)}, "
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
    drows = tuple((ACT_LABELS.get(d.method, d.method), ACT_LABELS.get(d.baseline, d.baseline), d.radius,
                   pct(d.difference), pct(d.low), pct(d.high), d.n_seeds, d.reason) for d in comp.differences)
    paired = [] if not comp.differences else [Table(
        "act_paired", f"CCE difference of each ACT variant against AT (percentage points), with a paired 95 % BCa "
        f"bootstrap interval: both models' exact CCE on the same {comp.config['n_boot']} resamples of the "
        f"{n_test} shared test inputs (negative: ACT lowers the CCE)",
        ("method", "baseline", "radius", "CCE difference", "CCE difference_ci_low", "CCE difference_ci_high",
         "seeds", "why"), drows, {"CCE difference": "pp"}, {"CCE difference": (-100.0, 100.0)})]
    return [act, *paired, weights, paper]


def _factors(comp: ACTComparison) -> str:
    """The attack step factors of the grid, when it varies them (App. I.3), for the ACT table's title."""
    f = comp.config["grid"].get("attack_step_factor")
    return "" if not f else f" x attack step factor {f}, {comp.config['optimizer'].upper()}"


def movement(comp: ACTComparison) -> dict[str, tuple[float, float]]:
    """Per fine-tuned method: the largest max |Δw| and the largest mean |Δw| over its grid points and seeds."""
    out: dict[str, tuple[float, float]] = {}
    for w in comp.weights:
        if w.method == "none":
            continue
        mx, mn = out.get(w.method, (0.0, 0.0))
        out[w.method] = (max(mx, w.max_abs_change), max(mn, w.mean_abs_change))
    return out

