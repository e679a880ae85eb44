"""Certified confidence bounds of the smoothed soft classifier (Kumar et al. 2020; paper App. A.1, Eqs. 12-13).

For a score h in [0, 1] (here the softmax probability of the certified class) and the smoothed expectation
H(x) = E_delta h(x + delta), every perturbation ||gamma||_2 <= R satisfies, with probability >= 1 - alpha
over the n Monte-Carlo draws:

* Standard (Eq. 12): Phi(Phi^-1(H_lo) - R/sigma) <= H(x + gamma) <= Phi(Phi^-1(H_hi) + R/sigma), with
  [H_lo, H_hi] = mean -/+ e from Hoeffding's inequality;
* CDF (Eq. 13): writing H = int_0^1 P(h >= t) dt and cutting [0, 1] at thresholds a_1 < ... < a_K, on
  (a_{i-1}, a_i] P(h >= t) >= P(h >= a_i) and on (a_i, a_{i+1}] P(h >= t) <= P(h > a_i); each tail is bounded
  by its empirical value -/+ e (Dvoretzky-Kiefer-Wolfowitz, uniform in t) and shifted through Phi like the
  Standard bound: lower = sum_i (a_i - a_{i-1}) Phi(Phi^-1(P_lo(h >= a_i)) - R/sigma),
  upper = a_1 + sum_i (a_{i+1} - a_i) Phi(Phi^-1(P_hi(h > a_i)) + R/sigma) with a_0 = 0, a_{K+1} = 1. The
  strict tail matters whenever scores tie (quantised or saturated softmax) or a threshold is a sample.

Both use e = sqrt(ln(2/alpha) / (2n)): the two-sided width, since lower and upper bounds are issued
together (Kumar et al. state the one-sided ln(1/alpha) for the lower bound alone). Because DKW holds
uniformly in t, thresholds may be read off the samples: we use up to ``max_thresholds`` empirical quantiles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from robustsuite_common.checks import check_choice, check_float, check_int, check_probability

from ._validation import as_float64

__all__ = ["BOUND_METHODS", "ConfidenceBounds", "confidence_bounds"]

BOUND_METHODS = ("standard", "cdf")


@dataclass(frozen=True)
class ConfidenceBounds:
    """Lower/upper certified bounds on the smoothed confidence, shape (N,) for a scalar radius or (N, R)."""

    lower: np.ndarray = field(repr=False)
    upper: np.ndarray = field(repr=False)
    mean: np.ndarray = field(repr=False)
    radius: np.ndarray
    method: str
    sigma: float
    alpha: float

    @property
    def width(self) -> np.ndarray:
        return self.upper - self.lower

    def to_dict(self) -> dict[str, Any]:
        return {"lower": self.lower.tolist(), "upper": self.upper.tolist(), "mean": self.mean.tolist(),
                "radius": self.radius.tolist(), "method": self.method, "sigma": self.sigma, "alpha": self.alpha}


def _shift(p: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """Phi(Phi^-1(p) + shift), exact at p = 0 and p = 1."""
    from scipy.stats import norm

    return norm.cdf(norm.ppf(np.clip(p, 0.0, 1.0)) + shift)


def confidence_bounds(
    scores: Any,
    *,
    sigma: float,
    radius: Any = 0.0,
    alpha: float = 0.001,
    method: Literal["standard", "cdf"] = "cdf",
    max_thresholds: int = 4096,
) -> ConfidenceBounds:
    """Certified bounds on the expected score at every perturbation of L2 norm <= ``radius``.

    ``scores``: (N, n) Monte-Carlo scores in [0, 1] (e.g. ``certify(..., return_scores=True).scores``).
    ``radius``: scalar or 1-D array of radii (then the bounds have shape (N, R)).

    Paper: the Standard and CDF bounds of Kumar et al. (2020), Eqs. 12–13.
    """
    s = as_float64("scores", scores, ndim=2)
    if s.size and (s.min() < 0 or s.max() > 1):
        raise ValueError("scores must lie in [0, 1]")
    if s.shape[0] == 0:
        raise ValueError("scores must hold at least one input (got an empty batch)")
    if s.shape[1] == 0:
        raise ValueError("scores must hold at least one sample per input")
    check_float("sigma", sigma, gt=0)
    check_probability("alpha", alpha)
    check_choice("method", method, BOUND_METHODS)
    check_int("max_thresholds", max_thresholds, ge=1)
    r = as_float64("radius", radius, ndim=None)
    scalar = r.ndim == 0
    r = np.atleast_1d(r)
    if r.ndim != 1 or np.any(r < 0):
        raise ValueError("radius must be a non-negative scalar or 1-D array")
    n = s.shape[1]
    e = np.sqrt(np.log(2.0 / alpha) / (2.0 * n))
    shift = (r / sigma)[None, :]  # (1, R)
    mean = s.mean(axis=1)
    if method == "standard":
        lo = _shift((mean - e)[:, None], -shift)
        hi = _shift((mean + e)[:, None], shift)
    else:
        srt = np.sort(s, axis=1)
        k = min(max_thresholds, n)
        # thresholds: k empirical quantiles per input (DKW is uniform in t, so any data choice is valid)
        pos = np.unique(np.linspace(0, n - 1, k).round().astype(np.int64))
        a = srt[:, pos]  # (N, K) non-decreasing
        # empirical tails at each threshold: P(h >= a_i) bounds P(h >= t) from below for t in (a_{i-1}, a_i]
        # (lower bound) and P(h > a_i) bounds it from above for t in (a_i, a_{i+1}] (upper bound); with tied
        # or sample-valued thresholds the two differ, and using P(h >= a_i) for the upper bound is loose
        ge = np.empty(a.shape, dtype=np.int64)  # #samples >= a_i
        gt = np.empty(a.shape, dtype=np.int64)  # #samples > a_i
        for i in range(a.shape[0]):
            ge[i] = n - np.searchsorted(srt[i], a[i], side="left")
            gt[i] = n - np.searchsorted(srt[i], a[i], side="right")
        p_lo = np.clip(ge / n - e, 0.0, 1.0)
        p_hi = np.clip(gt / n + e, 0.0, 1.0)
        widths_lo = np.diff(np.concatenate([np.zeros((a.shape[0], 1)), a], axis=1), axis=1)  # a_i - a_{i-1}
        widths_hi = np.diff(np.concatenate([a, np.ones((a.shape[0], 1))], axis=1), axis=1)  # a_{i+1} - a_i
        lo = np.empty((a.shape[0], r.shape[0]))
        hi = np.empty((a.shape[0], r.shape[0]))
        for i in range(0, a.shape[0], 64):  # chunks bound the (inputs, thresholds, radii) temporaries
            sl = slice(i, i + 64)
            lo[sl] = np.einsum("nk,nkr->nr", widths_lo[sl], _shift(p_lo[sl, :, None], -shift[None]))
            # upper: [0, a_1) contributes a_1 * P(h >= 0) = a_1 (P = 1 is unchanged by the shift)
            hi[sl] = a[sl, :1] + np.einsum("nk,nkr->nr", widths_hi[sl], _shift(p_hi[sl, :, None], shift[None]))
    lo = np.clip(lo, 0.0, 1.0)
    hi = np.clip(hi, 0.0, 1.0)
    if scalar:
        lo, hi = lo[:, 0], hi[:, 0]
    return ConfidenceBounds(lower=lo, upper=hi, mean=mean, radius=r if not scalar else r[0],
                            method=method, sigma=float(sigma), alpha=float(alpha))
