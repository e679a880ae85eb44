"""95 % intervals for report numbers (BRIEF convention: ``NAME``, ``NAME_ci_low``, ``NAME_ci_high``).

Clopper-Pearson for accuracies and rates, percentile bootstrap over samples for other means, Student-t across
seeds for ``--seeds N``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

LEVEL = 0.95


def clopper_pearson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Exact binomial interval for ``k`` successes in ``n`` trials (robustsuite_common's ``proportion``)."""
    from robustsuite_common.intervals import proportion

    return proportion(k, n, level=level).ci


def bootstrap(statistic: Callable[[np.ndarray], np.ndarray], n: int, *, seed: int, n_boot: int = 1000,
              level: float = LEVEL) -> tuple[float, float]:
    """Percentile bootstrap interval over ``n`` samples.

    ``statistic(weights)`` gets a (B, n) matrix of resampling counts (row b: how often each sample is drawn)
    and returns the B resampled statistics — vectorised, no Python loop over resamples.
    """
    if n <= 0 or n_boot <= 0:
        raise ValueError(f"need n > 0 and n_boot > 0, got n={n}, n_boot={n_boot}")
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(np.float64)
    stats = np.asarray(statistic(weights), dtype=np.float64)
    a = (1 - level) / 2
    return float(np.quantile(stats, a)), float(np.quantile(stats, 1 - a))


def bootstrap_calibration(conf, correct, n_bins: int, *, seed: int, n_boot: int) -> dict[str, tuple[float, float]]:
    """Percentile-bootstrap 95 % intervals of ECE (equal-width bins, certcal's Eq. 1) and top-label Brier, over
    the samples (``conf``: top-class probabilities, ``correct``: 0/1 floats); vectorised through :func:`bootstrap`,
    the Brier resamples drawn with ``seed + 1``."""
    import certcal

    n = len(conf)
    gap = conf - correct
    onehot = np.zeros((n, n_bins))
    onehot[np.arange(n), certcal.bin_index(conf, n_bins)] = 1.0
    ece = bootstrap(lambda w: np.abs((w * gap) @ onehot).sum(1) / n, n, seed=seed, n_boot=n_boot)
    brier = bootstrap(lambda w: (w @ gap**2) / n, n, seed=seed + 1, n_boot=n_boot)
    return {"ece": ece, "brier": brier}


def t_interval(values: Sequence[float], level: float = LEVEL) -> tuple[float, float, float]:
    """Mean and Student-t interval of per-seed values (``(mean, lo, hi)``; lo = hi = mean for one value)."""
    from scipy.stats import t

    v = np.asarray(values, dtype=np.float64)
    m = float(v.mean())
    if len(v) < 2:
        return m, m, m
    half = float(t.ppf(1 - (1 - level) / 2, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v)))
    return m, m - half, m + half


def with_interval(metrics: dict, name: str, value: float, lo: float, hi: float) -> dict:
    """Write ``name`` with its interval into ``metrics`` under the BRIEF naming convention."""
    metrics[name], metrics[f"{name}_ci_low"], metrics[f"{name}_ci_high"] = value, lo, hi
    return metrics


def separated(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether two intervals do not overlap."""
    return a[1] < b[0] or b[1] < a[0]
