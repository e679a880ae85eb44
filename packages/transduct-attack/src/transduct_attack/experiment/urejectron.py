"""URejectron (appendix A.6) in the paper's evaluation: Figure 1 on the caller's data (:func:`urejectron_figure`)
and in the experiment: URejectron's error on accepted perturbed points and clean rejection rate against τ."""

from __future__ import annotations

import math
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from robustsuite_common.checks import check_int
from robustsuite_common.config import config_hash
from robustsuite_common.contract import renamed
from robustsuite_common.experiment import Metric

from ..attacks import TransferPGD
from ..model_space import GMSA
from ..pgd import PGD
from ..tables import Comparison, check_data, paired_comparison
from ..urejectron import RejectionCurve, URejectron, rejection_curve
from ._common import LABEL, Out, StoreCells, cp_interval

__all__ = ["URejectronFigure", "urejectron_figure", "urejectron"]


@dataclass(frozen=True)
class URejectronFigure:
    """Figure 1: one :class:`RejectionCurve` per attack ("pgd": transfer, "gmsa-avg"), and the readings at the
    threshold of ``thresholds`` nearest ``tau``."""

    tau: float
    curves: tuple[RejectionCurve, ...]
    names: tuple[str, ...]

    @property
    def tau_index(self) -> int:
        taus = list(self.curves[0].thresholds)
        return taus.index(min(taus, key=lambda t: abs(t - self.tau)))

    def curve(self, name: str) -> RejectionCurve:
        return self.curves[self.names.index(name)]

    def compare(self, attack: str = "gmsa-avg", reference: str = "pgd", *, boot_seed: int = 0) -> Comparison:
        """Error on accepted perturbed points at τ under ``attack`` against ``reference``, on the same points,
        read as the defended share 1 − error (a point counts as defended when it is classified correctly or
        rejected): paired bootstrap; "below" means ``attack`` leaves fewer points defended (a higher error)."""
        i, a, r = self.tau_index, self.curve(attack), self.curve(reference)
        tau = a.thresholds[i]
        return paired_comparison(attack, 1.0 - a.errors_at(tau), reference, 1.0 - r.errors_at(tau),
                                 seed=boot_seed)

    def to_dict(self) -> dict[str, Any]:
        return {"tau": self.tau, "tau_index": self.tau_index,
                "curves": {k: c.to_dict() for k, c in zip(self.names, self.curves, strict=True)}}


@renamed(classifier="model")
def urejectron_figure(model: nn.Module, x_train: torch.Tensor, x_test: torch.Tensor, y_test: torch.Tensor, *,
                      eps: float = 0.3, n: int = 1000, epochs: int = 10,
                      thresholds: Sequence[float] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95),
                      tau: float = 0.5, T: int = 9, pgd_steps: int = 100, seed: int = 0,
                      curves: MutableMapping[str, RejectionCurve] | None = None) -> URejectronFigure:
    """Figure 1: URejectron (A.6; discriminator trained ``epochs`` epochs between D = ``x_train`` and the
    perturbed batch, threshold ``tau``) over ``model``, the first ``n`` test points in one batch, under
    transfer PGD and GMSA-AVG (``T``, PGD ``pgd_steps``), swept over ``thresholds``
    (:func:`rejection_curve`). ``curves`` memoises the two curves by attack key."""
    check_data(model, x_train=x_train, x_test=x_test, y_test=y_test)
    if not 0.0 < float(tau) < 1.0 or isinstance(tau, bool):
        raise ValueError(f"tau must be in (0, 1), got {tau!r}")
    n = check_int("n", n, ge=1)
    if n > x_test.shape[0]:
        raise ValueError(f"n must be at most the number of test points ({x_test.shape[0]}), got {n}")
    taus = [float(t) for t in thresholds]
    if not taus or not all(0.0 < t < 1.0 for t in taus):
        raise ValueError(f"thresholds must be a non-empty sequence of values in (0, 1), got {thresholds!r}")
    curves = {} if curves is None else curves
    urej = URejectron(model, x_train, epochs=epochs, threshold=float(tau))
    attacks = {"pgd": TransferPGD(solver=PGD(steps=pgd_steps)), "gmsa-avg": GMSA(mode="avg", T=T,
                                                                                 solver=PGD(steps=pgd_steps))}
    for name, attack in attacks.items():
        if name not in curves:
            curves[name] = rejection_curve(attack, urej, x_test[:n], y_test[:n], eps=eps, thresholds=taus, seed=seed)
    return URejectronFigure(tau=float(tau), curves=tuple(curves[k] for k in attacks), names=tuple(attacks))


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
    if c.difference is None or c.ci_low is None or c.ci_high is None:  # a paired comparison always has them
        raise ValueError("URejectron's comparison lacks its paired interval")
    more = {"below": "above", "above": "below"}.get(c.verdict, c.verdict)  # defended share below = error above
    out.comparisons.append(f"URejectron at τ={taus[mid]:.2f}: error on accepted perturbed points under GMSA-AVG "
                           f"{curves['gmsa-avg'].error_accepted[mid]:.2f} is {more} transfer PGD's "
                           f"{curves['pgd'].error_accepted[mid]:.2f} (paired difference of the errors "
                           f"{0.0 - c.difference:+.2f}, 95% bootstrap [{0.0 - c.ci_high:+.2f}, {0.0 - c.ci_low:+.2f}]); clean "
                           f"rejection {curves['pgd'].rejection_rate[mid]:.2f}")
