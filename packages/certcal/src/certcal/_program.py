"""The mixed-integer program (6) of the paper in a dense (N, M) layout.

Sample n may be put in bin m (edges [lo_m, hi_m]) when the bin meets its certified interval [l_n, u_n];
its bin-specific confidence then ranges over [l_nm, u_nm] = [max(l_n, lo_m), min(u_n, hi_m)] (Confidence
and Valid Assignment constraints, §3.3). Bins are right-closed like the ECE's, so bin m > 0 is reachable
only when u_n > lo_m (a sample whose interval ends on an edge, e.g. l_n = u_n = k/M, has a determined bin);
the left end lo_m stays in the box as the supremum of the worst-case ECE; returned confidences are nudged by ``EDGE_NUDGE`` into the half-open
ECE bins of ``certcal.metrics`` where the interval allows it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .metrics import bin_edges

EDGE_NUDGE = 1e-9


@dataclass(frozen=True)
class Program:
    lower: np.ndarray  # (N,)
    upper: np.ndarray  # (N,)
    correct: np.ndarray  # (N,) float 0/1
    n_bins: int
    lo: np.ndarray  # (N, M) l_nm (0 where unreachable)
    hi: np.ndarray  # (N, M) u_nm (0 where unreachable)
    reachable: np.ndarray  # (N, M) bool (complement of the paper's k_nm)

    @property
    def n(self) -> int:
        return int(self.lower.shape[0])


def build_program(lower: np.ndarray, upper: np.ndarray, correct: np.ndarray, n_bins: int) -> Program:
    edges = bin_edges(n_bins=n_bins)
    lo_m, hi_m = edges[:-1], edges[1:]
    lo = np.maximum(lower[:, None], lo_m[None, :])
    hi = np.minimum(upper[:, None], hi_m[None, :])
    # bins are right-closed, (lo_m, hi_m] (bin 0 also holds 0): bin m > 0 needs a point of [l_n, u_n] strictly
    # above lo_m, so an interval ending exactly on an edge (in particular a zero-width one) cannot reach the
    # bin to the right of that edge
    reach = (lo <= hi) & ((np.arange(n_bins) == 0)[None, :] | (upper[:, None] > lo_m[None, :]))
    lo = np.where(reach, lo, 0.0)
    hi = np.where(reach, hi, 0.0)
    return Program(lower, upper, correct, n_bins, lo, hi, reach)


def objective(prog: Program, bins: np.ndarray, z: np.ndarray) -> float:
    """(1/N) sum_m |sum_{n in bin m} (c_n - z_n)|: the program's objective at a feasible point."""
    gaps = np.bincount(bins, weights=prog.correct - z, minlength=prog.n_bins)
    return float(np.abs(gaps).sum() / prog.n)


def best_confidences(prog: Program, bins: np.ndarray) -> tuple[np.ndarray, float]:
    """For a fixed assignment, the optimal confidences in closed form.

    |sum_n (c_n - z_n)| is convex in z, so per bin its maximum over the box is at all-lower or all-upper
    ends: max(sum (c - l_nm), sum (u_nm - c)).
    """
    idx = np.arange(prog.n)
    lo = prog.lo[idx, bins]
    hi = prog.hi[idx, bins]
    c = prog.correct
    plus = np.bincount(bins, weights=c - lo, minlength=prog.n_bins)
    minus = np.bincount(bins, weights=hi - c, minlength=prog.n_bins)
    use_lower = plus >= minus
    z = np.where(use_lower[bins], lo, hi)
    return z, float(np.maximum(plus, minus).sum() / prog.n)


def check_feasible(prog: Program, bins: np.ndarray, z: np.ndarray, tol: float = 1e-9) -> bool:
    idx = np.arange(prog.n)
    if bins.shape != (prog.n,) or bins.min() < 0 or bins.max() >= prog.n_bins:
        return False
    if not prog.reachable[idx, bins].all():
        return False
    return bool(np.all(z >= prog.lower - tol) and np.all(z <= prog.upper + tol)
                and np.all(z >= prog.lo[idx, bins] - tol) and np.all(z <= prog.hi[idx, bins] + tol))


def nudge_into_bins(prog: Program, bins: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Move confidences sitting on a bin's left edge (which ECE bins exclude) just inside the bin."""
    edges = bin_edges(n_bins=prog.n_bins)
    left = edges[bins]
    idx = np.arange(prog.n)
    room = prog.hi[idx, bins] - z
    on_edge = (bins > 0) & (np.abs(z - left) <= 1e-12) & (room > 0)
    step = np.minimum(EDGE_NUDGE, room / 2)
    return np.where(on_edge, z + step, z)
