"""Batched projected first-order minimisation under an L∞ or L2 budget, intersected with the [0, 1] box.

One engine serves every attack in the package: PGD (Madry et al.) with a fixed step, and an APGD-style
variant (Croce & Hein, 2020) with momentum and a step size halved at checkpoints when progress stalls.
Each sample keeps the *best iterate* according to a caller-given score (lowest is best), so the returned
point is never worse than any point visited, including the clean input.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from robustsuite_common.projection import project

LossFn = Callable[[torch.Tensor], torch.Tensor]  # logits (B, K) -> per-sample values (B,)


@dataclass
class _Outcome:
    x_best: torch.Tensor
    score_best: torch.Tensor
    loss_best: torch.Tensor
    step_best: torch.Tensor
    logits_best: torch.Tensor


def _flat_norm(t: torch.Tensor) -> torch.Tensor:
    return t.flatten(1).norm(dim=1).view(-1, *([1] * (t.dim() - 1)))


def _direction(g: torch.Tensor, norm: str) -> torch.Tensor:
    if norm == "Linf":
        return g.sign()
    return g / _flat_norm(g).clamp_min(1e-12)


def random_start(x0: torch.Tensor, eps: torch.Tensor, norm: str, gen: torch.Generator) -> torch.Tensor:
    """Uniform point of the L∞ ball, or uniform point of the L2 ball (Gaussian direction, radius eps·u^(1/d))."""
    if norm == "Linf":
        u = torch.rand(x0.shape, generator=gen, device=x0.device, dtype=x0.dtype)
        delta = (2 * u - 1) * eps
    else:
        d = x0[0].numel()
        g = torch.randn(x0.shape, generator=gen, device=x0.device, dtype=x0.dtype)
        r = torch.rand((x0.shape[0],), generator=gen, device=x0.device, dtype=x0.dtype) ** (1.0 / d)
        delta = g / _flat_norm(g).clamp_min(1e-12) * r.view(-1, *([1] * (x0.dim() - 1))) * eps
    return project(x0 + delta, x0, eps=eps, norm=norm, linf="delta")


def apgd_checkpoints(steps: int) -> list[int]:
    """Checkpoint iterations w_j = ceil(p_j · steps), p_0 = 0, p_1 = 0.22, p_{j+1} = p_j + max(p_j − p_{j−1} − 0.03, 0.06)."""
    p = [0.0, 0.22]
    while p[-1] < 1:
        p.append(p[-1] + max(p[-1] - p[-2] - 0.03, 0.06))
    return sorted({math.ceil(round(q * steps, 9)) for q in p if 0 < q <= 1})  # round: 0.57·100 is 57.000…01


class _Search:
    """The state of one minimisation: the model and objectives, and per sample the best iterate so far (lowest
    ``score_fn``, with its logits; iterate 0 is the clean input, whose logits the caller passes)."""

    def __init__(self, model: nn.Module, x0: torch.Tensor, logits0: torch.Tensor, loss_fn: LossFn,
                 score_fn: LossFn) -> None:
        self.model, self.loss_fn, self.score_fn = model, loss_fn, score_fn
        logits0 = logits0.detach()
        self.x_best, self.logits_best = x0.detach().clone(), logits0.clone()
        self.score_best, self.loss_best = score_fn(logits0).detach(), loss_fn(logits0).detach()
        self.step_best = torch.zeros_like(self.score_best, dtype=torch.long)
        self._shape = (-1,) + (1,) * (x0.dim() - 1)

    def evaluate(self, x: torch.Tensor, need_grad: bool = True
                 ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """Per-sample loss, score and logits at ``x``, and the input gradient of the loss when ``need_grad``."""
        x = x.detach().requires_grad_(need_grad)
        with torch.enable_grad() if need_grad else torch.no_grad():
            logits = self.model(x)
            loss = self.loss_fn(logits)
            score = self.score_fn(logits).detach()
            grad = torch.autograd.grad(loss.sum(), x)[0].detach() if need_grad else None
        return loss.detach(), score, logits.detach(), grad

    def step(self, x: torch.Tensor, k: int, need_grad: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Evaluate iterate ``k`` at ``x``, keep it where its score is the best so far; its loss and gradient."""
        loss, score, logits, grad = self.evaluate(x, need_grad)
        better = score < self.score_best
        self.x_best = torch.where(better.view(self._shape), x.detach(), self.x_best)
        self.logits_best = torch.where(better[:, None], logits, self.logits_best)
        self.score_best = torch.where(better, score, self.score_best)
        self.loss_best = torch.where(better, loss, self.loss_best)
        self.step_best = torch.where(better, k, self.step_best)
        return loss, grad

    def outcome(self) -> _Outcome:
        return _Outcome(self.x_best, self.score_best, self.loss_best, self.step_best, self.logits_best)


