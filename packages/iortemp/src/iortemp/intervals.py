"""95 % intervals for the reported numbers: Clopper-Pearson for accuracies, percentile bootstrap for means.

The paper reports mean ± std over seeds (Tables 2-5); we report the mean with an interval so that two
numbers can be compared by whether their intervals overlap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Interval", "bootstrap_interval", "clopper_pearson", "intervals_overlap", "run_interval", "seed_interval"]


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


def run_interval(correct_per_seed: Sequence[Sequence[bool]], *, level: float = 0.95) -> Interval:
    """Per-run Clopper-Pearson interval over the n texts of each seed's run; with several seeds, the hull of
    the per-seed intervals around the mean accuracy.

    The runs of several seeds attack the *same* n texts, so their outcomes are not independent trials:
    pooling them into one binomial of n × S trials would give an interval ~sqrt(S) too narrow (for a
    deterministic attack, S copies of one run). The hull never claims more precision than one run of n.
    """
    runs = [np.asarray(c, dtype=bool).ravel() for c in correct_per_seed]
    if not runs or any(r.size == 0 for r in runs):
        raise ValueError("correct_per_seed must hold at least one non-empty run")
    ivs = [clopper_pearson(r, level=level) for r in runs]
    return Interval(float(np.mean([iv.value for iv in ivs])), min(iv.low for iv in ivs), max(iv.high for iv in ivs))


def seed_interval(values: Sequence[float] | np.ndarray, *, level: float = 0.95) -> Interval | None:
    """Student-t interval of the mean of per-seed values (the paper's mean ± std over seeds, as an interval):
    ``mean ± t_{S-1} · std / sqrt(S)``; ``None`` for a single seed (no spread to estimate). Identical values
    (a deterministic attack) give a zero-width interval: the seeds do not vary that number."""
    from scipy.stats import t as student_t

    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError("values must be a non-empty array of finite numbers")
    if not (0.0 < level < 1.0):
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if v.size == 1:
        return None
    half = float(student_t.ppf((1 + level) / 2, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size))
    return Interval(float(v.mean()), float(v.mean() - half), float(v.mean() + half))
