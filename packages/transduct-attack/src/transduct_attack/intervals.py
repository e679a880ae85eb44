"""95 % intervals for the referee's numbers: Clopper-Pearson for accuracies and rates, bootstrap for a paired
difference of two attacks on the same points and for means over seeds (used to assert and to report the
paper's orderings with margins derived from the data)."""

from __future__ import annotations

import numpy as np

__all__ = ["clopper_pearson", "paired_difference", "bootstrap_mean"]


def _check_confidence(confidence: float) -> float:
    if not 0.0 < float(confidence) < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(confidence)


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval for k successes out of n (beta quantiles)."""
    from scipy.stats import beta

    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= n:
        raise ValueError(f"k must be an integer in [0, n], got {k!r}")
    a = (1.0 - _check_confidence(confidence)) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def paired_difference(a: np.ndarray, b: np.ndarray, *, seed: int = 0, n_boot: int = 10_000,
                      confidence: float = 0.95) -> tuple[float, float, float]:
    """mean(a) - mean(b) for per-sample records on the same points, and its percentile bootstrap interval
    (points resampled jointly, so the pairing is kept)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.size == 0:
        raise ValueError(f"a and b must be non-empty 1-d records of equal length, got {a.shape} and {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("a and b must be finite")
    q = (1.0 - _check_confidence(confidence)) / 2
    d = a - b
    rng = np.random.default_rng(seed)
    boots = d[rng.integers(0, d.size, size=(int(n_boot), d.size))].mean(axis=1)
    return float(d.mean()), float(np.quantile(boots, q)), float(np.quantile(boots, 1 - q))


def bootstrap_mean(values: np.ndarray, *, seed: int = 0, n_boot: int = 10_000,
                   confidence: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``values`` (e.g. one accuracy per seed) and its percentile bootstrap interval."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.size == 0 or not np.isfinite(v).all():
        raise ValueError(f"values must be a non-empty finite 1-d array, got shape {v.shape}")
    q = (1.0 - _check_confidence(confidence)) / 2
    rng = np.random.default_rng(seed)
    boots = v[rng.integers(0, v.size, size=(int(n_boot), v.size))].mean(axis=1)
    return float(v.mean()), float(np.quantile(boots, q)), float(np.quantile(boots, 1 - q))
