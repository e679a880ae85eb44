"""Argument checks shared by the public functions (raised before any expensive work)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

T_MIN = 1e-3
T_MAX = 1e7


def check_temperature(temperature: float, name: str = "temperature") -> float:
    """Return ``temperature`` as a float after checking it is a finite positive number."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float, np.floating, np.integer)):
        raise TypeError(f"{name} must be a positive real number, got {type(temperature).__name__}")
    t = float(temperature)
    if not math.isfinite(t) or t <= 0.0:
        raise ValueError(f"{name} must be a finite number > 0, got {temperature!r}")
    return t


def check_logits_labels(logits, labels, name: str = "logits") -> tuple[np.ndarray, np.ndarray]:
    """Validate a (N, K) logit matrix and N integer labels in [0, K); return float64 / int64 arrays."""
    arr = np.asarray(_to_numpy(logits), dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] < 2:
        raise ValueError(f"{name} must have shape (N, K) with N >= 1 and K >= 2, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    lab = np.asarray(_to_numpy(labels))
    if lab.ndim != 1 or lab.shape[0] != arr.shape[0]:
        raise ValueError(f"labels must have shape ({arr.shape[0]},), got {lab.shape}")
    if lab.dtype.kind not in "iu":
        raise TypeError(f"labels must be integers, got dtype {lab.dtype}")
    if lab.min() < 0 or lab.max() >= arr.shape[1]:
        raise ValueError(f"labels must lie in [0, {arr.shape[1]}), got range [{lab.min()}, {lab.max()}]")
    return arr, lab.astype(np.int64)


def check_choice(value: str, allowed: Sequence[str], name: str) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")
    return value


def check_positive_int(value: int, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def _to_numpy(x):
    try:
        import torch

        if isinstance(x, torch.Tensor):
            return x.detach().cpu().numpy()
    except ImportError:  # pragma: no cover
        pass
    return x
