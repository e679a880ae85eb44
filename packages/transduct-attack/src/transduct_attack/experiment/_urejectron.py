"""Figure 1: URejectron's error on accepted perturbed points and clean rejection rate against τ (A.6)."""

from __future__ import annotations

import math

from robustsuite_common.config import config_hash
from robustsuite_common.experiment import Metric

from ..tables import urejectron_figure
from ..urejectron import RejectionCurve
from ._common import LABEL, Out, StoreCells, cp_interval

COLUMNS = ("attack", "tau", "error_accepted", "error_accepted_ci_low", "error_accepted_ci_high", "rejection_rate",
           "rejection_rate_ci_low", "rejection_rate_ci_high")
UNITS = {"tau": "probability", **{c: "fraction" for c in COLUMNS[2:]}}
BOUNDS = {"error_accepted": (0.0, 1.0), "rejection_rate": (0.0, 1.0)}


def urejectron(out: Out, cfg, models, xtr, xte, yte, *, store, progress, fp) -> None:
    u, eps, seed = cfg.urejectron, cfg.threat.eps, cfg.seed
    n, m, taus, tau = u.points, u.train_points or xtr.shape[0], list(u.thresholds), u.tau
    memo = StoreCells(store, f"urejectron-{config_hash(u, cfg.threat, cfg.attack, fp, seed)}",
                      RejectionCurve.from_dict)
    fig1 = urejectron_figure(models.standard, xtr[:m], xte, yte, eps=eps, n=n, epochs=u.epochs, thresholds=taus,
                             tau=tau, T=u.T, pgd_steps=cfg.attack.pgd_steps, seed=seed, curves=memo)
    curves = dict(zip(fig1.names, fig1.curves, strict=True))
    rows = [[LABEL[name], t, c.error_accepted[i], *c.error_ci[i], c.rejection_rate[i], *c.rejection_ci[i]]
            for name, c in curves.items() for i, t in enumerate(c.thresholds)]
    pred, conf = out.base_view(models.standard, xte, range(n))
    name_of = out.test.name_of
    for name, c in curves.items():
        for i in range(n):
            label = out.y[i]
            out.records.setdefault("urejectron", []).append(
                {"id": out.test.id_of(i), "input": f"test[{i}]", "label": name_of(label),
                 "prediction": name_of(pred[i]), "confidence": float(conf[i]), "table": "urejectron",
                 "defense": "URejectron", "attack": LABEL[name], "seed": seed,
                 "adv_prediction": name_of(c.predictions[i]), "correct": c.predictions[i] == label,
                 "adv_log_p_test": c.adv_log_p_test[i], "clean_log_p_test": c.clean_log_p_test[i],
                 "rejected": c.clean_log_p_test[i] >= math.log(tau),
                 "adv_rejected": c.adv_log_p_test[i] >= math.log(tau)})
    out.table("urejectron", f"Figure 1 data: URejectron against the threshold τ ({n} points, L∞ eps {eps}; error on "
                            f"accepted perturbed points, rejection rate of clean points)", COLUMNS, rows,
              units=UNITS, bounds=BOUNDS)
    out.curves = {name: c.to_dict() for name, c in curves.items()}
    mid = fig1.tau_index
    for name, c in curves.items():
        key = f"urejectron_{name.replace('-', '_')}"
        out.metrics[f"{key}_error_at_tau"] = Metric.of(
            cp_interval(c.error_accepted[mid], c.error_ci[mid]),
            f"URejectron under {LABEL[name]}: error on accepted perturbed points at τ = {taus[mid]:g}", "fraction")
        out.metrics[f"{key}_rejection_at_tau"] = Metric.of(
            cp_interval(c.rejection_rate[mid], c.rejection_ci[mid]),
            f"URejectron under {LABEL[name]}: rejection rate of clean points at τ = {taus[mid]:g}", "fraction")
    c = fig1.compare(boot_seed=seed)
    more = {"below": "above", "above": "below"}.get(c.verdict, c.verdict)  # defended share below = error above
    out.comparisons.append(f"URejectron at τ={taus[mid]:.2f}: error on accepted perturbed points under GMSA-AVG "
                           f"{curves['gmsa-avg'].error_accepted[mid]:.2f} is {more} transfer PGD's "
                           f"{curves['pgd'].error_accepted[mid]:.2f} (paired difference of the errors "
                           f"{0.0 - c.difference:+.2f}, 95% bootstrap [{0.0 - c.ci_high:+.2f}, {0.0 - c.ci_low:+.2f}]); clean "
                           f"rejection {curves['pgd'].rejection_rate[mid]:.2f}")
