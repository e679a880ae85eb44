"""The audit's ``uncertainty-under-attack`` check: does the entropy still tell the model's errors from its correct
predictions when an adversary attacks the uncertainty itself (paper 001, §III-B, Eqs. 10-11)? One row of the
verdict's scorecard (:class:`robustsuite_common.verdict.Check`).

A model that "knows when it does not know" lets a user reject uncertain inputs. The paper shows that the
entropy can be driven down (over-confidence attack, Eq. 10) or up (under-confidence attack, Eq. 11) inside the
budget, even for adversarially trained models. The check measures the detection AUROC of misclassified inputs
by the entropy, clean and with each point attacked in the direction that hurts detection: misclassified points
made over-confident (their prediction kept: Eq. 10 maximises the predicted class), correctly classified points
made under-confident.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_float, check_images, check_int, check_labels
from robustsuite_common.intervals import bootstrap
from robustsuite_common.verdict import Check

from ._model import check_model, check_outputs, using
from ._validation import check_norm, check_seed
from .attacks import STRONGEST_UNDER_OBJECTIVES, OverConfidenceAttack, UnderConfidenceAttack
from .measures import entropy_from_logits
from .ood import BCA_MAX_SCORES, _auroc_batched, auroc_ci

__all__ = ["uncertainty_under_attack_check"]

CHECK_ID = "uncertainty-under-attack"
TITLE = "Uncertainty under attack (entropy detects misclassified inputs)"


def _auroc_drop(clean_in: np.ndarray, att_in: np.ndarray, clean_out: np.ndarray, att_out: np.ndarray, *, seed: int,
                n_boot: int):
    """``AUROC(clean) − AUROC(attacked)`` with a stratified paired bootstrap: correct (in) and misclassified (out)
    points resampled separately, each point with both of its scores."""
    def stat(i_in, i_out, axis=-1):
        i, j = i_in.astype(np.int64), i_out.astype(np.int64)
        return _auroc_batched(clean_in[i], clean_out[j]) - _auroc_batched(att_in[i], att_out[j])

    method = "BCa" if clean_in.size + clean_out.size <= BCA_MAX_SCORES else "percentile"
    return bootstrap((np.arange(clean_in.size, dtype=np.float64), np.arange(clean_out.size, dtype=np.float64)), stat,
                     seed=seed, n_resamples=n_boot, method=method, bounds=(-1.0, 1.0), paired=False)


def _status(attacked: Any, drop: Any) -> str:
    """The rule: ``fail`` when the attacked AUROC's interval lies at or below chance (upper bound <= 0.5), else
    ``warn`` when the paired drop's interval lies above 0, else ``pass``."""
    return "fail" if attacked.high <= 0.5 else "warn" if drop.low > 0 else "pass"


