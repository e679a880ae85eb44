"""Argument checks shared by the public functions (raised before any expensive work)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

NORMS = ("Linf", "L2")
OPTIMIZERS = ("pgd", "apgd")


def check_model(model: object, name: str = "model") -> nn.Module:
    if not isinstance(model, nn.Module):
        raise TypeError(f"{name} must be a torch.nn.Module returning logits (N, K); got {type(model).__name__}")
    return model


def check_images(x: object, name: str = "x") -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape (N, C, H, W) in [0, 1]; got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor in [0, 1]; got dtype {x.dtype}")
    if x.dim() < 2 or x.shape[0] == 0:
        raise ValueError(f"{name} must have a non-empty batch dimension, shape (N, ...); got {tuple(x.shape)}")
    if not torch.isfinite(x).all():
        raise ValueError(f"{name} must be finite")
    if x.min() < 0 or x.max() > 1:
        raise ValueError(f"{name} must lie in [0, 1]; got range [{float(x.min()):.4g}, {float(x.max()):.4g}]")
    return x


def check_norm(norm: object) -> str:
    if norm not in NORMS:
        raise ValueError(f"norm must be one of {NORMS}; got {norm!r}")
    return str(norm)


def check_eps(eps: object, n: int | None = None, name: str = "eps") -> float | torch.Tensor:
    """A scalar budget >= 0, or a per-sample vector of length N."""
    if isinstance(eps, bool):
        raise TypeError(f"{name} must be a non-negative float or a 1-D tensor of per-sample budgets")
    if isinstance(eps, torch.Tensor | np.ndarray) and eps.ndim == 0:
        eps = float(eps)
    if isinstance(eps, int | float | np.floating | np.integer):
        e = float(eps)
        if not math.isfinite(e) or e < 0:
            raise ValueError(f"{name} must be a finite float >= 0; got {eps!r}")
        return e
    if isinstance(eps, torch.Tensor | np.ndarray | Sequence):
        t = torch.as_tensor(np.asarray(eps, dtype=np.float64) if not isinstance(eps, torch.Tensor) else eps)
        t = t.detach().to(torch.float64).reshape(-1)
        if n is not None and t.numel() != n:
            raise ValueError(f"{name} as a vector must have one budget per sample ({n}); got {t.numel()}")
        if not torch.isfinite(t).all() or (t < 0).any():
            raise ValueError(f"{name} must be finite and >= 0")
        return t
    raise TypeError(f"{name} must be a non-negative float or a 1-D tensor of per-sample budgets; got {type(eps).__name__}")


def check_positive_int(value: object, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def check_choice(value: object, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}; got {value!r}")
    return str(value)


def check_seed(seed: object) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"seed must be an int or None; got {type(seed).__name__}")
    return int(seed)
