"""Paired bootstrap of a CCE difference between two models certified on the same test inputs (paper §5.3,
Table 2 / 7: ACT against AT on one test set).

Both models' CCE (the exact optimum of program (6), Eq. 4) are recomputed on the *same* resample of the shared
test inputs in every bootstrap draw, so what the two models have in common (which inputs are hard, which are
certified) cancels in the difference. A resample is a vector of multiplicities over the inputs; one DP pass of
the exact solver serves all draws at once (:func:`certcal._cce_exact.exact_weighted_values`). A model's CCE on a
resample is taken over the resampled inputs it certifies (its ``mask``), as :mod:`.selection` does for the
per-model intervals. The interval is robustsuite_common's BCa bootstrap over input indices.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from robustsuite_common.intervals import Interval, IntervalError

from .._cce_exact import exact_weighted_values
from .._program import build_program

__all__ = ["CertifiedSet", "cce_differences", "paired_cce_difference"]


@dataclass(frozen=True)
class CertifiedSet:
    """One model's certified calibration inputs over the N shared test inputs: its confidence bounds
    ``lower`` / ``upper`` (read where ``mask`` holds), ``correct`` (0/1) and ``mask`` (the inputs certified at
    the radius), each of shape (N,) (paper §3.3, program (6))."""

    lower: np.ndarray
    upper: np.ndarray
    correct: np.ndarray
    mask: np.ndarray

    def __post_init__(self) -> None:
        arrays = {k: np.asarray(getattr(self, k)) for k in ("lower", "upper", "correct", "mask")}
        n = arrays["mask"].shape
        for k, v in arrays.items():
            if v.ndim != 1 or v.shape != n:
                raise ValueError(f"{k} must have shape {n} like mask, got {v.shape}")
        object.__setattr__(self, "lower", arrays["lower"].astype(np.float64))
        object.__setattr__(self, "upper", arrays["upper"].astype(np.float64))
        object.__setattr__(self, "correct", arrays["correct"].astype(np.float64))
        object.__setattr__(self, "mask", arrays["mask"].astype(bool))


def _resampled_cce(s: CertifiedSet, weights: np.ndarray, n_bins: int) -> np.ndarray:
    """The exact CCE of ``s`` on each weighting (B, N) of the inputs: over the weighted certified inputs; NaN
    where a weighting gives them no weight."""
    m = s.mask
    if not m.any():
        return np.full(weights.shape[0], np.nan)
    prog = build_program(s.lower[m], s.upper[m], s.correct[m], n_bins)
    w = weights[:, m]
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, exact_weighted_values(prog, w) / total, np.nan)


def _check_sets(name: str, sets: Sequence[CertifiedSet], n: int | None) -> int:
    if not sets:
        raise ValueError(f"{name} must hold at least one CertifiedSet (one per seed)")
    for s in sets:
        if not isinstance(s, CertifiedSet):
            raise TypeError(f"{name} must hold CertifiedSet values, got {type(s).__name__}")
        if n is not None and s.mask.shape[0] != n:
            raise ValueError(f"{name}: every set must cover the same {n} test inputs, got {s.mask.shape[0]}")
        n = s.mask.shape[0]
    assert n is not None
    return n


def cce_differences(a: Sequence[CertifiedSet], b: Sequence[CertifiedSet], indices: np.ndarray, *,
                    n_bins: int = 15) -> np.ndarray:
    """``mean_s CCE(a_s) − mean_s CCE(b_s)`` on each row of ``indices`` (B, K): a resample of the N shared test
    inputs by index, the same rows for both models and every seed (the pairing; paper §5.3, Eq. 4). A row of
    ``arange(N)`` gives the difference on the data."""
    n = _check_sets("b", b, _check_sets("a", a, None))
    idx = np.asarray(indices)
    if idx.ndim == 1:
        idx = idx[None]
    if idx.ndim != 2 or idx.size == 0:
        raise ValueError(f"indices must be a non-empty (B, K) array of input indices, got shape {idx.shape}")
    idx = idx.astype(np.int64)
    if idx.min() < 0 or idx.max() >= n:
        raise ValueError(f"indices must lie in [0, {n}), got [{idx.min()}, {idx.max()}]")
    rows = np.repeat(np.arange(idx.shape[0]), idx.shape[1])
    weights = np.bincount(rows * n + idx.ravel(), minlength=idx.shape[0] * n).reshape(idx.shape[0], n)
    weights = weights.astype(np.float64)
    mean_a = np.mean([_resampled_cce(s, weights, n_bins) for s in a], axis=0)
    mean_b = np.mean([_resampled_cce(s, weights, n_bins) for s in b], axis=0)
    return mean_a - mean_b


def paired_cce_difference(a: Sequence[CertifiedSet], b: Sequence[CertifiedSet], *, n_bins: int = 15,
                          n_boot: int = 1000, seed: int = 0) -> tuple[float, Interval | None]:
    """The CCE difference ``a − b`` (means over the seeds' sets) on the shared test inputs and its paired 95 %
    BCa bootstrap interval: ``n_boot`` resamples of the inputs, each applied to both models (paper §5.3,
    Table 2 / 7). The interval is None when the bootstrap cannot place it (a resample leaves a model nothing
    certified, or BCa excludes the estimate); identical models give exactly 0 with a zero-width interval."""
    from robustsuite_common.checks import check_int
    from robustsuite_common.intervals import bootstrap

    check_int("n_bins", n_bins, ge=1)
    check_int("n_boot", n_boot, ge=1)
    check_int("seed", seed, ge=0)
    n = _check_sets("b", b, _check_sets("a", a, None))
    if not all(s.mask.any() for s in (*a, *b)):
        raise ValueError("every set of a and b must certify at least one input (mask)")
    estimate = float(cce_differences(a, b, np.arange(n), n_bins=n_bins)[0])

    def stat(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        flat = np.moveaxis(np.asarray(idx), axis, -1)
        out = cce_differences(a, b, flat.reshape(-1, flat.shape[-1]), n_bins=n_bins)
        return out.reshape(flat.shape[:-1])

    try:
        iv = bootstrap(np.arange(n, dtype=np.float64), stat, seed=seed, n_resamples=n_boot, bounds=(-1.0, 1.0))
    except (IntervalError, ValueError):
        return estimate, None
    return estimate, iv
