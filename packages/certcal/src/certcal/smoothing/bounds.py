"""The statistics of the smoothed classifier's certificates: the one-sided Clopper-Pearson bound, the largest
radius a draw budget can certify, and PREDICT's two-sided binomial test."""

from __future__ import annotations

from typing import Any

import numpy as np

from robustsuite_common.checks import check_float, check_int, check_probability

__all__ = ["clopper_pearson_lower", "max_certifiable_radius", "two_sided_half_pvalue"]


def clopper_pearson_lower(successes: Any, trials: int, *, alpha: float) -> np.ndarray:
    """One-sided (1 - alpha) Clopper-Pearson lower bound: the Beta(alpha; k, n - k + 1) quantile (0 if k = 0).

    Vectorised over ``successes``: ``robustsuite_common.intervals.proportion_lower``.
    """
    from robustsuite_common.intervals import proportion_lower

    trials = check_int("trials", trials, ge=1)
    check_probability("alpha", alpha)
    return proportion_lower(_as_counts("successes", successes, trials), trials, alpha=alpha)


def max_certifiable_radius(*, sigma: float, n: int, alpha: float = 0.001) -> float:
    """The largest L2 radius CERTIFY can return with ``n`` draws at level ``alpha``: the radius at
    p_lower = the one-sided Clopper-Pearson bound with all ``n`` draws on one class, alpha^(1/n) (the
    Beta(alpha; n, 1) quantile), i.e. sigma * Phi^-1(alpha^(1/n)). No input, however robust, is certified
    beyond it, so a comparison at a larger radius cannot be decided by this draw budget (n = 400 at
    alpha = 0.001 caps sigma = 0.25 at about 0.53; the paper's n = 100,000 at about 0.95)."""
    from scipy.stats import norm

    sigma = check_float("sigma", sigma, gt=0)
    n = check_int("n", n, ge=1)
    alpha = check_probability("alpha", alpha)
    p = float(clopper_pearson_lower(n, n, alpha=alpha))
    return float(sigma * norm.ppf(p)) if p > 0.5 else 0.0


def _as_counts(name: str, value: Any, trials: int) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.number):
        raise TypeError(f"{name} must be integer counts, got dtype {arr.dtype}")
    if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
        raise ValueError(f"{name} must be whole numbers")
    if arr.size and (arr.min() < 0 or arr.max() > trials):
        raise ValueError(f"{name} must lie in [0, trials = {trials}], got range [{arr.min()}, {arr.max()}]")
    return arr.astype(np.int64)


def two_sided_half_pvalue(n1: np.ndarray, n2: np.ndarray) -> np.ndarray:
    """p-value of the two-sided exact binomial test of n1 successes out of n1 + n2 at p = 1/2, vectorised.

    The Binomial(n, 1/2) law is symmetric, so the outcomes at most as likely as n1 are the two tails beyond
    min(n1, n2): p = min(1, 2 P(X <= min(n1, n2))) (equals scipy.stats.binomtest(...).pvalue).
    """
    from scipy.stats import binom

    tot = n1 + n2
    pv = np.minimum(1.0, 2.0 * binom.cdf(np.minimum(n1, n2), tot, 0.5))
    return np.where(tot > 0, pv, 1.0)
