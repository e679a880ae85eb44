"""Small networks used as defaults by the defenses (TADV, DANN, URejectron) and by the tests.

All constructors take a ``torch.Generator`` and never touch the global RNG: modules are built on the
``meta`` device and initialised from the generator (PyTorch's default Kaiming-uniform scheme).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import torch
from torch import nn

M = TypeVar("M", bound=nn.Module)

__all__ = [
    "SmallCNN",
    "BNCNN",
    "MLP",
    "DomainAdversarialNet",
    "GradientReversal",
    "reset_parameters",
    "penultimate_features",
    "build",
]


def _init_like(tensor: torch.Tensor, generator: torch.Generator, fill) -> None:
    """Fill ``tensor`` using ``generator`` even when the two live on different devices."""
    if tensor.device == generator.device:
        fill(tensor)
    else:
        tmp = torch.empty(tensor.shape, dtype=tensor.dtype, device=generator.device)
        fill(tmp)
        tensor.copy_(tmp)


def reset_parameters(module: nn.Module, generator: torch.Generator) -> nn.Module:
    """Re-initialise every Conv/Linear/BatchNorm of ``module`` in place from ``generator``."""
    for m in module.modules():
        if isinstance(m, (nn.Conv1d, nn.Conv2d, nn.Conv3d, nn.Linear)):
            with torch.no_grad():
                _init_like(m.weight, generator,
                           lambda t: nn.init.kaiming_uniform_(t, a=math.sqrt(5), generator=generator))
                if m.bias is not None:
                    fan_in = m.weight[0].numel()
                    bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
                    _init_like(m.bias, generator, lambda t, b=bound: nn.init.uniform_(t, -b, b, generator=generator))
        elif isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.reset_running_stats()
            if m.affine:
                with torch.no_grad():
                    m.weight.fill_(1.0)
                    m.bias.zero_()
    return module


def _hw(image_size: int | Sequence[int]) -> tuple[int, int]:
    """(H, W) from an int (square) or a pair; the default networks take any H×W."""
    if isinstance(image_size, bool):
        raise ValueError(f"image_size must be an int or an (H, W) pair, got {image_size!r}")
    if isinstance(image_size, int):
        h = w = image_size
    else:
        try:
            h, w = (int(v) for v in image_size)
        except (TypeError, ValueError):
            raise ValueError(f"image_size must be an int or an (H, W) pair, got {image_size!r}") from None
    if h < 1 or w < 1:
        raise ValueError(f"image_size must be positive, got {image_size!r}")
    return h, w


def build(factory: Callable[[], M], generator: torch.Generator, device: torch.device | str = "cpu") -> M:
    """Build ``factory()`` without consuming global randomness, then initialise it from ``generator``."""
    with torch.device("meta"):
        module = factory()
    module = module.to_empty(device=device)
    reset_parameters(module, generator)  # in place
    return module


def image_factory(network: Callable[..., M], like: torch.Tensor, **kwargs: Any) -> Callable[[torch.Generator], M]:
    """``generator -> network(in_channels=C, image_size=(H, W), **kwargs)`` for images shaped like ``like``, built
    with :func:`build` on ``like``'s device (the default model factory of the retraining defenses)."""
    c, h = like.shape[1], tuple(like.shape[-2:])
    return lambda g: build(lambda: network(in_channels=c, image_size=h, **kwargs), g, device=like.device)


