"""The audit's ``calibration-under-attack`` check: how far the β-ACE attacks (paper 004, §2.2, Eq. 2) move the
model's expected calibration error (§2.1, Eq. 1) on the same points, without changing a single prediction. One row
of the verdict's scorecard (:class:`robustsuite_common.verdict.Check`).

A confidence a user acts on (reject, defer, weigh) is only as good as its calibration; the paper shows that an
adversary inside the budget can make the confidences lie while accuracy stays put. The check attacks the points
with each β-ACE configuration and reports the worst: the largest attacked-minus-clean ECE.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from robustsuite_common.checks import check_choice, check_float, check_int
from robustsuite_common.verdict import Check

from ._validation import check_labelled_images, check_outputs
from .attacks import ACE_CONFIGURATIONS, ACEResult, BetaACE

__all__ = ["FAIL_INCREASE", "WARN_INCREASE", "calibration_under_attack_check", "check_from_results"]

CHECK_ID = "calibration-under-attack"
TITLE = "Calibration under attack (β-ACE moves the ECE, predictions unchanged)"
#: An attacked-minus-clean ECE whose interval lies above this warns: smaller increases, however certain, are below
#: what a reader of an ECE can act on (15 bins on ~100 points move the ECE by about this much by chance).
WARN_INCREASE = 0.02
#: An increase above this (with its interval above ``WARN_INCREASE``) fails the check.
FAIL_INCREASE = 0.10
_NORMS = {"Linf": "linf", "L2": "l2", "linf": "linf", "l2": "l2"}


def _status(estimate: float, interval: tuple[float, float] | None, warn_increase: float, fail_increase: float) -> str:
    """The rule: ``warn`` when the increase's interval lies above ``warn_increase``, ``fail`` when moreover the
    estimate exceeds ``fail_increase``; ``pass`` otherwise (also without an interval: nothing is shown)."""
    if interval is None or not interval[0] > warn_increase:
        return "pass"
    return "fail" if estimate > fail_increase else "warn"


def check_from_results(results: Sequence[tuple[str, ACEResult]], *, eps: float, steps: int, n_bins: int = 15,
                       n_boot: int = 1000, seed: int = 0, warn_increase: float = WARN_INCREASE,
                       fail_increase: float = FAIL_INCREASE, evidence: str = "certcal.audit") -> Check:
    """The check from finished β-ACE attacks ``(configuration, result)`` on the same points (e.g. the
    experiment's own ACE table): the configuration with the highest attacked ECE, its paired increase over the
    clean ECE with the BCa bootstrap interval of :meth:`ACEResult.ece_intervals`."""
    if not results:
        raise ValueError("results must hold at least one (configuration, ACEResult)")
    rows = [(name, res, res.ece_intervals(n_bins, n_boot=n_boot, seed=seed)) for name, res in results]
    name, res, d = max(rows, key=lambda r: r[2]["adv_ece"])
    inc, ci = float(d["diff_ece"]), d["diff_ece_ci"]
    n = int(res.labels.shape[0])
    norm = {"linf": "L∞", "l2": "L2"}[res.norm]
    rule = (f"ECE ({n_bins} bins) under the strongest β-ACE attack ({', '.join(r[0] for r in rows)}; PGD-{steps}, "
            f"{norm} ε = {eps:g}; paper 004 Eq. 2) minus the clean ECE on the same points: warn when its 95 % paired "
            f"interval lies above {warn_increase:g}, fail when moreover the increase exceeds {fail_increase:g}; pass "
            "otherwise")
    detail = (f"clean ECE {d['clean_ece']:.3f}, attacked {d['adv_ece']:.3f} ({name}); "
              + "; ".join(f"{nm}: {dd['adv_ece']:.3f}" for nm, _, dd in rows)
              + f"; accuracy {d['accuracy']:.3f} (predictions unchanged: {res.prediction_unchanged}); mean confidence "
              f"clean {res.clean_confidence.mean():.3f}, attacked {res.adv_confidence.mean():.3f}"
              + ("" if ci is not None else "; the BCa interval could not contain the estimate: no interval, pass"))
    status = _status(inc, ci, warn_increase, fail_increase)
    next_step = ("do not act on this model's confidences under attack (rejection, deferral, risk weighting): an "
                 "adversary moves them without changing a prediction; certify them (certcal.certified_calibration_"
                 "error) or train for it (certcal.adversarial_calibration_training)" if status != "pass"
                 else "none needed")
    return Check(CHECK_ID, "lenses", TITLE, status, rule, statistic=inc, interval=None if ci is None else tuple(ci),
                 n=n, evidence=evidence, next_step=next_step, detail=detail)


def calibration_under_attack_check(
    model: torch.nn.Module, x: torch.Tensor, y: Any, *, eps: float, norm: str = "Linf", steps: int = 20,
    configurations: Sequence[str] = tuple(ACE_CONFIGURATIONS), n_bins: int = 15, n_boot: int = 1000, seed: int = 0,
    warn_increase: float = WARN_INCREASE, fail_increase: float = FAIL_INCREASE, batch_size: int = 256,
    outputs: str = "logits",
    evidence: str = "certcal.audit",
) -> Check:
    """The ``calibration-under-attack`` check (group ``lenses``) of ``model`` on ``(x, y)``.

    ``x``: ``(N, C, H, W)`` images in [0, 1]; ``eps``: the radius in that pixel space (``norm`` ``"Linf"``, ``eps``
    in (0, 1], or ``"L2"``). Every β-ACE configuration of ``configurations`` (paper 004 §2.2, Eq. 2: lower or
    raise the confidence in the label or the prediction; PGD with ``steps`` steps, a step rejected and halved
    when it would change the prediction) attacks the points; the one with the highest attacked ECE (Eq. 1,
    ``n_bins`` equal-width bins) is the adversary's choice.

    Statistic: that attacked ECE minus the clean ECE on the same points, with the paired BCa bootstrap interval
    (``n_boot`` resamples, ``seed``; the choice of configuration is the adversary's and is not adjusted for).
    Rule: ``"warn"`` when the interval lies above ``warn_increase`` (0.02: calibration surely breaks by more than
    two points of ECE; ``warn_increase=0`` warns on any increase the interval resolves — with ~100 points almost
    every model, since the attack lowers every confidence a little), ``"fail"`` when moreover the increase exceeds
    ``fail_increase`` (0.10: ten points of ECE); ``"pass"`` otherwise. ``model`` comes back as it came.
    """
    if not isinstance(norm, str) or norm not in _NORMS:
        raise ValueError(f"norm must be one of ['Linf', 'L2'], got {norm!r}")
    norm = _NORMS[norm]
    eps = check_float("eps", eps, gt=0, le=1) if norm == "linf" else check_float("eps", eps, gt=0)
    steps = check_int("steps", steps, ge=1)
    configurations = tuple(configurations) if not isinstance(configurations, str) else (configurations,)
    if not configurations:
        raise ValueError("configurations must not be empty")
    for c in configurations:
        check_choice("configurations", c, tuple(ACE_CONFIGURATIONS))
    n_bins = check_int("n_bins", n_bins, ge=1)
    n_boot = check_int("n_boot", n_boot, ge=1)
    seed = check_int("seed", seed, ge=0)
    warn_increase = check_float("warn_increase", warn_increase, ge=0, lt=1)
    fail_increase = check_float("fail_increase", fail_increase, ge=0, lt=1)
    batch_size = check_int("batch_size", batch_size, ge=1)
    outputs = check_outputs(outputs)
    check_labelled_images(model, x, y)
    results = [(c, BetaACE.from_configuration(c, norm=norm, steps=steps, batch_size=batch_size,
                                              outputs=outputs)(model, x, y, eps)) for c in configurations]
    return check_from_results(results, eps=eps, steps=steps, n_bins=n_bins, n_boot=n_boot, seed=seed,
                              warn_increase=warn_increase, fail_increase=fail_increase, evidence=evidence)
