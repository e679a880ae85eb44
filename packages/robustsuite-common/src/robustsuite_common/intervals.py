"""One interval toolkit for every package, built on ``scipy.stats``, one signature: data first, then
keyword-only ``level`` (default 0.95), ``seed`` where resampling is involved, and ``bounds`` (the metric's
natural range) where the statistic has one.

Every function returns an :class:`Interval`, which refuses to exist when it excludes its own estimate or
leaves its metric's range: such a number cannot be right, so it is a bug, not an output.

- rates (accuracy, attack success): :func:`proportion` — exact Clopper-Pearson (``scipy.stats.binomtest``);
- means and other statistics of samples: :func:`bootstrap` — ``scipy.stats.bootstrap`` with BCa by default
  (bias-corrected: a percentile interval of a biased statistic such as a plug-in ECE can exclude the estimate);
  several arrays are resampled *jointly* (paired), which is the rule whenever two conditions are measured on
  the same items (:func:`paired_difference`);
- values over seeds: :func:`seed_interval` — Student-t, clipped to ``bounds``, and ``None`` with fewer than
  :data:`MIN_SEEDS` values (two values say nothing about the spread);
- two classifiers (or one classifier under two conditions) on the same items: :func:`mcnemar` (exact test on
  the discordant pairs), not two independent binomials.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "LEVEL",
    "MIN_SEEDS",
    "Interval",
    "IntervalError",
    "proportion",
    "bootstrap",
    "mean_interval",
    "paired_difference",
    "seed_interval",
    "McNemar",
    "mcnemar",
    "at_chance",
    "separated",
]

LEVEL = 0.95
MIN_SEEDS = 3


class IntervalError(ValueError):
    """An interval that excludes its estimate or leaves its metric's range (a bug in whatever produced it)."""


def _tol(*values: float) -> float:
    return 1e-9 * (1.0 + max(abs(v) for v in values))


