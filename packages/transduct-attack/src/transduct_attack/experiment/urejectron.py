"""URejectron (appendix A.6) in the paper's evaluation: Figure 1 on the caller's data (:func:`urejectron_figure`)
and in the experiment: URejectron's error on accepted perturbed points and clean rejection rate against τ."""

from __future__ import annotations

import math
from collections.abc import MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from robustsuite_common.checks import check_choice, check_int
from robustsuite_common.config import config_hash
from robustsuite_common.contract import renamed
from robustsuite_common.experiment import Metric

from ..attacks import TransferPGD
from ..model_space import GMSA
from ..perturbations import CORRUPTIONS, corrupt, cw_l2
from ..pgd import PGD
from ..tables import Comparison, check_data, paired_comparison
from ..urejectron import RejectionCurve, URejectron, perturbed_rejection_curve, rejection_curve
from ._common import LABEL, Out, StoreCells, cp_interval

__all__ = ["URejectronFigure", "FIGURE_ATTACKS", "urejectron_figure", "urejectron"]


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


#: the perturbations of Figure 1 by key: in the L∞ game (pgd, gmsa-avg) or outside it (cw, corruption)
FIGURE_ATTACKS = ("pgd", "gmsa-avg", "cw", "corruption")


@renamed(classifier="model")
def urejectron_figure(model: nn.Module, x_train: torch.Tensor, x_test: torch.Tensor, y_test: torch.Tensor, *,
                      eps: float = 0.3, n: int = 1000, epochs: int = 10,
                      thresholds: Sequence[float] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95),
                      tau: float = 0.5, T: int = 9, pgd_steps: int = 100, seed: int = 0,
                      attacks: Sequence[str] = ("pgd", "gmsa-avg"), cw_steps: int = 100, cw_search_steps: int = 1,
                      cw_c: float = 1.0, cw_lr: float = 0.01, corruption: str = "brightness", severity: int = 1,
                      curves: MutableMapping[str, RejectionCurve] | None = None) -> URejectronFigure:
    """Figure 1: URejectron (A.6; discriminator trained ``epochs`` epochs between D = ``x_train`` and the
    perturbed batch, threshold ``tau``) over ``model``, the first ``n`` test points in one batch, swept over
    ``thresholds`` under each of ``attacks`` (of :data:`FIGURE_ATTACKS`): transfer PGD and GMSA-AVG (``T``, PGD
    ``pgd_steps``) in the L∞ game of budget ``eps`` (:func:`rejection_curve`, Fig. 1a), and outside it
    (:func:`perturbed_rejection_curve`) Carlini-Wagner L2 on ``model`` (``cw_steps`` steps of learning rate
    ``cw_lr`` per value of c, from ``cw_c``, ``cw_search_steps`` values; Fig. 1b) and the common corruption
    ``corruption`` at ``severity`` (Fig. 1c). ``curves`` memoises the curves by attack key."""
    check_data(model, x_train=x_train, x_test=x_test, y_test=y_test)
    if not 0.0 < float(tau) < 1.0 or isinstance(tau, bool):
        raise ValueError(f"tau must be in (0, 1), got {tau!r}")
    n = check_int("n", n, ge=1)
    if n > x_test.shape[0]:
        raise ValueError(f"n must be at most the number of test points ({x_test.shape[0]}), got {n}")
    taus = [float(t) for t in thresholds]
    if not taus or not all(0.0 < t < 1.0 for t in taus):
        raise ValueError(f"thresholds must be a non-empty sequence of values in (0, 1), got {thresholds!r}")
    names = tuple(attacks)
    if not names or len(set(names)) != len(names) or not set(names) <= set(FIGURE_ATTACKS):
        raise ValueError(f"attacks must be distinct keys of {FIGURE_ATTACKS}, got {attacks!r}")
    cw_steps = check_int("cw_steps", cw_steps, ge=1)
    cw_search_steps = check_int("cw_search_steps", cw_search_steps, ge=1)
    kind = check_choice("corruption", corruption, CORRUPTIONS)
    severity = check_int("severity", severity, ge=1, le=5)
    curves = {} if curves is None else curves
    urej = URejectron(model, x_train, epochs=epochs, threshold=float(tau))
    games = {"pgd": lambda: TransferPGD(solver=PGD(steps=pgd_steps)),
             "gmsa-avg": lambda: GMSA(mode="avg", T=T, solver=PGD(steps=pgd_steps))}
    outside = {"cw": lambda x, y, g: cw_l2(model, x, y, c=float(cw_c), steps=cw_steps, lr=float(cw_lr),
                                           binary_search_steps=cw_search_steps),
               "corruption": lambda x, y, g: corrupt(x, kind=kind, severity=severity, generator=g)}
    for name in names:
        if name in curves:
            continue
        if name in games:
            curves[name] = rejection_curve(games[name](), urej, x_test[:n], y_test[:n], eps=eps, thresholds=taus,
                                           seed=seed)
        else:
            curves[name] = perturbed_rejection_curve(outside[name], urej, x_test[:n], y_test[:n], thresholds=taus,
                                                     name=name, seed=seed)
    return URejectronFigure(tau=float(tau), curves=tuple(curves[k] for k in names), names=names)


