"""Supervised training T(D): standard and adversarial (Madry et al., 2018) training, seeded.

Used by TADV (adversarial retraining from scratch on each test batch), by RMC's adaptation, and by
callers who need the static base models of the paper's tables. All randomness (shuffling, PGD random
starts) comes from the given generator.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

from robustsuite_common.checks import check_bool, check_images, check_int
from robustsuite_common.models import check_model, logits_from

from ._validate import as_input, check_eps, check_generator, check_labels, check_positive
from .pgd import PGD

__all__ = ["train_classifier"]


def train_classifier(model: nn.Module, x: torch.Tensor, y: torch.Tensor, *, epochs: int,
                     generator: torch.Generator, lr: float = 1e-3, batch_size: int = 128,
                     weight_decay: float = 0.0, adversarial_eps: float = 0.0, adv_steps: int = 10,
                     adv_step_size: float | None = None, clean_fraction: float = 0.5,
                     in_place: bool = False) -> nn.Module:
    """Train a copy of ``model`` with Adam on (x, y) and return it in eval mode; the caller's model is not changed
    (``in_place=True`` trains ``model`` itself and returns it). No ``.grad`` is left on the returned parameters.

    With ``adversarial_eps > 0`` each minibatch keeps a ``clean_fraction`` share clean and replaces
    the rest by L∞ PGD examples (``adv_steps`` steps, random start) — "50% clean and 50% adversarial
    examples per batch" of A.5; ``clean_fraction=0`` is Madry et al.'s pure adversarial training.
    """
    check_model("model", model)
    check_images("x", x)
    y = check_labels("y", y, x.shape[0], device=x.device, model=model, x=x)
    epochs = check_int("epochs", epochs, ge=0)
    check_generator(generator)
    lr = check_positive("lr", lr)
    batch_size = check_int("batch_size", batch_size, ge=1)
    adversarial_eps = check_eps(adversarial_eps)
    if not 0.0 <= clean_fraction <= 1.0:
        raise ValueError(f"clean_fraction must be in [0, 1], got {clean_fraction!r}")
    in_place = check_bool("in_place", in_place)
    if not in_place:
        model = copy.deepcopy(model)
    x = as_input(model, x)
    y = y.to(x.device)
    device = x.device
    opt = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    pgd = PGD(steps=adv_steps, step_size=adv_step_size, random_start=True) if adversarial_eps > 0 else None
    n = x.shape[0]
    for _ in range(epochs):
        order = torch.randperm(n, generator=generator, device=generator.device).to(device)
        for i in range(0, n, batch_size):
            idx = order[i:i + batch_size]
            xb, yb = x[idx], y[idx]
            if pgd is not None:
                n_adv = int(round((1.0 - clean_fraction) * xb.shape[0]))
                if n_adv > 0:
                    model.eval()
                    x_adv = pgd.run([model], xb[:n_adv], yb[:n_adv], eps=adversarial_eps, generator=generator)
                    xb = torch.cat([x_adv, xb[n_adv:]], 0)
            model.train()
            opt.zero_grad(set_to_none=True)
            F.cross_entropy(logits_from(model(xb), n=xb.shape[0]), yb).backward()
            opt.step()
    opt.zero_grad(set_to_none=True)
    model.eval()
    return model
