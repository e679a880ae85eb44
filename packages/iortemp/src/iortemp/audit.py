"""The audit's ``temperature-illusion`` check: the IOR detector (Fig. 1, §4) applied to a user's vision model as
served, as one row of the verdict's scorecard (:class:`robustsuite_common.verdict.Check`).

The paper (000, §3-4) shows that extreme confidence saturates the softmax and hides the gradient an
out-of-the-box attack follows, so the model *looks* robust; an adversary that rescales the logits by a
temperature before attacking (``cal``: the NLL-calibrated T, Eq. 9; ``opt``: the T minimising adversarial
accuracy, Eqs. 10-11) and scores the adversarial inputs on the served model recovers the attack. The check
attacks the same points plainly and at the adversary's best temperature and compares the outcomes per point
(McNemar, paired bootstrap interval).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import (
    check_choice,
    check_float,
    check_images,
    check_int,
    check_labels,
    check_seed,
)
from robustsuite_common.intervals import mcnemar
from robustsuite_common.models import as_model_input, evaluating, logits_from
from robustsuite_common.verdict import Check

from .attacks import AttackOutput, PGDLinf
from .calibration import fit_temperature
from .optimize import optimize_temperature
from .protocol import evaluate_attack
from .temperature import _device_of, logits64

__all__ = ["NORMS", "temperature_illusion_check"]

NORMS = ("Linf", "L2")
CHECK_ID = "temperature-illusion"


class _PGDL2:
    """L2 projected gradient descent (Madry et al., 2018) on the victim's cross-entropy, for ``norm="L2"``:
    the same call contract as :class:`~iortemp.PGDLinf` (normalised-gradient steps of ``2.5 eps / steps``,
    projection on the L2 ball of radius ``eps`` and the [0, 1] box). No random start (deterministic)."""

    stochastic = False

    def __init__(self, *, eps: float, steps: int, batch_size: int = 512):
        self.eps = check_float("eps", eps, gt=0.0)
        self.steps = check_int("steps", steps, ge=1)
        self.alpha = 2.5 * self.eps / self.steps
        self.batch_size = check_int("batch_size", batch_size, ge=1)

    @property
    def name(self) -> str:
        return f"PGD-{self.steps} (L2 {self.eps:g})"

    def __call__(self, victim: nn.Module, x: torch.Tensor, y, *, seed: int = 0, progress: bool = False) -> AttackOutput:
        y = torch.as_tensor(check_labels("labels", y, length=x.shape[0]), dtype=torch.long)
        device = _device_of(victim)
        advs, succ, skip = [], [], []
        with evaluating(victim, freeze_parameters=True):
            for a in range(0, x.shape[0], self.batch_size):
                xb = as_model_input(victim, x[a : a + self.batch_size])
                yb = y[a : a + self.batch_size].to(device)
                with torch.no_grad():
                    clean_wrong = logits_from(victim(xb), n=xb.shape[0]).argmax(1) != yb
                xa = xb.clone()
                for _ in range(self.steps):
                    xa = xa.detach().requires_grad_(True)
                    loss = nn.functional.cross_entropy(logits_from(victim(xa), n=xa.shape[0]), yb)
                    (g,) = torch.autograd.grad(loss, xa)
                    norm = g.flatten(1).norm(dim=1).clamp_min(1e-12).view(-1, 1, 1, 1)
                    d = xa.detach() + self.alpha * g / norm - xb
                    scale = (self.eps / d.flatten(1).norm(dim=1).clamp_min(1e-12)).clamp(max=1.0)
                    xa = (xb + d * scale.view(-1, 1, 1, 1)).clamp(0, 1)
                xa = torch.where(clean_wrong.view(-1, 1, 1, 1), xb, xa.detach())
                with torch.no_grad():
                    s = logits_from(victim(xa), n=xa.shape[0]).argmax(1) != yb
                advs.append(xa.to(x.device, x.dtype))
                succ.append((s & ~clean_wrong).cpu().numpy())
                skip.append(clean_wrong.cpu().numpy())
        return AttackOutput(torch.cat(advs), np.concatenate(succ), np.concatenate(skip),
                            np.zeros(x.shape[0], dtype=np.int64))


def _one_sided_mcnemar(only_plain: int, only_best: int) -> float:
    """Exact one-sided McNemar p-value of "the plain attack leaves more points robust than the best temperature"
    (binomial test on the discordant pairs)."""
    from scipy.stats import binomtest

    if only_plain + only_best == 0:
        return 1.0
    return float(min(1.0, binomtest(only_plain, only_plain + only_best, 0.5, alternative="greater").pvalue))


def temperature_illusion_check(
    model: nn.Module, x: torch.Tensor, y: Any, *, eps: float, norm: str = "Linf", steps: int = 10,
    max_evaluations: int = 4, threshold: float = 0.05, confidence_limit: float = 0.99, seed: int = 0,
    val_inputs: torch.Tensor | None = None, val_labels: Any = None, batch_size: int = 256,
    evidence: str = "iortemp.temperature_illusion_check",
) -> Check:
    """The ``temperature-illusion`` check (group ``attack-strength``) of ``model`` as served, on ``(x, y)``.

    ``x``: ``(N, C, H, W)`` images in [0, 1]; ``eps``: the radius in that pixel space (``norm`` ``"Linf"``,
    ``eps`` in (0, 1], or ``"L2"``). PGD with ``steps`` steps (random start for L∞, the same seed at every
    temperature) attacks ``model`` *plain* (T = 1), at the NLL-calibrated temperature (*cal*, paper 000 §4.1,
    Eq. 9) and at the temperature a Brent search finds to minimise adversarial accuracy (*opt*, §4.2,
    Eqs. 10-11; ``max_evaluations`` attack runs); the adversarial inputs are always scored on ``model``.
    Both temperatures are fitted on ``(val_inputs, val_labels)``, by default on ``(x, y)`` themselves (the
    paper uses a validation split; the user's points are all the audit has: the adversary may use them).

    Statistic: robust accuracy under the plain attack minus robust accuracy under the best of cal/opt, on the
    same points (paired bootstrap interval, McNemar's exact one-sided p-value). Rule: ``p_value`` with
    ``status_if_significant`` ``"fail"`` when the drop exceeds ``threshold`` (the paper's 5 points), ``"warn"``
    otherwise; the status without a significant p-value is ``"warn"`` when the mean clean confidence exceeds
    ``confidence_limit`` (extreme confidence, §3: the condition that hides gradients), ``"pass"`` otherwise;
    ``"not-applicable"`` when no point is classified correctly. The status becomes final once the p-values of
    all checks are adjusted together (:func:`robustsuite_common.verdict.apply_fdr`; alone: the raw p-value).
    ``model`` comes back as it came (mode, buffers, ``requires_grad``).
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module taking images in [0, 1], got {type(model).__name__}")
    norm = check_choice("norm", norm, NORMS)
    eps = check_float("eps", eps, gt=0.0, le=1.0) if norm == "Linf" else check_float("eps", eps, gt=0.0)
    steps = check_int("steps", steps, ge=1)
    max_evaluations = check_int("max_evaluations", max_evaluations, ge=1)
    threshold = check_float("threshold", threshold, ge=0.0, lt=1.0)
    confidence_limit = check_float("confidence_limit", confidence_limit, gt=0.0, lt=1.0)
    seed = check_seed("seed", seed)
    batch_size = check_int("batch_size", batch_size, ge=1)
    check_images("x", x)
    labels = check_labels("y", y, length=x.shape[0])
    if (val_inputs is None) != (val_labels is None):
        raise ValueError("val_inputs and val_labels must be given together (or neither: x and y are used)")
    if val_inputs is None:
        xv, yv = x, labels
    else:
        xv = check_images("val_inputs", val_inputs)
        yv = check_labels("val_labels", val_labels, length=val_inputs.shape[0])
    k = logits64(model, x[:1]).shape[1]  # one input: the number of classes, before any attack
    check_labels("y", labels, n_classes=k)
    check_labels("val_labels", yv, n_classes=k)

    attack = (PGDLinf(eps=eps, steps=steps, batch_size=batch_size) if norm == "Linf"
              else _PGDL2(eps=eps, steps=steps, batch_size=batch_size))
    plain = evaluate_attack(model, x, labels, attack, seed=seed)
    n = plain.n
    if not any(plain.correct_clean):
        return Check(CHECK_ID, "attack-strength", "Temperature illusion (extreme confidence hiding gradients)",
                     "not-applicable", "no point is classified correctly: there is nothing to attack", n=n,
                     evidence=evidence, detail=f"clean accuracy 0 on {n} points")
    fit = fit_temperature(logits64(model, xv, batch_size=batch_size), yv)
    cal = evaluate_attack(model, x, labels, attack, temperature=fit.temperature, seed=seed)
    search = optimize_temperature(model, xv, yv, attack, init_temperature=fit.temperature,
                                  max_evaluations=max_evaluations, seed=seed)
    opt = (cal if search.temperature == fit.temperature
           else evaluate_attack(model, x, labels, attack, temperature=search.temperature, seed=seed))
    best_mode, best = ("opt", opt) if opt.adversarial_accuracy < cal.adversarial_accuracy else ("cal", cal)
    test = mcnemar(plain.correct_adversarial, best.correct_adversarial, seed=seed)
    p = _one_sided_mcnemar(test.only_a, test.only_b)
    drop = plain.adversarial_accuracy - best.adversarial_accuracy
    confidence = plain.clean_confidence.mean
    extreme = confidence > confidence_limit
    rule = (f"robust accuracy (PGD-{steps}, {norm} ε = {eps:g}) plain minus at the adversary's best temperature "
            f"(cal/opt, paper 000 Eqs. 9-11) on the same points: fail when McNemar's one-sided p (adjusted) < 0.05 "
            f"and the drop exceeds {threshold:g}; warn when it is significant but at most {threshold:g}, or when "
            f"the mean clean confidence exceeds {confidence_limit:g} (extreme confidence); pass otherwise")
    detail = (f"robust accuracy plain {plain.adversarial_accuracy:.3f}, cal (T = {fit.temperature:.3g}) "
              f"{cal.adversarial_accuracy:.3f}, opt (T = {search.temperature:.3g}) {opt.adversarial_accuracy:.3f}; "
              f"best: {best_mode}; points robust only plain {test.only_a}, only at the best temperature "
              f"{test.only_b}; clean accuracy {plain.clean_accuracy:.3f}, mean clean confidence {confidence:.6f}"
              + ("; the calibration points are all classified correctly: T_cal is bounded" if fit.separable else ""))
    next_step = ("the model's robustness is an illusion of the attack: evaluate with the temperature-rescaled "
                 f"attack (T = {(search.temperature if best_mode == 'opt' else fit.temperature):.3g}, "
                 "iortemp.detect_ior) or with AutoAttack, whose DLR loss does not saturate"
                 if drop > 0 else
                 "none needed" if not extreme else
                 "confidence is extreme: confirm with an attack that does not rely on the cross-entropy's gradient "
                 "(AutoAttack's DLR loss, a temperature-rescaled attack)")
    return Check(CHECK_ID, "attack-strength", "Temperature illusion (extreme confidence hiding gradients)",
                 "warn" if extreme else "pass", rule, statistic=float(drop),
                 interval=(test.difference.low, test.difference.high), n=n, evidence=evidence, next_step=next_step,
                 p_value=p, status_if_significant="fail" if drop > threshold else "warn", detail=detail)