COLUMNS = ("attack", "tau", "error_accepted", "error_accepted_ci_low", "error_accepted_ci_high", "rejection_rate",
           "rejection_rate_ci_low", "rejection_rate_ci_high", "perturbed_rejection_rate",
           "perturbed_rejection_rate_ci_low", "perturbed_rejection_rate_ci_high")
UNITS = {"tau": "probability", **{c: "fraction" for c in COLUMNS[2:]}}
BOUNDS = {"error_accepted": (0.0, 1.0), "rejection_rate": (0.0, 1.0), "perturbed_rejection_rate": (0.0, 1.0)}


def _labels(u) -> dict[str, str]:
    corruption = f"corruption ({u.corruption.replace('_', ' ')}, severity {u.corruption_severity})"
    return {**LABEL, "corruption": corruption}


def _rows(curves: dict[str, RejectionCurve], label: dict[str, str]) -> list[list]:
    """The table's rows: per attack and τ, the error on accepted x', the rejection rates of x and of x'."""
    from robustsuite_common.intervals import proportion

    rows = []
    for name, c in curves.items():
        for i, t in enumerate(c.thresholds):
            k = int(c.rejected_at(t).sum())
            rows.append([label[name], t, c.error_accepted[i], *c.error_ci[i], c.rejection_rate[i], *c.rejection_ci[i],
                         k / c.n, *proportion(k, c.n).ci])
    return rows


def urejectron(out: Out, cfg, models, xtr, xte, yte, *, store, progress, fp) -> None:
    u, eps, seed = cfg.urejectron, cfg.threat.eps, cfg.seed
    n, m, taus, tau = u.points, u.train_points or xtr.shape[0], list(u.thresholds), u.tau
    memo = StoreCells(store, f"urejectron-{config_hash(u, cfg.threat, cfg.attack, fp, seed)}",
                      RejectionCurve.from_dict)
    fig1 = urejectron_figure(models.standard, xtr[:m], xte, yte, eps=eps, n=n, epochs=u.epochs, thresholds=taus,
                             tau=tau, T=u.T, pgd_steps=cfg.attack.pgd_steps, seed=seed,
                             attacks=["gmsa-avg" if a == "gmsa" else a for a in u.attacks], cw_steps=u.cw_steps,
                             cw_search_steps=u.cw_search_steps, cw_c=u.cw_c, cw_lr=u.cw_lr, corruption=u.corruption,
                             severity=u.corruption_severity, curves=memo)
    curves, label = dict(zip(fig1.names, fig1.curves, strict=True)), _labels(u)
    pred, conf = out.base_view(models.standard, xte, range(n))
    name_of = out.test.name_of
    for name, c in curves.items():
        for i in range(n):
            lab = out.y[i]
            out.records.setdefault("urejectron", []).append(
                {"id": out.test.id_of(i), "input": f"test[{i}]", "label": name_of(lab),
                 "prediction": name_of(pred[i]), "confidence": float(conf[i]), "table": "urejectron",
                 "defense": "URejectron", "attack": label[name], "seed": seed,
                 "adv_prediction": name_of(c.predictions[i]), "correct": c.predictions[i] == lab,
                 "adv_log_p_test": c.adv_log_p_test[i], "clean_log_p_test": c.clean_log_p_test[i],
                 "rejected": c.clean_log_p_test[i] >= math.log(tau),
                 "adv_rejected": c.adv_log_p_test[i] >= math.log(tau)})
    out.table("urejectron", f"Figure 1 data: URejectron against the threshold τ ({n} points; L∞ eps {eps} for the "
                            f"PGD and GMSA games, CW-L2 and the corruption unbounded; error on accepted perturbed "
                            f"points, rejection rate of clean points and of perturbed points)", COLUMNS,
              _rows(curves, label), units=UNITS, bounds=BOUNDS)
    out.curves = {name: c.to_dict() for name, c in curves.items()}
    mid = fig1.tau_index
    for name, c in curves.items():
        key = f"urejectron_{name.replace('-', '_')}"
        out.metrics[f"{key}_error_at_tau"] = Metric.of(
            cp_interval(c.error_accepted[mid], c.error_ci[mid]),
            f"URejectron under {label[name]}: error on accepted perturbed points at τ = {taus[mid]:g}", "fraction")
        out.metrics[f"{key}_rejection_at_tau"] = Metric.of(
            cp_interval(c.rejection_rate[mid], c.rejection_ci[mid]),
            f"URejectron under {label[name]}: rejection rate of clean points at τ = {taus[mid]:g}", "fraction")
    _effects(out, curves, label, [p == y for p, y in zip(pred, out.y[:n], strict=True)], taus[mid], seed=seed)
    if "pgd" in curves and "gmsa-avg" in curves:
        _compare(out, fig1, curves, taus[mid], seed=seed)


