"""Offline demo data and model: scikit-learn's bundled digits and a small CNN trained with Gaussian noise."""

from __future__ import annotations

import numpy as np
import torch

from robustsuite_common.extras import optional_import


class DigitsCNN(torch.nn.Module):
    """A small CNN for 8x8 digits in [0, 1] (N, 1, 8, 8) -> 10 logits."""

    def __init__(self) -> None:
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        )
        self.head = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(32 * 16, 64), torch.nn.ReLU(),
                                        torch.nn.Linear(64, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


def _digits(seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    sklearn_datasets = optional_import("sklearn.datasets", extra="certcal[demo]", feature="the offline demo")
    d = sklearn_datasets.load_digits()
    x = torch.tensor(d.images / 16.0, dtype=torch.float32)[:, None]
    y = torch.tensor(d.target, dtype=torch.int64)
    perm = torch.as_tensor(np.random.default_rng(seed).permutation(x.shape[0]))
    return x, y, perm[:1400], perm[1400:]


def load_digits_split(seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """scikit-learn's 1,797 8x8 digits in [0, 1], shuffled with ``seed``: 1,400 train and 397 test images."""
    x, y, tr, te = _digits(seed)
    return x[tr], y[tr], x[te], y[te]


def digits_splits(seed: int = 0):
    """The same split as :func:`load_digits_split` as two ``Split``s whose ids are the rows of
    ``sklearn.datasets.load_digits()`` and whose label names are the digits."""
    from robustsuite_common.experiment import Split

    x, y, tr, te = _digits(seed)
    names = tuple(str(k) for k in range(10))
    return tuple(Split(x[i], y[i], ids=tuple(int(v) for v in i), label_names=names) for i in (tr, te))


def train_with_noise(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, sigma: float, *, epochs: int,
                     lr: float, batch_size: int, seed: int = 0) -> torch.nn.Module:
    """Gaussian-noise training (Cohen et al.'s recipe) with Adam; seeded through a private generator."""
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr)
    for _ in range(epochs):
        perm = torch.randperm(x.shape[0], generator=g)
        for i in range(0, x.shape[0], batch_size):
            idx = perm[i:i + batch_size]
            xb = x[idx] + sigma * torch.randn(x[idx].shape, generator=g)
            loss = torch.nn.functional.cross_entropy(model(xb), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.eval()


def train_digits_cnn(x: torch.Tensor, y: torch.Tensor, sigma: float, epochs: int = 15, seed: int = 0) -> DigitsCNN:
    """The demo CNN trained with Gaussian noise; a few seconds on CPU."""
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        model = DigitsCNN()
    train_with_noise(model, x, y, sigma, epochs=epochs, lr=3e-3, batch_size=64, seed=seed)
    return model
