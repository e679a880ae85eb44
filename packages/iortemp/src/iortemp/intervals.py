"""95 % intervals for the reported numbers: Clopper-Pearson for accuracies, percentile bootstrap for means.

The paper reports mean ± std over seeds (Tables 2-5); we report the mean with an interval so that two
numbers can be compared by whether their intervals overlap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Interval", "bootstrap_interval", "clopper_pearson", "intervals_overlap"]


@dataclass(frozen=True)
class Interval:
    """A point estimate with its 95 % interval ``[low, high]``."""

    value: float
    low: float
    high: float

    def to_dict(self) -> dict:
        return {"value": self.value, "ci_low": self.low, "ci_high": self.high}

    def above(self, other: Interval) -> bool:
        """True when this interval lies entirely above ``other`` (no overlap)."""
        return self.low > other.high

    def below(self, other: Interval) -> bool:
        return self.high < other.low


def clopper_pearson(correct: Sequence[bool] | np.ndarray, *, level: float = 0.95) -> Interval:
    """Exact binomial (Clopper-Pearson) interval of a rate from per-trial booleans (pooled over seeds)."""
    from scipy.stats import binomtest

    c = np.asarray(correct, dtype=bool).ravel()
    if c.size == 0:
        raise ValueError("correct must hold at least one trial")
    if not (0.0 < level < 1.0):
        raise ValueError(f"level must lie in (0, 1), got {level}")
    ci = binomtest(int(c.sum()), int(c.size)).proportion_ci(confidence_level=level, method="exact")
    return Interval(float(c.mean()), float(ci.low), float(ci.high))


def bootstrap_interval(
    values: Sequence[float] | np.ndarray, *, level: float = 0.95, n_boot: int = 4000, seed: int = 0
) -> Interval:
    """Percentile-bootstrap interval of the mean of ``values`` (e.g. per-sample paired differences)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError("values must be a non-empty array of finite numbers")
    if not (0.0 < level < 1.0):
        raise ValueError(f"level must lie in (0, 1), got {level}")
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, v.size, size=(int(n_boot), v.size))].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return Interval(float(v.mean()), float(lo), float(hi))


def intervals_overlap(a: Interval, b: Interval) -> bool:
    """Whether two intervals share a point (then the report says the difference is not resolved)."""
    return not (a.above(b) or a.below(b))
