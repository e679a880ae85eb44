"""uncspan's own argument checks (budgets and norms); everything generic is robustsuite_common.checks, with its
one signature ``check_<what>(name, value, ...)``, raised before any expensive work."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from robustsuite_common.checks import check_choice
from robustsuite_common.checks import check_seed as _check_seed

__all__ = ["NORMS", "OPTIMIZERS", "check_norm", "check_eps", "check_seed"]

NORMS = ("Linf", "L2")
OPTIMIZERS = ("pgd", "apgd")


def check_norm(norm: object) -> str:
    return str(check_choice("norm", norm, NORMS))


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
    if isinstance(eps, torch.Tensor | np.ndarray | Sequence) and not isinstance(eps, str | bytes):
        try:
            t = torch.as_tensor(np.asarray(eps, dtype=np.float64) if not isinstance(eps, torch.Tensor) else eps)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a non-negative float or a 1-D tensor of per-sample budgets") from None
        t = t.detach().to(torch.float64).reshape(-1)
        if n is not None and t.numel() != n:
            raise ValueError(f"{name} as a vector must have one budget per sample ({n}); got {t.numel()}")
        if not torch.isfinite(t).all() or (t < 0).any():
            raise ValueError(f"{name} must be finite and >= 0")
        return t
    raise TypeError(f"{name} must be a non-negative float or a 1-D tensor of per-sample budgets; got {type(eps).__name__}")


def check_seed(seed: object, name: str = "seed") -> int | None:
    """``None`` (no randomness needed) or a non-negative integer seed."""
    return None if seed is None else _check_seed(name, seed)
