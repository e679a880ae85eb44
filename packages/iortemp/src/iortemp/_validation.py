"""Argument checks (raised before any expensive work): the shared ones from :mod:`robustsuite_common.checks`
(one signature, name first) plus the two this package needs: a temperature and a logit matrix with labels."""

from __future__ import annotations

import numpy as np

from robustsuite_common.checks import (
    check_finite_array,
    check_float,
    check_labels,
)

__all__ = ["T_MIN", "T_MAX", "check_logits_labels", "check_temperature", "is_texts"]

T_MIN = 1e-3  # the range of temperatures tested to give finite outputs (ARCHITECTURE.md, "Numerics")
T_MAX = 1e7


def check_temperature(temperature, name: str = "temperature") -> float:
    """``temperature`` as a float: a finite number > 0 (TypeError for a non-number, ValueError otherwise)."""
    return check_float(name, temperature, gt=0.0)


def check_logits_labels(logits, labels, name: str = "logits") -> tuple[np.ndarray, np.ndarray]:
    """A finite (N, K) logit matrix (N >= 1, K >= 2) and N integer labels in [0, K), as float64 / int64."""
    arr = check_finite_array(name, logits, ndim=2)
    if arr.shape[0] == 0 or arr.shape[1] < 2:
        raise ValueError(f"{name} must have shape (N, K) with N >= 1 and K >= 2, got {arr.shape}")
    return arr, check_labels("labels", labels, n_classes=arr.shape[1], length=arr.shape[0])


def is_texts(inputs) -> bool:
    """Whether ``inputs`` is meant as texts (anything but a tensor); a bare string is refused by the caller."""
    return not (type(inputs).__module__.startswith("torch") and hasattr(inputs, "detach"))
