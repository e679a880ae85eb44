"""Vision attacks of the evaluation protocol: L∞ PGD on the served logits (fooled by a temperature: the image
analogue of the IOR) and standard AutoAttack (not fooled), both ``attack(model, x, y, *, seed) -> AttackOutput``."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import (
    check_bool,
    check_choice,
    check_float,
    check_images,
    check_int,
    check_labels,
    check_seed,
)
from robustsuite_common.models import as_model_input, evaluating, logits_from

from ..temperature import _device_of
from .output import AttackOutput, progress_bar

__all__ = ["AutoAttackLinf", "PGDLinf"]


class PGDLinf:
    """L-inf projected gradient descent (Madry et al., 2018) on the cross-entropy of the model's logits.

    The loss is computed from the model's own (served) logits, so a T_d = 0.005 model saturates the
    float32 softmax and zeroes the gradient — the vision analogue of the IOR (gradient masking). That is the
    paper's point, so this attack is kept for the IOR tables and always *named* there; a robust accuracy that
    names no attack is standard AutoAttack (:class:`AutoAttackLinf`, :func:`robust_accuracy`).
    ``eps`` is an L∞ radius for images in [0, 1]: a finite number in (0, 1].
    """

    def __init__(
        self,
        *,
        eps: float = 0.1,
        alpha: float | None = None,
        steps: int = 20,
        random_start: bool = True,
        batch_size: int = 512,
    ):
        self.eps = check_float("eps", eps, gt=0.0, le=1.0)
        self.steps = check_int("steps", steps, ge=1)
        self.alpha = check_float("alpha", alpha, gt=0.0) if alpha is not None else 2.5 * self.eps / self.steps
        self.random_start = check_bool("random_start", random_start)
        self.batch_size = check_int("batch_size", batch_size, ge=1)

    @property
    def name(self) -> str:
        """What a table column calls it, e.g. ``"PGD-10 (L∞ 0.1)"``."""
        return f"PGD-{self.steps} (L∞ {self.eps:g}{', random start' if self.random_start else ''})"

    @property
    def stochastic(self) -> bool:
        """Only the random start depends on ``seed``."""
        return self.random_start

    def __call__(
        self, model: nn.Module, x: torch.Tensor, y, *, seed: int = 0, progress: bool = False
    ) -> AttackOutput:
        if not isinstance(model, nn.Module):
            raise TypeError("model must be a torch.nn.Module (vision contract)")
        check_images("x", x)
        y = torch.as_tensor(check_labels("labels", y, length=x.shape[0]), dtype=torch.long)
        seed = check_seed("seed", seed)
        device = _device_of(model)
        gen = torch.Generator().manual_seed(int(seed))
        advs, succ, skip = [], [], []
        with evaluating(model, freeze_parameters=True):
            for a in progress_bar(range(0, x.shape[0], self.batch_size), progress):
                xb = as_model_input(model, x[a : a + self.batch_size])
                yb = y[a : a + self.batch_size].to(device)
                with torch.no_grad():
                    z0 = logits_from(model(xb), n=xb.shape[0])
                if a == 0:  # the number of classes, known from the first forward pass: before any attack step
                    check_labels("labels", y, n_classes=z0.shape[1])
                clean_wrong = z0.argmax(1) != yb
                delta = torch.zeros_like(xb)
                if self.random_start:
                    delta = (torch.rand(xb.shape, generator=gen) * 2 - 1).to(device, xb.dtype) * self.eps
                xa = (xb + delta).clamp(0, 1)
                for _ in range(self.steps):
                    xa = xa.detach().requires_grad_(True)
                    loss = nn.functional.cross_entropy(logits_from(model(xa), n=xa.shape[0]), yb)
                    (g,) = torch.autograd.grad(loss, xa)
                    xa = xa.detach() + self.alpha * g.sign()
                    xa = torch.min(torch.max(xa, xb - self.eps), xb + self.eps).clamp(0, 1)
                xa = torch.where(clean_wrong.view(-1, 1, 1, 1), xb, xa.detach())
                with torch.no_grad():
                    s = logits_from(model(xa), n=xa.shape[0]).argmax(1) != yb
                advs.append(xa.to(x.device, x.dtype))
                succ.append((s & ~clean_wrong).cpu().numpy())
                skip.append(clean_wrong.cpu().numpy())
        return AttackOutput(
            torch.cat(advs), np.concatenate(succ), np.concatenate(skip), np.zeros(x.shape[0], dtype=np.int64)
        )


class AutoAttackLinf:
    """Standard AutoAttack (Croce & Hein, 2020: APGD-CE, APGD-T, FAB-T, Square) at L∞ radius ``eps``, as an
    attack of this package's protocol (``attack(model, x, y, *, seed) -> AttackOutput``), through
    :func:`robustsuite_common.autoattack.autoattack` (pyautoattack, seeded; the caller's RNG and model
    untouched). APGD-T's DLR loss is invariant to a temperature, so a T_d = 0.005 model does not mask it —
    the field's robust accuracy, shown beside PGD. Needs the ``autoattack`` extra and >= 4 classes for
    ``version="standard"``."""

    stochastic = True

    def __init__(self, *, eps: float = 0.1, version: str = "standard", batch_size: int = 250):
        self.eps = check_float("eps", eps, gt=0.0, le=1.0)
        self.version = check_choice("version", version, ("standard", "plus", "rand"))
        self.batch_size = check_int("batch_size", batch_size, ge=1)

    @property
    def name(self) -> str:
        return f"AutoAttack ({self.version}, L∞ {self.eps:g})"

    def __call__(self, model: nn.Module, x: torch.Tensor, y, *, seed: int = 0, progress: bool = False) -> AttackOutput:
        from robustsuite_common.autoattack import autoattack

        if not isinstance(model, nn.Module):
            raise TypeError("model must be a torch.nn.Module (vision contract)")
        check_images("x", x)
        yl = check_labels("labels", y, length=x.shape[0])
        with evaluating(model), torch.no_grad():  # one input: the number of classes, before the attack runs
            k = logits_from(model(as_model_input(model, x[:1])), n=1).shape[1]
        check_labels("labels", yl, n_classes=k)
        res = autoattack(model, x, yl, eps=self.eps, norm="Linf", version=self.version,
                         seed=check_seed("seed", seed), batch_size=self.batch_size)
        clean = res.clean_correct.numpy().astype(bool)
        robust = res.robust.numpy().astype(bool)
        return AttackOutput(res.x_adv.to(x.device, x.dtype), clean & ~robust, ~clean,
                            np.zeros(x.shape[0], dtype=np.int64), extra={"attack": res.attack})


