"""Over- and under-confidence attacks (paper §III-B, Eqs. 9–11) and the misclassification attack used for
robust accuracy.

* :class:`OverConfidenceAttack` — the Stabilizing Attack (STAB, Ledda et al. 2023): minimise the
  cross-entropy to the one-hot vector of the clean prediction ŷ (Eq. 10), i.e. maximise ``f_ŷ``.
* :class:`UnderConfidenceAttack` — minimise the cross-entropy to the uniform vector (Eq. 11).

Both run PGD (Madry et al.) under an L∞ or L2 budget with 150 steps by default (§V-A) and keep, per
sample, the iterate with the lowest (over) or highest (under) entropy seen — the clean input included —
rather than the last one. ``optimizer="apgd"`` switches to an APGD-style adaptive step with momentum
(Croce & Hein 2020), which is not in the paper and reaches further with few steps.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from . import _optim
from ._validation import (
    OPTIMIZERS,
    check_choice,
    check_eps,
    check_images,
    check_model,
    check_norm,
    check_positive_int,
    check_seed,
)
from .measures import entropy_from_logits

__all__ = [
    "AttackResult",
    "UncertaintyAttack",
    "OverConfidenceAttack",
    "UnderConfidenceAttack",
    "MisclassificationAttack",
]


@dataclass(frozen=True)
class AttackResult:
    """Outcome of an attack on N inputs.

    ``x_adv`` — best iterate per sample (same device/dtype as the input); ``entropy_clean`` /
    ``entropy_adv`` — entropies (nats) before and after; ``loss`` — attack objective at ``x_adv``
    (Eq. 10/11, or negative cross-entropy for the misclassification attack); ``best_step`` — iteration
    at which the kept iterate was found (0 = clean input, 1 = start point); ``pred_clean`` /
    ``pred_adv`` — argmax labels; ``conf_clean`` / ``conf_adv`` — maximum softmax probabilities.
    """

    goal: str
    norm: str
    eps: float | list[float]
    optimizer: str
    steps: int
    x_adv: torch.Tensor
    entropy_clean: np.ndarray
    entropy_adv: np.ndarray
    loss: np.ndarray
    best_step: np.ndarray
    pred_clean: np.ndarray
    pred_adv: np.ndarray
    conf_clean: np.ndarray
    conf_adv: np.ndarray

    def to_dict(self) -> dict:
        """JSON-safe summary with the per-sample arrays (the adversarial inputs are left out)."""
        return {
            "goal": self.goal,
            "norm": self.norm,
            "eps": self.eps,
            "optimizer": self.optimizer,
            "steps": self.steps,
            "mean_entropy_clean": float(self.entropy_clean.mean()),
            "mean_entropy_adv": float(self.entropy_adv.mean()),
            "entropy_clean": self.entropy_clean.tolist(),
            "entropy_adv": self.entropy_adv.tolist(),
            "loss": self.loss.tolist(),
            "best_step": self.best_step.tolist(),
            "pred_clean": self.pred_clean.tolist(),
            "pred_adv": self.pred_adv.tolist(),
            "conf_clean": self.conf_clean.tolist(),
            "conf_adv": self.conf_adv.tolist(),
        }


def _model_device(model: nn.Module, fallback: torch.device) -> torch.device:
    for p in model.parameters():
        return p.device
    for b in model.buffers():
        return b.device
    return fallback


class UncertaintyAttack:
    """Base class: projected first-order attack on an uncertainty objective.

    Keyword-only hyper-parameters: ``steps`` (150, §V-A); ``step_size`` (absolute step; default
    ``2.5·eps/steps`` for PGD — Madry et al.'s rule, since the paper does not state one — and
    ``2·eps`` as the initial APGD step); ``random_start`` (uniform start in the ball, drawn from
    ``seed``); ``optimizer`` (``"pgd"`` or ``"apgd"``); ``momentum`` (APGD's α, 0.75);
    ``batch_size`` (inputs attacked at once); ``progress`` (tqdm bar over batches).
    """

    goal: ClassVar[str] = ""
    requires_labels: ClassVar[bool] = False

    def __init__(
        self,
        *,
        steps: int = 150,
        step_size: float | None = None,
        random_start: bool = False,
        optimizer: str = "pgd",
        momentum: float = 0.75,
        batch_size: int = 256,
        progress: bool = False,
    ) -> None:
        self.steps = check_positive_int(steps, "steps", minimum=0)
        if step_size is not None:
            step_size = float(step_size)
            if not step_size > 0:
                raise ValueError(f"step_size must be a float > 0 or None; got {step_size!r}")
        self.step_size = step_size
        self.random_start = bool(random_start)
        self.optimizer = check_choice(optimizer, "optimizer", OPTIMIZERS)
        if not 0.0 < float(momentum) <= 1.0:
            raise ValueError(f"momentum must be in (0, 1]; got {momentum!r}")
        self.momentum = float(momentum)
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.progress = bool(progress)

    # --- objective hooks -------------------------------------------------------------------------
    def _targets(self, logits: torch.Tensor, y: torch.Tensor | None) -> torch.Tensor | None:
        return None

    def _loss(self, logits: torch.Tensor, target: torch.Tensor | None) -> torch.Tensor:
        raise NotImplementedError

    def _score(self, logits: torch.Tensor, target: torch.Tensor | None) -> torch.Tensor:
        raise NotImplementedError

    # --- call ------------------------------------------------------------------------------------
    def __call__(
        self,
        model: nn.Module,
        x: torch.Tensor,
        eps: float | torch.Tensor,
        *,
        norm: str = "Linf",
        seed: int | None = None,
        y: torch.Tensor | None = None,
    ) -> AttackResult:
        """Attack ``x`` (N, C, H, W) in [0, 1] with budget ``eps`` (scalar or per-sample (N,)) under ``norm``.

        ``seed`` drives the random start (a private ``torch.Generator``; global RNG untouched). The input
        tensor is not modified.
        """
        check_model(model)
        check_images(x)
        norm = check_norm(norm)
        eps_checked = check_eps(eps, n=x.shape[0])
        seed = check_seed(seed)
        if self.random_start and seed is None:
            raise ValueError("seed must be given when random_start=True (randomness is explicit)")
        y = self._check_labels(y, x.shape[0])
        if self.requires_labels and y is None:
            raise ValueError(f"{type(self).__name__} needs the true labels: pass y= (integer tensor (N,))")
        if model.training:
            warnings.warn(
                "model is in training mode: dropout/batch-norm make the attacked function stochastic or "
                "batch-dependent; call model.eval() first unless this is intended",
                RuntimeWarning,
                stacklevel=2,
            )

        device = _model_device(model, x.device)
        xd = x.detach().to(device)
        n = xd.shape[0]
        eps_all = (
            torch.full((n,), eps_checked, dtype=xd.dtype, device=device)
            if isinstance(eps_checked, float)
            else eps_checked.to(device=device, dtype=xd.dtype)
        )
        gen = None
        if self.random_start:
            gen = torch.Generator(device=device)
            gen.manual_seed(seed)

        shape = (-1,) + (1,) * (xd.dim() - 1)
        # random starts drawn once for all inputs, so the result does not depend on batch_size
        start_all = _optim.random_start(xd, eps_all.view(shape), norm, gen) if gen is not None else xd
        outs = []
        starts = range(0, n, self.batch_size)
        for i in tqdm(starts, disable=not self.progress, desc=f"{self.goal} attack"):
            xb = xd[i : i + self.batch_size]
            eb = eps_all[i : i + self.batch_size].view(shape)
            with torch.no_grad():
                target = self._targets(model(xb), None if y is None else y[i : i + self.batch_size].to(device))
            if self.step_size is not None:
                sb = torch.full_like(eb, self.step_size)
            elif self.optimizer == "pgd":
                sb = 2.5 * eb / max(self.steps, 1)
            else:
                sb = None
            start = start_all[i : i + self.batch_size]
            outs.append(
                _optim.minimise(
                    model,
                    xb,
                    eb,
                    norm=norm,
                    loss_fn=lambda z, t=target: self._loss(z, t),
                    score_fn=lambda z, t=target: self._score(z, t),
                    steps=self.steps,
                    step_size=sb,
                    optimizer=self.optimizer,
                    momentum=self.momentum,
                    start=start,
                )
            )
        x_adv = torch.cat([o.x_best for o in outs])
        with torch.no_grad():
            lc = torch.cat([model(xd[i : i + self.batch_size]) for i in starts]).double()
            la = torch.cat([model(x_adv[i : i + self.batch_size]) for i in starts]).double()
        pc, pa = F.softmax(lc, -1), F.softmax(la, -1)
        return AttackResult(
            goal=self.goal,
            norm=norm,
            eps=eps_checked if isinstance(eps_checked, float) else eps_checked.tolist(),
            optimizer=self.optimizer,
            steps=self.steps,
            x_adv=x_adv.to(x.device),
            entropy_clean=entropy_from_logits(lc).cpu().numpy(),
            entropy_adv=entropy_from_logits(la).cpu().numpy(),
            loss=torch.cat([o.loss_best for o in outs]).double().cpu().numpy(),
            best_step=torch.cat([o.step_best for o in outs]).cpu().numpy(),
            pred_clean=lc.argmax(-1).cpu().numpy(),
            pred_adv=la.argmax(-1).cpu().numpy(),
            conf_clean=pc.max(-1).values.cpu().numpy(),
            conf_adv=pa.max(-1).values.cpu().numpy(),
        )

    def _check_labels(self, y: torch.Tensor | None, n: int) -> torch.Tensor | None:
        if y is None:
            return None
        if not isinstance(y, torch.Tensor) or y.dtype not in (torch.int64, torch.int32) or y.shape != (n,):
            raise TypeError(f"y must be an integer tensor of shape ({n},)")
        return y.long()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(steps={self.steps}, step_size={self.step_size}, "
            f"random_start={self.random_start}, optimizer={self.optimizer!r})"
        )


class OverConfidenceAttack(UncertaintyAttack):
    """Over-confidence attack = Stabilizing Attack (STAB): ``min_δ −log f_ŷ(x+δ)`` with ŷ the clean
    prediction (Eq. 10). The kept iterate is the one with the lowest entropy."""

    goal = "over"

    def _targets(self, logits, y):
        return logits.argmax(-1)

    def _loss(self, logits, target):
        return -F.log_softmax(logits, -1).gather(1, target[:, None]).squeeze(1)

    def _score(self, logits, target):
        return entropy_from_logits(logits)


class UnderConfidenceAttack(UncertaintyAttack):
    """Under-confidence attack: ``min_δ −(1/c) Σ_k log f_k(x+δ)``, the cross-entropy to the uniform vector
    (Eq. 11). The kept iterate is the one with the highest entropy."""

    goal = "under"
    OBJECTIVES: ClassVar[tuple[str, ...]] = ("cross_entropy", "entropy")

    def __init__(self, *, objective: str = "cross_entropy", **kwargs) -> None:
        """``objective="cross_entropy"`` is the paper's Eq. 11. ``"entropy"`` (not in the paper) minimises
        ``−H(f(x+δ))`` directly: Eq. 11 averages ``−log f_k`` over all classes, so with many classes it is
        dominated by the smallest probabilities and its optimum is not the entropy maximum; the direct
        objective reaches higher entropy once the output is not saturated (its gradient vanishes on
        near-one-hot outputs, which is why the paper's surrogate is the default)."""
        super().__init__(**kwargs)
        self.objective = check_choice(objective, "objective", self.OBJECTIVES)

    def _loss(self, logits, target):
        if self.objective == "entropy":
            return -entropy_from_logits(logits)
        return -F.log_softmax(logits, -1).mean(-1)

    def _score(self, logits, target):
        return -entropy_from_logits(logits)


class MisclassificationAttack(UncertaintyAttack):
    """Untargeted PGD on the cross-entropy to the true label ``y`` (Eq. 5 with ``L' = −CE``), used for the
    robust-accuracy column of the leaderboard. Requires ``y=`` in the call. The kept iterate is the one
    with the smallest margin ``z_y − max_{k≠y} z_k`` (a misclassified iterate if one was found)."""

    goal = "misclassify"
    requires_labels = True

    def _targets(self, logits, y):
        return y

    def _loss(self, logits, target):
        return -F.cross_entropy(logits, target, reduction="none")

    def _score(self, logits, target):
        zy = logits.gather(1, target[:, None]).squeeze(1)
        other = logits.scatter(1, target[:, None], float("-inf")).max(-1).values
        return zy - other