class SmallCNN(nn.Module):
    """Two conv blocks (optionally with BatchNorm) and a two-layer head; ``image_size`` = H or (H, W).

    The penultimate representation (input of the last ``nn.Linear``) is what RMC's nearest-neighbour
    search uses, and the BatchNorm affine parameters are what DENT adapts.
    """

    def __init__(self, in_channels: int = 1, n_classes: int = 10, image_size: int | Sequence[int] = 8,
                 width: int = 16, hidden: int = 64, batch_norm: bool = True) -> None:
        super().__init__()
        self.n_classes = n_classes
        norm = (lambda c: nn.BatchNorm2d(c)) if batch_norm else (lambda c: nn.Identity())
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, width, 3, padding=1), norm(width), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, padding=1, stride=2), norm(2 * width), nn.ReLU(),
            nn.Flatten(),
        )
        h, w = _hw(image_size)
        self.head = nn.Sequential(nn.Linear(2 * width * ((h + 1) // 2) * ((w + 1) // 2), hidden), nn.ReLU(), nn.Linear(hidden, n_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


class BNCNN(nn.Module):
    """Six 3×3 convolutions, each followed by BatchNorm and ReLU (widths w, w, 2w, 2w, 4w, 4w; stride 2 at the
    third and fifth), global average pooling, a hidden layer and the linear head: a base on which DENT has
    BatchNorm affines after every convolution to adapt (as the WideResNets of the paper's Table 2 do)."""

    def __init__(self, in_channels: int = 1, n_classes: int = 10, width: int = 16, hidden: int = 64) -> None:
        super().__init__()
        self.n_classes = n_classes
        chans = [in_channels, width, width, 2 * width, 2 * width, 4 * width, 4 * width]
        layers: list[nn.Module] = []
        for i in range(6):
            layers += [nn.Conv2d(chans[i], chans[i + 1], 3, padding=1, stride=2 if i in (2, 4) else 1, bias=False),
                       nn.BatchNorm2d(chans[i + 1]), nn.ReLU()]
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Sequential(nn.Linear(4 * width, hidden), nn.ReLU(), nn.Linear(hidden, n_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


class MLP(nn.Module):
    """Flatten, then ``depth`` hidden ReLU layers; the smallest model the defenses accept."""

    def __init__(self, in_features: int = 64, n_classes: int = 10, hidden: int = 64, depth: int = 1,
                 batch_norm: bool = False) -> None:
        super().__init__()
        self.n_classes = n_classes
        layers: list[nn.Module] = [nn.Flatten()]
        width = in_features
        for _ in range(depth):
            layers += [nn.Linear(width, hidden)]
            if batch_norm:
                layers += [nn.BatchNorm1d(hidden)]
            layers += [nn.ReLU()]
            width = hidden
        layers += [nn.Linear(width, n_classes)]
        self.net = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class _GradReverse(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, alpha: float) -> torch.Tensor:  # noqa: D102
        ctx.alpha = alpha
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # noqa: D102
        return -ctx.alpha * grad, None


class GradientReversal(nn.Module):
    """Identity forward, gradient multiplied by ``-alpha`` backward (Ganin et al., 2016)."""

    def __init__(self, alpha: float = 1.0) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _GradReverse.apply(x, self.alpha)


class DomainAdversarialNet(nn.Module):
    """Encoder, label predictor and domain discriminator of DANN (paper A.4, scaled down).

    ``forward`` returns class logits (the vision-model contract), so the trained network is itself the
    adapted model F* the referee scores; ``domain_logits`` goes through the gradient-reversal layer.
    ``encoder="conv"`` (two conv blocks, A.4's MNIST encoder scaled down) or ``"mlp"`` (one hidden layer).
    """

    def __init__(self, in_channels: int = 1, n_classes: int = 10, image_size: int | Sequence[int] = 8,
                 width: int = 16, hidden: int = 64, encoder: str = "conv") -> None:
        super().__init__()
        self.n_classes = n_classes
        h, w = _hw(image_size)
        if encoder == "conv":
            self.encoder = nn.Sequential(
                nn.Conv2d(in_channels, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU(),
                nn.Conv2d(width, 2 * width, 3, padding=1, stride=2), nn.BatchNorm2d(2 * width), nn.ReLU(),
                nn.Flatten(),
            )
            feat = 2 * width * ((h + 1) // 2) * ((w + 1) // 2)
        elif encoder == "mlp":
            self.encoder = nn.Sequential(nn.Flatten(), nn.Linear(in_channels * h * w, hidden),
                                         nn.ReLU())
            feat = hidden
        else:
            raise ValueError(f"encoder must be one of ('conv', 'mlp'), got {encoder!r}")
        self.predictor = nn.Sequential(nn.Linear(feat, hidden), nn.ReLU(), nn.Linear(hidden, n_classes))
        self.reversal = GradientReversal(0.0)
        self.discriminator = nn.Sequential(nn.Linear(feat, hidden), nn.ReLU(), nn.Linear(hidden, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.predictor(self.encoder(x))

    def domain_logits(self, features: torch.Tensor) -> torch.Tensor:
        return self.discriminator(self.reversal(features))


def _last_linear(model: nn.Module) -> nn.Linear:
    last = None
    for m in model.modules():
        if isinstance(m, nn.Linear):
            last = m
    if last is None:
        raise ValueError("model has no nn.Linear layer; pass features=... to extract penultimate features")
    return last


def penultimate_features(model: nn.Module, x: torch.Tensor, *, batch_size: int = 512) -> torch.Tensor:
    """Input of the model's last ``nn.Linear`` layer (the penultimate representation), batched, no grad."""
    layer = _last_linear(model)
    captured: list[torch.Tensor] = []

    def hook(_module, inputs):
        captured.append(inputs[0].detach().flatten(1))

    handle = layer.register_forward_pre_hook(hook)
    try:
        with torch.no_grad():
            for i in range(0, x.shape[0], batch_size):
                model(x[i:i + batch_size])
    finally:
        handle.remove()
    return torch.cat(captured, 0)
