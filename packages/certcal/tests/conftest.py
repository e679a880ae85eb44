"""Shared fixtures: a tiny MLP trained on scikit-learn's digits with Gaussian noise (seconds, no downloads)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from sklearn.datasets import load_digits

from certcal._demo import train_with_noise

sys.path.insert(0, str(Path(__file__).parent))  # for the _certcal_refs helper module


class TinyNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                       torch.nn.Linear(64, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def train_tiny(x: torch.Tensor, y: torch.Tensor, sigma: float, epochs: int = 25, seed: int = 0) -> TinyNet:
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = TinyNet()
    return train_with_noise(model, x, y, sigma, epochs=epochs, lr=1e-2, batch_size=128, seed=seed)


@pytest.fixture(scope="session")
def digits():
    d = load_digits()
    x = torch.tensor(d.images / 16.0, dtype=torch.float32)[:, None]
    y = torch.tensor(d.target, dtype=torch.int64)
    rng = np.random.default_rng(0)
    perm = torch.as_tensor(rng.permutation(x.shape[0]))
    tr, te = perm[:1400], perm[1400:]
    return x[tr], y[tr], x[te], y[te]


@pytest.fixture(scope="session")
def noisy_model(digits):
    """MLP trained with Gaussian noise sigma = 0.25 (a smoothing base model)."""
    xtr, ytr, _, _ = digits
    return train_tiny(xtr, ytr, sigma=0.25)


@pytest.fixture(scope="session")
def plain_model(digits):
    """MLP trained without noise (an ordinary, slightly over-confident classifier)."""
    xtr, ytr, _, _ = digits
    return train_tiny(xtr, ytr, sigma=0.0, epochs=30)
