"""Tiny offline models on scikit-learn's bundled 8×8 digits, for the CLI demo and the tests.

A small CNN trained either normally or with PGD adversarial training (Madry et al., L∞), in seconds on
one CPU core. Everything is seeded through private generators.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from robustsuite_common.ood import photo_patches
from robustsuite_common.projection import project

from . import _optim


class DigitsCNN(nn.Module):
    """Conv(1→16, 3×3) → ReLU → Conv(16→32, 3×3, stride 2) → ReLU → Linear(512→classes). Input (N,1,8,8) in [0,1]."""

    def __init__(self, n_classes: int = 10, dropout: float = 0.0):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.drop = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.fc = nn.Linear(32 * 4 * 4, n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.conv1(x))
        h = F.relu(self.conv2(h))
        return self.fc(self.drop(h.flatten(1)))


def load_digits_split(seed: int = 0, test_fraction: float = 0.3, classes: tuple[int, ...] | None = None):
    """(x_train, y_train, x_test, y_test) from sklearn's digits, x float32 (N,1,8,8) in [0,1], stratified."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d: Any = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int64)
    if classes is not None:
        keep = np.isin(y, classes)
        x, y = x[keep], y[keep]
    xtr, xte, ytr, yte = train_test_split(x, y, test_size=test_fraction, random_state=seed, stratify=y)
    return torch.from_numpy(xtr), torch.from_numpy(ytr), torch.from_numpy(xte), torch.from_numpy(yte)


def train_digits_model(
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    adversarial: bool = False,
    eps: float = 0.1,
    epochs: int = 30,
    attack_steps: int = 5,
    n_classes: int = 10,
    dropout: float = 0.0,
    seed: int = 0,
) -> DigitsCNN:
    """Train a :class:`DigitsCNN` with Adam (lr 3e-3, batch 64); with ``adversarial=True`` on PGD-L∞
    examples (``attack_steps`` steps of 2.5·eps/steps from a random start) — PGD adversarial training."""
    gen = torch.Generator().manual_seed(seed)
    with torch.random.fork_rng(devices=[]):  # seeded default init; the global RNG state is restored
        torch.manual_seed(seed)
        model = DigitsCNN(n_classes, dropout)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    n = x.shape[0]
    eps_t = torch.full((1, 1, 1, 1), float(eps))
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n, 64):
            idx = perm[i : i + 64]
            xb, yb = x[idx], y[idx]
            if adversarial:
                model.eval()
                xa = _optim.random_start(xb, eps_t, "Linf", gen)
                step = 2.5 * eps / attack_steps
                for _ in range(attack_steps):
                    xa.requires_grad_(True)
                    g = torch.autograd.grad(F.cross_entropy(model(xa), yb), xa)[0]
                    xa = project(xa.detach() + step * g.sign(), xb, eps=eps_t, norm="Linf", linf="delta")
                xb = xa.detach()
            model.train()
            opt.zero_grad()
            F.cross_entropy(model(xb), yb).backward()
            opt.step()
    return model.eval()


def digits_experiment(*, epochs: int = 20, seed: int = 0, n_photo: int = 300):
    """``(models, data)`` for :func:`uncspan.experiment.run` on scikit-learn's bundled digits, offline, in seconds:
    a standard and a PGD-adversarially-trained CNN (L∞, ε = 0.1) ranked on the test digits; for Table V a CNN
    trained on digits 0–7, with digits 8–9 as the open set and ``n_photo`` 8×8 patches of scikit-learn's two sample
    photographs as OOD. Label names are the digits' own ("0" … "9")."""
    from robustsuite_common.experiment import Split

    from .experiment import Data, Models

    names = tuple(str(d) for d in range(10))
    xtr, ytr, xte, yte = load_digits_split(seed)
    known = tuple(range(8))
    oxtr, oytr, oxte, oyte = load_digits_split(seed, classes=known)
    open_set = np.isin(yte.numpy(), (8, 9))
    models = Models(
        ranked={"digits-cnn": train_digits_model(xtr, ytr, epochs=epochs, seed=seed),
                "digits-cnn-at": train_digits_model(xtr, ytr, adversarial=True, eps=0.1, epochs=epochs, seed=seed)},
        adversarially_trained={"digits-cnn": False, "digits-cnn-at": True},
        osr={"digits-osr-cnn": train_digits_model(oxtr, oytr, n_classes=8, epochs=epochs, seed=seed)})
    photos = photo_patches(n=n_photo, seed=seed)
    data = Data(test=Split(xte, yte, label_names=names), osr=Split(oxte, oyte, label_names=names[:8]),
                open_set=Split(xte[torch.from_numpy(open_set)], yte[torch.from_numpy(open_set)], tuple(np.flatnonzero(open_set).tolist()), names),
                ood=Split(photos, torch.full((n_photo,), -1)))
    return models, data