def _effects(out: Out, curves: dict[str, RejectionCurve], label: dict[str, str], clean_correct: list[bool],
             tau: float, *, seed: int) -> None:
    """The paper's Figure 1(b, c) effects at τ, paired over the same points under the same discriminator (McNemar
    and a paired bootstrap): CW's accepted errors minus the clean points' (``effect_urejectron_cw_slips_through``)
    and the corrupted points' rejection rate minus the clean points' (``effect_urejectron_rejects_corruptions``)."""
    from robustsuite_common.intervals import mcnemar

    pairs = {}
    if "cw" in curves:
        c = curves["cw"]
        clean_err = [not ok and s < math.log(tau) for ok, s in zip(clean_correct, c.clean_log_p_test, strict=True)]
        pairs["urejectron_cw_slips_through"] = (c.errors_at(tau) > 0, clean_err, "misclassified and accepted")
    if "corruption" in curves:
        c = curves["corruption"]
        pairs["urejectron_rejects_corruptions"] = (c.rejected_at(tau) > 0, c.rejected_at(tau, perturbed=False) > 0,
                                                   "rejected")
    for key, (a, b, what) in pairs.items():
        test = mcnemar(a, b, seed=seed)
        attack = label["cw" if "cw" in key else "corruption"]
        out.metrics[f"effect_{key}"] = Metric.of(
            test.difference, f"URejectron at τ = {tau:g}: share of points {what} under {attack} − share of the clean "
                             f"points {what} by the same discriminator (paired, n = {test.n})", "fraction")
        out.metrics[f"effect_{key}_mcnemar_p"] = Metric(
            test.p_value, f"McNemar exact p of that comparison ({test.only_a} points only under {attack}, "
                          f"{test.only_b} only clean)", "p-value")


def _compare(out: Out, fig1: URejectronFigure, curves: dict[str, RejectionCurve], tau: float, *, seed: int) -> None:
    mid = fig1.tau_index
    c = fig1.compare(boot_seed=seed)
    if c.difference is None or c.ci_low is None or c.ci_high is None:  # a paired comparison always has them
        raise ValueError("URejectron's comparison lacks its paired interval")
    more = {"below": "above", "above": "below"}.get(c.verdict, c.verdict)  # defended share below = error above
    out.comparisons.append(f"URejectron at τ={tau:.2f}: error on accepted perturbed points under GMSA-AVG "
                           f"{curves['gmsa-avg'].error_accepted[mid]:.2f} is {more} transfer PGD's "
                           f"{curves['pgd'].error_accepted[mid]:.2f} (paired difference of the errors "
                           f"{0.0 - c.difference:+.2f}, 95% bootstrap [{0.0 - c.ci_high:+.2f}, {0.0 - c.ci_low:+.2f}]); clean "
                           f"rejection {curves['pgd'].rejection_rate[mid]:.2f}")
