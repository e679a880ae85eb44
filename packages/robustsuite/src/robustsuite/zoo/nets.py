"""The architectures of the builtin models (and of ``torch:<path>#<architecture>`` state dicts): image in [0, 1],
input normalisation inside the model (the RobustBench convention), logits out."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import torch
from torch import nn


class DigitsCNN(nn.Module):
    """Small CNN for 8×8 grey digits in [0, 1]; input normalisation lives inside (RobustBench style)."""

    if TYPE_CHECKING:  # buffers, typed for the checker only (TorchScript reads __annotations__)
        mean: torch.Tensor
        std: torch.Tensor

    def __init__(self, num_classes: int = 10, width: int = 32):
        super().__init__()
        self.register_buffer("mean", torch.tensor(0.30))
        self.register_buffer("std", torch.tensor(0.40))
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(2 * width * 16, 128), nn.ReLU(),
        )
        self.head = nn.Linear(128, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features((x - self.mean) / self.std))


class FashionCNN(nn.Module):
    """Three-conv CNN with BatchNorm for grey or colour images of any size ≥ 4×4 (adaptive pooling), in [0, 1];
    input normalisation inside (RobustBench style). ~157k parameters for 1 channel and 10 classes. The
    BatchNorm layers are what DENT adapts (transduct-attack)."""

    if TYPE_CHECKING:  # buffers, typed for the checker only (TorchScript reads __annotations__)
        mean: torch.Tensor
        std: torch.Tensor

    def __init__(self, num_classes: int = 10, in_channels: int = 1, widths: tuple[int, int, int] = (16, 32, 64),
                 mean: float = 0.286, std: float = 0.353):
        super().__init__()
        self.register_buffer("mean", torch.tensor(float(mean)))
        self.register_buffer("std", torch.tensor(float(std)))
        a, b, c = widths
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, a, 3, padding=1), nn.BatchNorm2d(a), nn.ReLU(), nn.MaxPool2d(2, ceil_mode=True),
            nn.Conv2d(a, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU(), nn.MaxPool2d(2, ceil_mode=True),
            nn.Conv2d(b, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(),
            nn.AdaptiveAvgPool2d(4), nn.Flatten(),
            nn.Linear(16 * c, 128), nn.ReLU(),
        )
        self.head = nn.Linear(128, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features((x - self.mean) / self.std))


ARCHITECTURES: dict[str, Callable[..., nn.Module]] = {"digits-cnn": DigitsCNN, "fashion-cnn": FashionCNN}
