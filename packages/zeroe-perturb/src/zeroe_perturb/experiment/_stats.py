"""Intervals over the items of a task, resampled jointly across every condition measured on them.

An item (a text, a pair, a sentence) carries its outcome clean and under every attacker, level and attack seed.
Each attack draw is independent per item (its own item seed), so resampling items — each with all of its
outcomes — covers both which items were drawn and the attack's randomness, and keeps every comparison paired
(s(p) against s(0), attacker against attacker). A resample is a vector of item multiplicities (counts), so every
score is computed from counts: accuracy and token accuracy are weighted means, AUROC a weighted Mann-Whitney
statistic. The intervals are ``robustsuite_common.intervals.bootstrap`` (scipy, BCa) of such statistics.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from robustsuite_common.intervals import Interval, IntervalError, bootstrap


@dataclass(frozen=True, eq=False)
class Counts:
    """Item multiplicities ``c`` (``(R, n)``: one row per resample) and a ``key`` naming exactly these rows, so a
    condition's scores under them are computed once however many statistics use them."""

    c: np.ndarray
    key: bytes


_MEMO: OrderedDict[tuple, tuple[Counts, tuple[int, ...]]] = OrderedDict()


def full_sample(n: int) -> Counts:
    """Every item once (the estimate itself)."""
    return Counts(np.ones((1, n)), b"all:%d" % n)


def counts_of(idx: np.ndarray, n: int) -> tuple[Counts, tuple[int, ...]]:
    """Item multiplicities of resampled item indices ``idx`` (shape ``(..., m)``), and ``idx``'s leading shape (to
    give the statistic back in it). The same indices give the same :class:`Counts` (memoised: the bootstraps of one
    task draw the same resamples, so each condition is scored once per resample set)."""
    idx = np.asarray(idx)
    digest = hashlib.blake2b(np.ascontiguousarray(idx).tobytes(), digest_size=16).digest()
    key = (idx.shape, n, digest)
    hit = _MEMO.get(key)
    if hit is not None:
        _MEMO.move_to_end(key)
        return hit
    lead = idx.shape[:-1]
    flat = np.rint(idx.reshape(-1, idx.shape[-1])).astype(np.int64)
    rows = flat.shape[0]
    offsets = flat + (np.arange(rows, dtype=np.int64) * n)[:, None]
    counts = np.bincount(offsets.ravel(), minlength=rows * n).reshape(rows, n).astype(np.float64)
    out = (Counts(counts, b"%d:" % n + digest + repr(idx.shape).encode()), lead)
    _MEMO[key] = out
    while len(_MEMO) > 8:
        _MEMO.popitem(last=False)
    return out


def weighted_mean(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``(R,)`` means of per-item ``values`` under each row of multiplicities."""
    return counts @ values / counts.sum(axis=1)


def weighted_ratio(num: np.ndarray, den: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``(R,)`` ratios of sums (token accuracy: tokens right / tokens scored)."""
    d = counts @ den
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(d > 0, (counts @ num) / np.where(d > 0, d, 1.0), np.nan)


def binary_auroc(y: np.ndarray, score: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``(R,)`` AUROC of ``score`` for the 0/1 labels ``y`` under each row of item multiplicities: the weighted
    Mann-Whitney statistic (a positive above a negative counts 1, a tie one half), equal to
    :func:`zeroe_perturb.benchmark.auroc` on the resample; NaN where a resample holds only one class. One matrix
    product: ``sum_ij c_i c_j K_ij`` over positives i and negatives j (exact: counts and halves)."""
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y != 1)
    sp, sn = score[pos][:, None], score[neg][None, :]
    wins = (sp > sn) + 0.5 * (sp == sn)
    a, b = counts[:, pos], counts[:, neg]
    num = np.einsum("rj,rj->r", a @ wins, b)
    n_pos, n_neg = a.sum(axis=1), b.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((n_pos > 0) & (n_neg > 0), num / (n_pos * n_neg), np.nan)


def auroc_counts(y: np.ndarray, logits: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """AUROC as :func:`zeroe_perturb.benchmark.auroc` computes it (binary margin for integer labels, macro over
    the columns of a 0/1 label matrix, skipping a label without both outcomes), per row of ``counts``."""
    if y.ndim == 1:
        return binary_auroc(y, logits[:, 1] - logits[:, 0], counts)
    per_label = np.stack([binary_auroc(y[:, k], logits[:, k], counts) for k in range(y.shape[1])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a resample where no label has both outcomes: NaN
        return np.nanmean(per_label, axis=0)


def kendall_tau_b(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Kendall's τ-b between each column of ``x`` (shape ``(A, R)``) and the fixed ``ref`` (shape ``(A,)``),
    ties handled as ``scipy.stats.kendalltau`` does; NaN where either side is constant."""
    i, j = np.triu_indices(x.shape[0], k=1)
    sx = np.sign(x[i] - x[j])  # (P, R)
    sr = np.sign(ref[i] - ref[j])[:, None]
    pairs = float(len(i))
    den = np.sqrt((pairs - (sx == 0).sum(axis=0)) * (pairs - float((sr == 0).sum())))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (sx * sr).sum(axis=0) / np.where(den > 0, den, 1.0), np.nan)


def item_interval(statistic: Callable[[Counts], np.ndarray], n: int, *, seed: int, level: float,
                  n_resamples: int, bounds: tuple[float | None, float | None] = (None, None)) -> Interval | None:
    """``statistic(counts)`` (:class:`Counts` of ``R`` resamples -> ``(R,)``) with its bootstrap interval over the
    ``n`` items: BCa (``robustsuite_common.intervals.bootstrap``), else the percentile interval where BCa cannot
    hold its estimate (a statistic with few distinct values, such as τ over ten attackers); ``None`` when neither
    can (a statistic undefined on some resamples)."""
    data = np.arange(n, dtype=np.float64)

    def stat(idx: np.ndarray, axis: int = -1) -> np.ndarray:
        counts, lead = counts_of(idx, n)
        return np.asarray(statistic(counts), dtype=np.float64).reshape(lead)

    if n < 2:
        value = float(statistic(full_sample(n))[0])
        return Interval(value, value, value, level, "one item: no interval", bounds) if math.isfinite(value) else None
    for method in ("BCa", "percentile"):
        try:
            return bootstrap(data, stat, seed=seed, level=level, n_resamples=n_resamples, method=method,
                             bounds=bounds)
        except (IntervalError, ValueError):
            continue
    return None