@dataclass(frozen=True)
class Interval:
    """A point estimate with its two-sided interval ``[low, high]`` at ``level``.

    ``bounds`` is the metric's natural range (e.g. ``(0, 1)`` for an accuracy, ``(-1, 1)`` for Kendall's τ);
    construction fails with :class:`IntervalError` when ``low <= estimate <= high`` or the range is violated.
    """

    estimate: float
    low: float
    high: float
    level: float = LEVEL
    method: str = ""
    bounds: tuple[float | None, float | None] = (None, None)

    def __post_init__(self) -> None:
        e, lo, hi = float(self.estimate), float(self.low), float(self.high)
        if not all(math.isfinite(v) for v in (e, lo, hi)):
            raise IntervalError(f"interval values must be finite, got {e} [{lo}, {hi}] ({self.method})")
        tol = _tol(e, lo, hi)
        if not (lo - tol <= e <= hi + tol):
            raise IntervalError(f"interval [{lo:.6g}, {hi:.6g}] excludes its estimate {e:.6g} ({self.method})")
        b_lo, b_hi = self.bounds
        if (b_lo is not None and lo < b_lo - tol) or (b_hi is not None and hi > b_hi + tol):
            raise IntervalError(f"interval [{lo:.6g}, {hi:.6g}] leaves the metric's range {self.bounds} "
                                f"({self.method})")
        if not 0.0 < float(self.level) < 1.0:
            raise IntervalError(f"level must lie in (0, 1), got {self.level}")

    @property
    def ci(self) -> tuple[float, float]:
        return (float(self.low), float(self.high))

    @property
    def width(self) -> float:
        return float(self.high - self.low)

    def contains(self, value: float) -> bool:
        return float(self.low) <= float(value) <= float(self.high)

    def above(self, other: Interval) -> bool:
        """This interval lies entirely above ``other``."""
        return float(self.low) > float(other.high)

    def below(self, other: Interval) -> bool:
        return float(self.high) < float(other.low)

    def overlaps(self, other: Interval) -> bool:
        return not (self.above(other) or self.below(other))

    def scaled(self, factor: float) -> Interval:
        """The same interval in other units (e.g. ``100`` for percent)."""
        b = tuple(None if v is None else v * factor for v in self.bounds)
        lo, hi = sorted((self.low * factor, self.high * factor))
        return Interval(self.estimate * factor, lo, hi, self.level, self.method, b)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        return {"estimate": float(self.estimate), "low": float(self.low), "high": float(self.high),
                "level": float(self.level), "method": self.method,
                "bounds": [None if v is None else float(v) for v in self.bounds]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Interval:
        b = d.get("bounds") or (None, None)
        return cls(d["estimate"], d["low"], d["high"], d.get("level", LEVEL), d.get("method", ""), (b[0], b[1]))


def _check_level(level: float) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    return level


def _count(name: str, value: Any, ge: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < ge:
        raise ValueError(f"{name} must be an integer >= {ge}, got {value!r}")
    return int(value)


def proportion(k: int, n: int, *, level: float = LEVEL) -> Interval:
    """``k / n`` with its exact (Clopper-Pearson) interval, ``scipy.stats.binomtest(...).proportion_ci``."""
    from scipy.stats import binomtest

    n = _count("n", n, 1)
    k = _count("k", k)
    if k > n:
        raise ValueError(f"k must be <= n, got k={k}, n={n}")
    ci = binomtest(k, n).proportion_ci(confidence_level=_check_level(level), method="exact")
    return Interval(k / n, float(ci.low), float(ci.high), level, "Clopper-Pearson", (0.0, 1.0))


def proportion_of(outcomes: Sequence[bool] | np.ndarray, *, level: float = LEVEL) -> Interval:
    """:func:`proportion` of a vector of per-item successes (booleans or 0/1)."""
    o = np.asarray(outcomes).ravel()
    if o.size == 0:
        raise ValueError("outcomes must hold at least one item")
    if o.dtype != bool and not np.isin(o, (0, 1)).all():
        raise ValueError("outcomes must be booleans or 0/1")
    return proportion(int(o.astype(bool).sum()), int(o.size), level=level)


__all__.append("proportion_of")


def proportion_lower(k: Any, n: int, *, alpha: float) -> np.ndarray:
    """One-sided ``1 - alpha`` Clopper-Pearson lower bounds of ``k / n``, vectorised over the counts ``k`` (one
    ``scipy.stats.beta.ppf`` call): the Beta(alpha; k, n - k + 1) quantile, 0 where ``k = 0``. The lower end of
    :func:`proportion`'s two-sided interval at level ``1 - 2 alpha``."""
    from scipy.stats import beta

    n = _count("n", n, 1)
    if not 0.0 < float(alpha) < 1.0:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
    k = np.asarray(k)
    if k.size and (not np.issubdtype(k.dtype, np.integer) or k.min() < 0 or k.max() > n):
        raise ValueError(f"k must hold integer counts in [0, n={n}]")
    with np.errstate(invalid="ignore"):
        out = beta.ppf(float(alpha), k, n - k + 1)
    return np.where(k > 0, out, 0.0)


__all__.append("proportion_lower")


def _as_samples(data: Any, paired: bool = True) -> tuple[np.ndarray, ...]:
    arrays = tuple(np.asarray(a, dtype=np.float64) for a in (data if isinstance(data, tuple | list) else (data,)))
    if not arrays:
        raise ValueError("data must hold at least one array")
    n = arrays[0].shape[0] if arrays[0].ndim else 0
    for i, a in enumerate(arrays):
        if a.ndim == 0 or a.shape[0] == 0:
            raise ValueError(f"data[{i}] must be a non-empty array of samples (axis 0), got shape {a.shape}")
        if paired and a.shape[0] != n:
            raise ValueError(f"paired arrays must have the same number of samples, got {n} and {a.shape[0]}")
        if not np.isfinite(a).all():
            raise ValueError(f"data[{i}] must contain only finite values")
    return arrays


def bootstrap(data: Any, statistic: Callable[..., Any], *, seed: int, level: float = LEVEL,
              n_resamples: int = 2000, method: str = "BCa", bounds: tuple[float | None, float | None] = (None, None),
              vectorized: bool = True, paired: bool = True) -> Interval:
    """``statistic(*data)`` with its bootstrap interval (``scipy.stats.bootstrap``).

    ``data`` is one array or a tuple of arrays with the same number of samples along axis 0; a tuple is
    resampled jointly (``paired=True``, the default): sample ``i`` of every array is drawn together.
    ``paired=False`` resamples each array on its own (a stratified bootstrap of independent groups, e.g. the
    in-distribution and the outlier scores of an AUROC; the arrays may then differ in length). ``statistic`` takes
    the arrays (and ``axis=-1`` when ``vectorized``) and returns a scalar per resample. ``method`` is ``"BCa"``
    (default), ``"percentile"`` or ``"basic"``. An interval that still excludes the estimate raises
    :class:`IntervalError`: the statistic is too biased for the bootstrap (use a debiased estimator).
    Degenerate data (every resample equal) gives a zero-width interval.
    """
    from scipy.stats import bootstrap as scipy_bootstrap

    if method not in ("BCa", "percentile", "basic"):
        raise ValueError(f"method must be one of ['BCa', 'percentile', 'basic'], got {method!r}")
    arrays = _as_samples(data, paired=paired)
    n_resamples = _count("n_resamples", n_resamples, 1)
    level = _check_level(level)
    estimate = float(statistic(*arrays, axis=-1) if vectorized else statistic(*arrays))
    if not math.isfinite(estimate):
        raise ValueError(f"statistic of the data is not finite ({estimate})")
    label = f"bootstrap {method}, {n_resamples} resamples"
    if all(a.shape[0] == 1 for a in arrays) or all(np.ptp(a, axis=0).max() == 0 for a in arrays):
        return Interval(estimate, estimate, estimate, level, label + " (no variation)", bounds)
    # samples along axis 0: move them last for scipy's vectorised statistic
    moved = tuple(np.moveaxis(a, 0, -1) for a in arrays)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # BCa's degenerate-distribution warning: handled below
        res = scipy_bootstrap(moved, statistic, n_resamples=n_resamples, paired=paired and len(moved) > 1,
                              vectorized=vectorized,
                              confidence_level=level, method=method, rng=np.random.default_rng(seed),
                              axis=-1)
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    if not (math.isfinite(lo) and math.isfinite(hi)):  # BCa undefined (e.g. all resamples on one side)
        dist = res.bootstrap_distribution
        a = (1 - level) / 2
        lo, hi = float(np.quantile(dist, a)), float(np.quantile(dist, 1 - a))
        label += " (percentile fallback: BCa undefined)"
    b_lo, b_hi = bounds
    lo = lo if b_lo is None else max(lo, b_lo)
    hi = hi if b_hi is None else min(hi, b_hi)
    return Interval(estimate, lo, hi, level, label, bounds)


def _mean(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(x, axis=axis)


def mean_interval(values: Any, *, seed: int, level: float = LEVEL, n_resamples: int = 2000,
                  bounds: tuple[float | None, float | None] = (None, None)) -> Interval:
    """The mean of ``values`` with its BCa bootstrap interval."""
    return bootstrap(np.asarray(values, dtype=np.float64).ravel(), _mean, seed=seed, level=level,
                     n_resamples=n_resamples, bounds=bounds)


def paired_difference(a: Any, b: Any, *, seed: int, level: float = LEVEL, n_resamples: int = 2000,
                      bounds: tuple[float | None, float | None] = (None, None)) -> Interval:
    """``mean(a) - mean(b)`` for two measurements of the same items (per-item records, same order), with
    a bootstrap interval that resamples items (the pairing is kept)."""
    va, vb = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if va.shape != vb.shape:
        raise ValueError(f"a and b must be paired records of the same items, got {va.size} and {vb.size} values")
    return bootstrap(va - vb, _mean, seed=seed, level=level, n_resamples=n_resamples, bounds=bounds)


def seed_interval(values: Sequence[float] | np.ndarray, *, level: float = LEVEL,
                  bounds: tuple[float | None, float | None] = (None, None)) -> Interval | None:
    """Student-t interval of the mean of per-seed values, clipped to ``bounds``; ``None`` with fewer than
    :data:`MIN_SEEDS` values (report "fewer than three seeds: no interval" instead). Identical values give a
    zero-width interval (the seed does not move that number)."""
    from scipy.stats import t as student_t

    v = np.asarray(values, dtype=np.float64).ravel()
    if v.size == 0 or not np.isfinite(v).all():
        raise ValueError("values must be a non-empty array of finite numbers")
    if v.size < MIN_SEEDS:
        return None
    m = float(v.mean())
    if np.ptp(v) == 0:
        return Interval(m, m, m, level, f"Student-t over {v.size} seeds (identical values)", bounds)
    half = float(student_t.ppf((1 + _check_level(level)) / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    lo, hi = m - half, m + half
    b_lo, b_hi = bounds
    lo = lo if b_lo is None else max(lo, b_lo)
    hi = hi if b_hi is None else min(hi, b_hi)
    return Interval(m, lo, hi, level, f"Student-t over {v.size} seeds", bounds)


@dataclass(frozen=True)
class McNemar:
    """Exact McNemar test of two paired binary outcomes: ``only_a`` items where only ``a`` holds, ``only_b``
    where only ``b`` does; ``p_value`` of the two-sided exact binomial test on the discordant pairs;
    ``difference``: ``mean(a) - mean(b)`` with a paired bootstrap interval."""

    n: int
    only_a: int
    only_b: int
    p_value: float
    difference: Interval

    def significant(self, alpha: float = 1 - LEVEL) -> bool:
        return self.p_value < alpha

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "only_a": self.only_a, "only_b": self.only_b, "p_value": self.p_value,
                "difference": self.difference.to_dict()}


def mcnemar(a: Any, b: Any, *, seed: int = 0, level: float = LEVEL, n_resamples: int = 2000) -> McNemar:
    """McNemar's exact test for paired binary outcomes ``a`` and ``b`` (e.g. "attack succeeded" on the same
    texts under two temperatures), with the paired difference of their rates."""
    from scipy.stats import binomtest

    va, vb = np.asarray(a).ravel(), np.asarray(b).ravel()
    for name, v in (("a", va), ("b", vb)):
        if v.size == 0 or (v.dtype != bool and not np.isin(v, (0, 1)).all()):
            raise ValueError(f"{name} must be a non-empty vector of booleans or 0/1")
    if va.shape != vb.shape:
        raise ValueError(f"a and b must be paired outcomes on the same items, got {va.size} and {vb.size}")
    va, vb = va.astype(bool), vb.astype(bool)
    only_a, only_b = int((va & ~vb).sum()), int((~va & vb).sum())
    p = 1.0 if only_a + only_b == 0 else float(binomtest(only_a, only_a + only_b, 0.5).pvalue)
    diff = paired_difference(va, vb, seed=seed, level=level, n_resamples=n_resamples, bounds=(-1.0, 1.0))
    return McNemar(int(va.size), only_a, only_b, min(1.0, p), diff)


def at_chance(k: int, n: int, chance: float, *, level: float = LEVEL) -> bool:
    """Whether ``k`` successes in ``n`` trials are compatible with the chance rate ``chance`` (the majority
    class share for an accuracy, 0.5 for an AUROC): ``chance`` lies inside the Clopper-Pearson interval, or
    the rate is below it. A model at chance gives attack numbers that carry no information."""
    iv = proportion(k, n, level=level)
    return bool(iv.low <= chance)


def separated(a: Interval, b: Interval) -> bool:
    """Whether two intervals do not overlap (a difference the data resolve, for independent samples)."""
    return not a.overlaps(b)
