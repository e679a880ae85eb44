"""95 % intervals for the report (robustsuite convention): Clopper-Pearson for accuracies and rates,
percentile bootstrap for other means (MUS, entropies, paired differences)."""

from __future__ import annotations

import numpy as np

from ._validation import check_positive_int

__all__ = ["clopper_pearson", "bootstrap_mean_ci", "paired_difference_ci"]


def _level(level: float) -> float:
    level = float(level)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1); got {level!r}")
    return level


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval for ``k`` successes in ``n`` trials (beta quantiles)."""
    from scipy.stats import beta  # scipy comes with scikit-learn, a dependency; imported lazily

    n = check_positive_int(n, "n")
    k = check_positive_int(k, "k", minimum=0)
    if k > n:
        raise ValueError(f"k must be <= n; got k={k}, n={n}")
    a = 1 - _level(level)
    lo = 0.0 if k == 0 else float(beta.ppf(a / 2, k, n - k + 1))
    hi = 1.0 if k == n else float(beta.ppf(1 - a / 2, k + 1, n - k))
    return lo, hi


def _values(values: object, name: str) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.size == 0 or not np.isfinite(v).all():
        raise ValueError(f"{name} must be a non-empty finite 1-D array")
    return v


def bootstrap_mean_ci(values: object, *, seed: int = 0, n_boot: int = 2000, level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (resampling with replacement, a seeded
    ``numpy.random.Generator``; chunked so memory stays small)."""
    v = _values(values, "values")
    n_boot = check_positive_int(n_boot, "n_boot")
    a = 1 - _level(level)
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    chunk = max(1, 2_000_000 // v.size)
    for i in range(0, n_boot, chunk):
        m = min(chunk, n_boot - i)
        means[i : i + m] = v[rng.integers(0, v.size, size=(m, v.size))].mean(1)
    return float(np.quantile(means, a / 2)), float(np.quantile(means, 1 - a / 2))


def paired_difference_ci(a: object, b: object, *, seed: int = 0, n_boot: int = 2000,
                         level: float = 0.95) -> tuple[float, float, float]:
    """Mean of ``a − b`` over paired samples with its bootstrap interval: ``(mean, low, high)``."""
    va, vb = _values(a, "a"), _values(b, "b")
    if va.shape != vb.shape:
        raise ValueError(f"a and b must be paired (same length); got {va.size} and {vb.size}")
    d = va - vb
    lo, hi = bootstrap_mean_ci(d, seed=seed, n_boot=n_boot, level=level)
    return float(d.mean()), lo, hi
