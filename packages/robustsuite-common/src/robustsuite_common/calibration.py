"""The expected calibration error with one bin convention, netcal's (Küppers et al. 2020, ``netcal.metrics.ECE``).

Convention: ``M`` equal-width bins with edges ``numpy.linspace(0, 1, M + 1)``, each half-open on the right,
``[e_m, e_{m+1})``, the last one closed; confidences are first clipped to ``[ε, 1 − ε]`` (ε the float64 machine
epsilon), as netcal does, so 0 falls into the first bin and 1 into the last. The ECE is
``Σ_m |B_m|/N · |acc(B_m) − conf(B_m)|`` with ``conf`` the bins' mean (clipped) confidence, i.e.
``(1/N) Σ_m |Σ_{n ∈ B_m} (c_n − z_n)|``. ``tests/test_calibration.py`` holds it equal to netcal on fixed inputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["bin_edges", "bin_index", "clip_confidences", "expected_calibration_error"]

_EPS = float(np.finfo(np.float64).eps)


def bin_edges(*, n_bins: int = 15) -> np.ndarray:
    """The ``n_bins + 1`` edges of the equal-width bins: ``numpy.linspace(0, 1, n_bins + 1)``."""
    return np.linspace(0.0, 1.0, n_bins + 1)


def clip_confidences(confidences: Any) -> np.ndarray:
    """``confidences`` as float64, clipped to ``[ε, 1 − ε]`` like netcal (so 1.0 lies inside the last bin)."""
    return np.clip(np.asarray(confidences, dtype=np.float64), _EPS, 1.0 - _EPS)


def bin_index(confidences: Any, *, n_bins: int = 15) -> np.ndarray:
    """The bin of each confidence: ``m`` with ``edges[m] <= z < edges[m + 1]`` after the clip (int64)."""
    z = clip_confidences(confidences)
    idx = np.searchsorted(bin_edges(n_bins=n_bins), z, side="right") - 1
    return np.clip(idx, 0, n_bins - 1).astype(np.int64)


def expected_calibration_error(confidences: Any, correct: Any, *, n_bins: int = 15) -> float:
    """ECE of top-label ``confidences`` in [0, 1] against 0/1 ``correct`` (same length, non-empty), in netcal's
    bin convention (module docstring). Inputs are not checked here: callers validate with their own messages."""
    z = clip_confidences(confidences).reshape(-1)
    c = np.asarray(correct, dtype=np.float64).reshape(-1)
    gaps = np.bincount(bin_index(z, n_bins=n_bins), weights=c - z, minlength=n_bins)
    return float(np.abs(gaps).sum() / z.shape[0])