def minimise(
    model: nn.Module,
    x0: torch.Tensor,
    eps: torch.Tensor,
    *,
    norm: str,
    loss_fn: LossFn,
    score_fn: LossFn,
    steps: int,
    step_size: torch.Tensor | None,
    optimizer: str,
    momentum: float,
    start: torch.Tensor,
    logits0: torch.Tensor,
) -> _Outcome:
    """Minimise ``loss_fn(model(x))`` over the ball; keep per sample the iterate with the lowest ``score_fn``
    (and its logits, so that no pass is repeated to read them).

    ``eps`` and ``step_size`` have shape (B, 1, ...). Iterate 0 is the clean input ``x0`` (never worse
    than doing nothing), whose logits ``logits0`` the caller computed; iterate 1 is ``start`` (``x0`` or a random
    start).
    """
    search = _Search(model, x0, logits0, loss_fn, score_fn)
    x = start.detach().clone()
    loss, grad = search.step(x, 1)
    assert grad is not None
    if steps > 0 and not (grad != 0).any():
        warnings.warn(
            "all input gradients are zero at the start point: the model may be saturated, use "
            "non-differentiable layers or obfuscate gradients, so gradient attacks cannot move it and "
            "the uncertainty span reported is a lower bound only",
            RuntimeWarning,
            stacklevel=3,
        )
    if optimizer == "pgd":
        _pgd(search, x, grad, x0, eps, norm=norm, steps=steps, step_size=step_size)
    else:
        _apgd(search, x, loss, grad, x0, eps, norm=norm, steps=steps, step_size=step_size, momentum=momentum)
    return search.outcome()


def _pgd(search: _Search, x: torch.Tensor, grad: torch.Tensor | None, x0: torch.Tensor, eps: torch.Tensor, *,
         norm: str, steps: int, step_size: torch.Tensor | None) -> None:
    """PGD with a fixed step: ``steps`` signed (L∞) or normalised (L2) gradient steps, each projected."""
    for k in range(steps):
        assert grad is not None and step_size is not None
        x = project(x - step_size * _direction(grad, norm), x0, eps=eps, norm=norm, linf="delta")
        _, grad = search.step(x, k + 2, need_grad=k < steps - 1)


def momentum_step(x: torch.Tensor, x_prev: torch.Tensor, z: torch.Tensor, alpha: float) -> torch.Tensor:
    """APGD's momentum (Croce & Hein 2020, Alg. 1) before projection, ``x + α(z − x) + (1 − α)(x − x_prev)``,
    computed as one lerp from ``2x − x_prev`` towards ``z`` (three passes over the batch instead of six)."""
    return torch.lerp(torch.sub(x, x_prev).add_(x), z, alpha)


def _apgd(search: _Search, x: torch.Tensor, loss: torch.Tensor, grad: torch.Tensor, x0: torch.Tensor,
          eps: torch.Tensor, *, norm: str, steps: int, step_size: torch.Tensor | None, momentum: float) -> None:
    """APGD (Croce & Hein 2020, Alg. 1) written for minimisation: eta_0 = 2·eps, momentum alpha = 0.75,
    halve eta at checkpoint w_j when (i) fewer than rho = 0.75 of the steps since w_{j-1} decreased the
    loss, or (ii) eta and the best loss are both unchanged since w_{j-1}; then restart from the best point."""
    shape = (-1,) + (1,) * (x0.dim() - 1)
    checkpoints = set(apgd_checkpoints(steps))
    rho = 0.75
    eta = 2.0 * eps.clone() if step_size is None else step_size.clone()
    x_prev = x.clone()
    loss_prev = loss.clone()
    f_best, x_fbest, g_fbest = loss.clone(), x.clone(), grad.clone()
    n_improved = torch.zeros_like(loss)
    eta_at_ckpt = eta.clone()
    fbest_at_ckpt = f_best.clone()
    last_ckpt = 0
    for k in range(steps):
        z = project(torch.addcmul(x, eta, _direction(grad, norm), value=-1), x0, eps=eps, norm=norm, linf="delta")
        if k == 0:
            x_new = z
        else:
            x_new = project(momentum_step(x, x_prev, z, momentum), x0, eps=eps, norm=norm, linf="delta")
        x_prev = x
        x = x_new
        loss, g = search.step(x, k + 2)
        assert g is not None
        grad = g
        n_improved += (loss < loss_prev).to(loss.dtype)
        loss_prev = loss
        improved = loss < f_best
        f_best = torch.where(improved, loss, f_best)
        x_fbest = torch.where(improved.view(shape), x, x_fbest)
        g_fbest = torch.where(improved.view(shape), grad, g_fbest)
        if (k + 1) in checkpoints:
            span = k + 1 - last_ckpt
            cond1 = n_improved < rho * span
            cond2 = (eta.view(-1) == eta_at_ckpt.view(-1)) & (fbest_at_ckpt == f_best)
            halve = cond1 | cond2
            eta_at_ckpt = eta.clone()
            fbest_at_ckpt = f_best.clone()
            eta = torch.where(halve.view(shape), eta / 2, eta)
            # restart the halved samples from their best point so far
            x = torch.where(halve.view(shape), x_fbest, x)
            grad = torch.where(halve.view(shape), g_fbest, grad)
            x_prev = torch.where(halve.view(shape), x_fbest, x_prev)
            n_improved.zero_()
            last_ckpt = k + 1
