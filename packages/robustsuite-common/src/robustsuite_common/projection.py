"""The ε-ball projection of PGD-style attacks: onto the L∞ or L2 ball of radius ε around the clean input, then
onto the [0, 1] box.

Clipping to the box after the ball never leaves the ball: it only shrinks each coordinate of the perturbation
towards zero (the clean input itself lies in the box).

Two L∞ forms exist and are kept, because they round differently and recorded runs depend on the bits:

- ``linf="point"`` clips the point itself, ``min(max(x_adv, x − ε), x + ε)``: a coordinate inside the ball
  comes back exactly;
- ``linf="delta"`` clips the perturbation and adds it back, ``x + max(min(x_adv − x, ε), −ε)``.

The L2 projection scales the perturbation by ``min(1, ε / max(‖δ‖₂, 1e-12))`` per sample.
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["flat_norm", "project"]

NORMS = {"linf": "linf", "l2": "l2"}


def flat_norm(t: Any, *, floor: float | None = 1e-12) -> Any:
    """Per-sample L2 norm of ``t`` (N, ...) shaped (N, 1, ..., 1) to broadcast, floored at ``floor`` (or not)."""
    n = t.flatten(1).norm(dim=1)
    if floor is not None:
        n = n.clamp_min(floor)
    return n.view(-1, *([1] * (t.ndim - 1)))


def project(x_adv: Any, x: Any, *, eps: Any, norm: str, linf: Literal["point", "delta"] = "point") -> Any:
    """``x_adv`` projected onto the ``norm`` ball (``"Linf"`` or ``"L2"``, any case) of radius ``eps`` around
    ``x``, then onto [0, 1]. ``eps``: a number, or a tensor broadcasting against ``x`` (e.g. (N, 1, ..., 1));
    the ``"delta"`` L∞ form needs a tensor. ``linf`` picks the L∞ form (module docstring)."""
    import torch

    kind = NORMS.get(str(norm).lower())
    if kind is None:
        raise ValueError(f"norm must be 'Linf' or 'L2', got {norm!r}")
    if kind == "linf":
        if linf == "point":
            return torch.minimum(torch.maximum(x_adv, x - eps), x + eps).clamp(0.0, 1.0)
        if linf != "delta":
            raise ValueError(f"linf must be 'point' or 'delta', got {linf!r}")
        delta = torch.clamp(x_adv - x, min=-eps, max=eps)  # one pass; the same bits as max(min(·, ε), −ε)
        return (x + delta).clamp(0.0, 1.0)
    delta = x_adv - x
    return (x + delta * torch.clamp(eps / flat_norm(delta), max=1.0)).clamp(0.0, 1.0)
