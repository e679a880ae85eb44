"""URejectron (Goldwasser et al., 2020) in its basic form (T = 1 iteration), paper Example 3 and A.6.

The classifier F is fixed (trained on P). On receiving the test set x̃ (U'), a discriminator h is trained
to separate the training distribution P (label 0) from x̃ (label 1); the acceptance set is
S = {x : h(x)_1 < threshold}, and F|_S answers ⊥ outside S. The referee scores Eq. 1: the error on
accepted perturbed points err_{U'}(F|_S) and the rejection rate of the clean batch rej_U(S).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from robustsuite_common.checks import check_images, check_int
from robustsuite_common.contract import renamed

from ._validate import check_generator, check_labels, check_positive, logits_model
from .networks import SmallCNN, image_factory
from .threat_model import Adaptation, TransductiveDefense

__all__ = ["URejectron", "RejectionCurve", "rejection_curve", "perturbed_rejection_curve"]


class URejectron(TransductiveDefense):
    """URejectron as a stateless, rejecting Γ over a fixed classifier ``model`` (F).

    ``make_discriminator(generator)`` builds h (two logits; default a :class:`SmallCNN` without
    BatchNorm). Minibatches are balanced between D and x̃ (x̃ is resampled with replacement), as the
    training set is much larger than a test batch.

    Paper: the defense of Figure 1 (transductive selective classification).
    """

    rejects = True
    name = "URejectron"

    @renamed(classifier="model")
    def __init__(self, model: nn.Module, train_x: torch.Tensor, *,
                 make_discriminator: Callable[[torch.Generator], nn.Module] | None = None, epochs: int = 10,
                 lr: float = 1e-3, batch_size: int = 128, threshold: float = 0.5) -> None:
        model = logits_model("model", model)
        check_images("train_x", train_x)
        self.train_x = train_x
        self.epochs = check_int("epochs", epochs, ge=1)
        self.lr = check_positive("lr", lr)
        self.batch_size = check_int("batch_size", batch_size, ge=1)
        if not 0.0 < threshold < 1.0:
            raise ValueError(f"threshold must be in (0, 1), got {threshold!r}")
        self.threshold = float(threshold)
        self._base = model
        if make_discriminator is None:  # h: two logits, no BatchNorm
            make_discriminator = image_factory(SmallCNN, train_x, n_classes=2, batch_norm=False)
        self.make_discriminator = make_discriminator

    def adapt(self, x: torch.Tensor, *, state: Any, generator: torch.Generator) -> Adaptation:
        check_images("x", x)
        check_generator(generator)
        h = self.make_discriminator(generator)
        dev = next(h.parameters()).device
        xp, xq = self.train_x.to(dev), x.detach().to(dev)
        opt = torch.optim.Adam(h.parameters(), lr=self.lr)
        half = max(1, self.batch_size // 2)
        n = xp.shape[0]
        for _ in range(self.epochs):
            order = torch.randperm(n, generator=generator, device=generator.device).to(dev)
            for i in range(0, n, half):
                b = order[i:i + half]
                t = torch.randint(0, xq.shape[0], (b.shape[0],), generator=generator,
                                  device=generator.device).to(dev)
                labels = torch.cat([torch.zeros(b.shape[0]), torch.ones(b.shape[0])]).long().to(dev)
                h.train()
                opt.zero_grad(set_to_none=True)
                F.cross_entropy(h(torch.cat([xp[b], xq[t]])), labels).backward()
                opt.step()
        h.eval()
        log_threshold = math.log(self.threshold)

        def scorer(inputs: torch.Tensor) -> torch.Tensor:
            """log P(test | x) under the discriminator h."""
            with torch.no_grad():
                return F.log_softmax(h(inputs.to(dev)), dim=1)[:, 1]

        def acceptor(inputs: torch.Tensor) -> torch.Tensor:
            return scorer(inputs) < log_threshold

        return Adaptation(model=self._base, acceptor=acceptor, scorer=scorer)


@dataclass(frozen=True)
class RejectionCurve:
    """Eq. 1 against the rejection threshold τ (the paper's Figure 1): for each τ, the error on accepted
    perturbed points err_{U'}(F|_S) and the rejection rate of the clean points rej_U(S), with 95 %
    Clopper-Pearson intervals (both are counts over n points).

    Per sample, indexed like the test stream: ``predictions`` (F*(x') of the round's classifier),
    ``adv_log_p_test`` / ``clean_log_p_test`` (the discriminator's log P(test | ·) on x' and on x). x' is accepted
    at τ when ``adv_log_p_test < log τ``; x is rejected when ``clean_log_p_test >= log τ``."""

    attack: str
    thresholds: tuple[float, ...]
    error_accepted: tuple[float, ...]
    error_ci: tuple[tuple[float, float], ...]
    rejection_rate: tuple[float, ...]
    rejection_ci: tuple[tuple[float, float], ...]
    n: int
    predictions: tuple[int, ...] = ()
    adv_log_p_test: tuple[float, ...] = ()
    clean_log_p_test: tuple[float, ...] = ()
    labels: tuple[int, ...] = ()

    def errors_at(self, tau: float) -> np.ndarray:
        """Per point (test-stream order): 1.0 where the perturbed point is accepted at ``tau`` and misclassified
        (the summands of err_{U'}(F|_S), Eq. 1), else 0.0."""
        if not self.labels:
            raise ValueError("this curve carries no labels (made by an older version): errors_at needs them")
        pred, lab, adv = (np.asarray(v) for v in (self.predictions, self.labels, self.adv_log_p_test))
        return ((pred != lab) & (adv < math.log(float(tau)))).astype(np.float64)

    def rejected_at(self, tau: float, *, perturbed: bool = True) -> np.ndarray:
        """Per point (test-stream order): 1.0 where the discriminator rejects the perturbed point x' (or, with
        ``perturbed=False``, the clean x) at ``tau`` (log P(test | ·) >= log τ), else 0.0: the summands of a
        rejection rate (rej_U(S) of Eq. 1 on the clean points)."""
        scores = np.asarray(self.adv_log_p_test if perturbed else self.clean_log_p_test)
        return (scores >= math.log(float(tau))).astype(np.float64)

    def to_dict(self) -> dict[str, Any]:
        return {"attack": self.attack, "n": self.n, "thresholds": list(self.thresholds),
                "error_accepted": list(self.error_accepted), "error_ci": [list(c) for c in self.error_ci],
                "rejection_rate": list(self.rejection_rate), "rejection_ci": [list(c) for c in self.rejection_ci],
                "predictions": list(self.predictions), "adv_log_p_test": list(self.adv_log_p_test),
                "clean_log_p_test": list(self.clean_log_p_test), "labels": list(self.labels)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RejectionCurve:
        """The inverse of :meth:`to_dict` (e.g. to resume from a checkpointed curve)."""
        return cls(attack=d["attack"], thresholds=tuple(float(t) for t in d["thresholds"]),
                   error_accepted=tuple(d["error_accepted"]), error_ci=tuple(tuple(c) for c in d["error_ci"]),
                   rejection_rate=tuple(d["rejection_rate"]), rejection_ci=tuple(tuple(c) for c in d["rejection_ci"]),
                   n=int(d["n"]), predictions=tuple(int(v) for v in d["predictions"]),
                   adv_log_p_test=tuple(float(v) for v in d["adv_log_p_test"]),
                   clean_log_p_test=tuple(float(v) for v in d["clean_log_p_test"]),
                   labels=tuple(int(v) for v in d.get("labels", ())))


def rejection_curve(attack: Any, defense: URejectron, x: torch.Tensor, y: torch.Tensor, *, eps: float,
                    thresholds: Sequence[float], batch_size: int | None = None, seed: int = 0) -> RejectionCurve:
    """Play ``attack`` against ``defense`` (one round per ``batch_size`` points, all points by default) and sweep
    URejectron's threshold τ over the discriminators it trained: the τ sweep of Figure 1. The attack (GMSA
    included) simulates Γ with the defense's own threshold; the sweep then re-reads the same discriminators."""
    from .game import play_game

    taus = _check_sweep(defense, thresholds)
    records: list = []
    play_game(attack, defense, x, y, eps=eps, batch_size=x.shape[0] if batch_size is None else batch_size,
              seed=seed, observer=records.append)
    s_adv, s_clean, preds, order, labels = [], [], [], [], []
    for r in records:
        with torch.no_grad():
            pred = r.adaptation.model(r.x_adv).argmax(1)
        preds.append(pred.cpu())
        s_adv.append(r.adaptation.scorer(r.x_adv).cpu())
        s_clean.append(r.adaptation.scorer(r.x_clean).cpu())
        order.append(r.indices.cpu())
        labels.append(r.y.cpu())
    inv = torch.empty(sum(int(o.shape[0]) for o in order), dtype=torch.int64)  # back to the test stream's order
    inv[torch.cat(order)] = torch.arange(inv.shape[0])
    return _curve(getattr(attack, "name", type(attack).__name__), taus, torch.cat(preds)[inv], torch.cat(labels)[inv],
                  torch.cat(s_adv)[inv], torch.cat(s_clean)[inv])


def _curve(name: str, taus: list[float], pred: torch.Tensor, labels: torch.Tensor, adv_t: torch.Tensor,
           clean_t: torch.Tensor) -> RejectionCurve:
    """The :class:`RejectionCurve` of per-point predictions on x', labels and discriminator scores (stream order)."""
    from robustsuite_common.intervals import proportion

    wrong_t = pred.ne(labels)
    n = int(wrong_t.shape[0])
    err, err_ci, rej, rej_ci = [], [], [], []
    for t in taus:
        log_t = math.log(t)
        k_err = int((wrong_t & (adv_t < log_t)).sum())
        k_rej = int((clean_t >= log_t).sum())
        err.append(k_err / n)
        err_ci.append(proportion(k_err, n).ci)
        rej.append(k_rej / n)
        rej_ci.append(proportion(k_rej, n).ci)
    return RejectionCurve(attack=name, thresholds=tuple(taus), error_accepted=tuple(err), error_ci=tuple(err_ci),
                          rejection_rate=tuple(rej), rejection_ci=tuple(rej_ci), n=n,
                          predictions=tuple(int(v) for v in pred.tolist()),
                          adv_log_p_test=tuple(float(v) for v in adv_t.double().tolist()),
                          clean_log_p_test=tuple(float(v) for v in clean_t.double().tolist()),
                          labels=tuple(int(v) for v in labels.tolist()))


def _check_sweep(defense: Any, thresholds: Sequence[float]) -> list[float]:
    if not isinstance(defense, URejectron):
        raise TypeError(f"defense must be a URejectron, got {type(defense).__name__}")
    taus = [float(t) for t in thresholds]
    if not taus or not all(0.0 < t < 1.0 for t in taus):
        raise ValueError(f"thresholds must be a non-empty sequence of values in (0, 1), got {thresholds!r}")
    return taus


def perturbed_rejection_curve(perturb: Callable[[torch.Tensor, torch.Tensor, torch.Generator], torch.Tensor],
                              defense: URejectron, x: torch.Tensor, y: torch.Tensor, *, thresholds: Sequence[float],
                              name: str, seed: int = 0) -> RejectionCurve:
    """The τ sweep of Figure 1(b, c) for a perturbation outside the L∞ game: ``perturb(x, y, generator)`` (e.g.
    :func:`~transduct_attack.perturbations.cw_l2` on the fixed classifier, or a corruption) makes x' of all the
    points in one batch, URejectron trains its discriminator on x' (with private randomness drawn from ``seed`` as
    :func:`~transduct_attack.game.play_game` draws the first round's) and the sweep reads it on x' and on x.

    Paper: Figure 1(b) (CW adversarial examples) and 1(c) (corrupted "normal" examples), appendix A.6."""
    from .game import _generator

    taus = _check_sweep(defense, thresholds)
    check_images("x", x)
    y = check_labels("y", y, x.shape[0], device=x.device, model=defense.base_model, x=x)
    if not callable(perturb):
        raise TypeError("perturb must be callable (x, y, generator) -> x'")
    x = x.detach()
    attacker_seeds, defender_seeds = np.random.SeedSequence(check_int("seed", seed, ge=0)).spawn(2)
    x_adv = perturb(x, y, _generator(attacker_seeds.spawn(1)[0], x.device)).detach()
    if x_adv.shape != x.shape or float(x_adv.min()) < 0.0 or float(x_adv.max()) > 1.0:
        raise ValueError(f"perturb must return images of shape {tuple(x.shape)} in [0, 1]")
    adaptation = defense.adapt(x_adv, state=None, generator=_generator(defender_seeds.spawn(1)[0], x.device))
    scorer = adaptation.scorer
    if scorer is None:  # URejectron always scores
        raise RuntimeError("URejectron's adaptation carries no scorer")
    with torch.no_grad():
        pred = adaptation.model(x_adv).argmax(1)
    return _curve(name, taus, pred.cpu(), y.cpu(), scorer(x_adv).cpu(), scorer(x).cpu())
