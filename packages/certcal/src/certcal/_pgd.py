"""Shared PGD helpers: steepest-ascent directions and projections for L-inf and L2 balls."""

from __future__ import annotations

import torch


def _flat_norm(t: torch.Tensor) -> torch.Tensor:
    return t.flatten(1).norm(dim=1).clamp_min(1e-12).view(-1, *([1] * (t.ndim - 1)))


def ascent_direction(grad: torch.Tensor, norm: str) -> torch.Tensor:
    if norm == "linf":
        return grad.sign()
    return grad / _flat_norm(grad)


def project(x_adv: torch.Tensor, x: torch.Tensor, eps: torch.Tensor, norm: str) -> torch.Tensor:
    """Project onto {||x_adv - x|| <= eps} intersected with [0, 1]; ``eps`` has shape (N, 1, ..., 1)."""
    delta = x_adv - x
    if norm == "linf":
        delta = torch.maximum(torch.minimum(delta, eps), -eps)
    else:
        factor = torch.clamp(eps / _flat_norm(delta), max=1.0)
        delta = delta * factor
    return (x + delta).clamp(0.0, 1.0)