def uncertainty_under_attack_check(
    model: nn.Module, x: torch.Tensor, y: Any, *, eps: float, norm: str = "Linf", steps: int = 20, seed: int = 0,
    n_boot: int = 1000, batch_size: int = 256, outputs: str = "logits", evidence: str = "uncspan.audit",
) -> Check:
    """The ``uncertainty-under-attack`` check (group ``lenses``) of ``model`` on ``(x, y)``.

    ``x``: ``(N, C, H, W)`` images in [0, 1]; ``eps``: the radius in that pixel space (``norm`` ``"Linf"``,
    ``eps`` in (0, 1], or ``"L2"``). The detection task: flag the points the model misclassifies (clean), by the
    entropy of its prediction (higher = more likely wrong). Under attack every misclassified point gets the
    over-confidence attack (Eq. 10, PGD with ``steps`` steps, keeping the lowest entropy found) and every correct
    point the under-confidence attack (Eq. 11 and the entropy objective, keeping the highest entropy found: the
    package's strongest setting); the groups stay those of the clean predictions. This is the rejection threat the
    paper recalls in §II (Galil & El-Yaniv: raise the uncertainty of correctly classified points, lower that of
    misclassified ones, "depending on the model's prediction before the attack"), played with the paper's own
    attacks; departure: Galil & El-Yaniv keep every prediction, whereas the under-confidence attack may change some
    (their count is in ``detail``; they stay in the correct group, so at large budgets the AUROC under attack also
    reflects plain misclassification).

    Statistic: the detection AUROC under attack with its stratified bootstrap interval (``n_boot`` resamples).
    Rule: ``"fail"`` when that interval lies at or below chance (upper bound <= 0.5: under attack the entropy
    no longer tells errors from correct predictions); else ``"warn"`` when the paired drop from the clean AUROC
    has an interval above 0; else ``"pass"``. ``"not-applicable"`` with fewer than two correct or two
    misclassified points, or when the clean AUROC's interval already contains 0.5 (nothing to protect).
    ``model`` comes back as it came.
    """
    check_model("model", model)
    norm = check_norm(norm)
    eps = check_float("eps", eps, gt=0.0, le=1.0) if norm == "Linf" else check_float("eps", eps, gt=0.0)
    steps = check_int("steps", steps, ge=1)
    checked_seed = check_seed(seed)
    if checked_seed is None:
        raise ValueError("seed must be an integer >= 0 (randomness is explicit)")
    seed = checked_seed
    n_boot = check_int("n_boot", n_boot, ge=1)
    batch_size = check_int("batch_size", batch_size, ge=1)
    outputs = check_outputs(outputs)
    check_images("x", x)
    labels = torch.as_tensor(check_labels("y", y, length=x.shape[0]))
    kw: dict[str, Any] = dict(steps=steps, batch_size=batch_size, keep_adv=False)
    with using(model, outputs) as net:
        with torch.no_grad():
            k = int(net(x[:1]).shape[-1])  # the number of classes, before any attack
            check_labels("y", labels, n_classes=k)
            logits = torch.cat([net(x[i:i + batch_size]) for i in range(0, x.shape[0], batch_size)])
        h_clean = entropy_from_logits(logits.double()).cpu().numpy()
        correct = (logits.argmax(-1).cpu() == labels).numpy()
        n, n_wrong = int(correct.size), int((~correct).sum())
        rule = (f"detection AUROC of misclassified points by entropy, each point attacked (PGD-{steps}, {norm} "
                f"ε = {eps:g}) the way that hurts detection (paper 001 Eqs. 10-11): fail when its 95 % interval "
                "lies at or below 0.5 (chance); warn when the paired drop from the clean AUROC has an interval above "
                "0; pass otherwise")
        if min(n_wrong, n - n_wrong) < 2:
            return Check(CHECK_ID, "lenses", TITLE, "not-applicable", rule, n=n, evidence=evidence,
                         detail=f"{n - n_wrong} correct and {n_wrong} misclassified points: the AUROC needs at least "
                                "two of each")
        clean = auroc_ci(h_clean[correct], h_clean[~correct], seed=seed, n_boot=n_boot)
        if clean.low <= 0.5:
            return Check(CHECK_ID, "lenses", TITLE, "not-applicable", rule, statistic=clean.estimate,
                         interval=clean.ci, n=n, evidence=evidence,
                         detail=f"clean detection AUROC {clean.estimate:.3f} [{clean.low:.3f}, {clean.high:.3f}] "
                                "already contains chance: the entropy does not detect this model's errors")
        idx_c, idx_w = np.flatnonzero(correct), np.flatnonzero(~correct)
        under = UnderConfidenceAttack(objective=STRONGEST_UNDER_OBJECTIVES, **kw)(net, x[idx_c], eps, norm=norm,
                                                                                  seed=seed + 1)
        over = OverConfidenceAttack(**kw)(net, x[idx_w], eps, norm=norm, seed=seed)
    att_in, att_out = under.entropy_adv.astype(np.float64), over.entropy_adv.astype(np.float64)
    attacked = auroc_ci(att_in, att_out, seed=seed, n_boot=n_boot)
    drop = _auroc_drop(h_clean[correct], att_in, h_clean[~correct], att_out, seed=seed, n_boot=n_boot)
    status = _status(attacked, drop)
    flipped = int((under.pred_adv != labels[idx_c].numpy()).sum())
    detail = (f"detection AUROC clean {clean.estimate:.3f} [{clean.low:.3f}, {clean.high:.3f}], under attack "
              f"{attacked.estimate:.3f} [{attacked.low:.3f}, {attacked.high:.3f}]; paired drop {drop.estimate:.3f} "
              f"[{drop.low:.3f}, {drop.high:.3f}]; {n - n_wrong} correct points made under-confident ({flipped} of "
              f"them also changed prediction, still counted as correct), {n_wrong} misclassified made over-confident; "
              f"mean entropy (nats) correct {h_clean[correct].mean():.3f} -> {att_in.mean():.3f}, misclassified "
              f"{h_clean[~correct].mean():.3f} -> {att_out.mean():.3f}")
    next_step = ("do not rely on the entropy to reject this model's errors under attack: an adversary inside the "
                 "budget makes errors look certain and correct predictions uncertain (uncspan.uncertainty_span "
                 "measures how far)" if status != "pass" else "none needed")
    return Check(CHECK_ID, "lenses", TITLE, status, rule, statistic=attacked.estimate, interval=attacked.ci, n=n,
                 evidence=evidence, next_step=next_step, detail=detail)
