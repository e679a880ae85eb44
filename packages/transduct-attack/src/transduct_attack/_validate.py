"""Argument checks shared by the public API (raise before any expensive work)."""

from __future__ import annotations

import math

import torch


def check_images(x: object, name: str = "x") -> torch.Tensor:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape (N, C, H, W) in [0, 1], got {type(x).__name__}")
    if x.dim() < 2 or x.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty batch (N, ...), got shape {tuple(x.shape)}")
    if not torch.is_floating_point(x):
        raise TypeError(f"{name} must be a float tensor, got dtype {x.dtype}")
    if not bool(torch.isfinite(x).all()):
        raise ValueError(f"{name} contains NaN or infinite values; inputs must be finite floats in [0, 1]")
    if x.numel() and (float(x.min()) < 0.0 or float(x.max()) > 1.0):
        raise ValueError(f"{name} must lie in [0, 1] (the vision-model contract)")
    return x


def check_labels(y: object, n: int, name: str = "y") -> torch.Tensor:
    if not isinstance(y, torch.Tensor):
        raise TypeError(f"{name} must be an int64 torch.Tensor of shape (N,), got {type(y).__name__}")
    if y.dim() != 1 or y.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},), got {tuple(y.shape)}")
    if torch.is_floating_point(y) and bool(torch.isnan(y).any()):
        raise ValueError(f"{name} contains NaN labels; labels must be integers in [0, K)")
    if y.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"{name} must be an integer tensor, got dtype {y.dtype}")
    if y.numel() and int(y.min()) < 0:
        raise ValueError(f"{name} must hold class indices >= 0, got {int(y.min())}")
    return y.long()


def check_eps(eps: object) -> float:
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(float(eps)) or eps < 0:
        raise ValueError(f"eps must be a finite number >= 0 (L-infinity budget), got {eps!r}")
    return float(eps)


def check_positive_int(value: object, name: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def check_positive_float(value: object, name: str, *, allow_zero: bool = False) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(float(value))
    if not ok or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {value!r}")
    return float(value)


def check_choice(value: object, name: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value  # type: ignore[return-value]


def check_generator(generator: object) -> torch.Generator:
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    return generator


def model_device(model: torch.nn.Module) -> torch.device:
    for p in model.parameters():
        return p.device
    for b in model.buffers():
        return b.device
    return torch.device("cpu")
