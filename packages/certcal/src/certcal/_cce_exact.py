"""Exact optimum of the CCE program (6) through the signs of the bins' gaps.

|x| = max_{s in {-1, +1}} s x, so for a fixed sign s_m per bin the objective separates over samples: each
sample independently takes its best reachable bin, with its confidence at an interval end (gain
c_n - l_nm when s_m = +1, u_nm - c_n when s_m = -1); the maximum over sign patterns is the optimum.

Faster than the plain 2^M x N x M enumeration:
* a sample's reachable bins form a contiguous range [a_n, b_n]; for s_m = +1 its gain c_n - max(l_n, lo_m)
  falls with m and for s_m = -1 its gain min(u_n, hi_m) - c_n rises with m, so its value under a pattern
  only depends on p = first "+" bin >= a_n and q = last "-" bin <= b_n. Samples sharing a range (a, b) are
  pooled into a table T[a, b][p, q] (O(N M^2) once), and each pattern costs O(#ranges) look-ups;
* bins no range links split the problem into independent components, solved separately; bins no sample
  can reach drop out;
* within a component, a dynamic programme over the bins, left to right, whose state is the signs of the last
  W - 1 bins (W = the widest sample range): a range's value is added when the scan reaches its last bin, at
  which point all its signs are in the window. Cost O(M 2^W + R 2^W) for R distinct ranges, instead of
  2^M patterns: exponential only in how many bins one sample can reach, not in the number of bins.
"""

from __future__ import annotations

import numpy as np

from ._program import Program

MAX_WINDOW = 22


def _component_ranges(a: np.ndarray, b: np.ndarray, n_bins: int) -> list[tuple[int, int]]:
    """Maximal bin intervals [s, e] such that no sample range crosses a boundary between components."""
    linked = np.zeros(n_bins, dtype=bool)  # linked[m]: some range contains both m and m + 1
    for lo_, hi_ in zip(a, b, strict=True):
        if hi_ > lo_:
            linked[lo_:hi_] = True
    used = np.zeros(n_bins, dtype=bool)
    used[a] = True
    used[b] = True
    comps: list[tuple[int, int]] = []
    m = 0
    while m < n_bins:
        if not used[m] and not linked[m] and (m == 0 or not linked[m - 1]):
            m += 1
            continue
        s = m
        while m < n_bins - 1 and linked[m]:
            m += 1
        comps.append((s, m))
        m += 1
    return comps


def _range_values(prog: Program) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[np.ndarray],
                                         list[np.ndarray]]:
    """The samples' reachable ranges ``[a_n, b_n]``, the distinct ranges ``(ra, rb)``, per range its members
    (sample indices) and the members' values ``V[k, p, q]`` under (first "+" bin p, last "-" bin q) of
    the range (index w: none; the impossible "neither" cell [w, w] is 0 here, -inf in a table)."""
    m_bins = prog.n_bins
    reach = prog.reachable
    a = reach.argmax(axis=1)
    b = m_bins - 1 - reach[:, ::-1].argmax(axis=1)
    c = prog.correct
    uniq, inv = np.unique(a * m_bins + b, return_inverse=True)
    ra, rb = uniq // m_bins, uniq % m_bins
    values, groups = [], []
    for g in range(uniq.shape[0]):
        members = np.nonzero(inv == g)[0]
        groups.append(members)
        cols = np.arange(int(ra[g]), int(rb[g]) + 1)
        gp = c[members, None] - prog.lo[members][:, cols]  # (k, w)
        gm = prog.hi[members][:, cols] - c[members, None]
        neg = np.full((members.shape[0], 1), -np.inf)
        gp = np.concatenate([gp, neg], axis=1)  # index w = "no + bin in range"
        gm = np.concatenate([gm, neg], axis=1)
        v = np.maximum(gp[:, :, None], gm[:, None, :])  # (k, w+1, w+1)
        v[:, -1, -1] = 0.0
        values.append(v)
    return a, b, ra, rb, groups, values


def _components(a: np.ndarray, b: np.ndarray, ra: np.ndarray, rb: np.ndarray,
                m_bins: int) -> list[tuple[int, int, list[int], int]]:
    """Per independent component of bins ``[s, e]``: its ranges and the DP window (checked against
    :data:`MAX_WINDOW`)."""
    out = []
    for s, e in _component_ranges(a, b, m_bins):
        groups = [g for g in range(ra.shape[0]) if s <= ra[g] and rb[g] <= e]
        width = max(int(rb[g] - ra[g]) + 1 for g in groups)
        if width > MAX_WINDOW:
            raise ValueError(
                f"method='exact' needs 2^{width} states: some sample can reach {width} of the bins; "
                f"use fewer bins (at most {MAX_WINDOW} reachable per sample) or method='admm'"
            )
        out.append((s, e, groups, max(width, 2)))
    return out


def solve_exact(prog: Program) -> tuple[np.ndarray, np.ndarray, float]:
    """Return (bins, confidences, value) of an optimal solution of program (6)."""
    n, m_bins = prog.n, prog.n_bins
    reach = prog.reachable
    c = prog.correct
    idx = np.arange(n)
    a, b, ra, rb, _, values = _range_values(prog)
    tables = []
    for v in values:
        t = v.sum(axis=0)
        t[-1, -1] = -np.inf
        tables.append(t[None])

    best_plus = np.zeros(m_bins, dtype=bool)  # the optimal sign pattern (True = "+": c - z > 0)
    total = 0.0
    for s, e, groups, w in _components(a, b, ra, rb, m_bins):
        val, signs = _window_dp(s, e, groups, ra, rb, tables, w, signs=True)
        total += float(val[0])
        best_plus[s:e + 1] = signs
    # recover the per-sample choice under the optimal pattern
    gains_plus = np.where(reach & best_plus[None, :], c[:, None] - prog.lo, -np.inf)
    gains_minus = np.where(reach & ~best_plus[None, :], prog.hi - c[:, None], -np.inf)
    gains = np.maximum(gains_plus, gains_minus)
    bins = gains.argmax(axis=1)
    plus_chosen = gains_plus[idx, bins] >= gains_minus[idx, bins]
    z = np.where(plus_chosen, prog.lo[idx, bins], prog.hi[idx, bins])
    return bins, z, total / n


def exact_weighted_values(prog: Program, weights: np.ndarray, *, max_states: int = 1 << 22) -> np.ndarray:
    """The optimum of program (6) for each row of ``weights`` (B, N): sample n counted ``weights[i, n]`` times
    (a bootstrap resample as multiplicities), as the sum ``max_pattern sum_n w_n gain_n`` (divide by the row's
    total weight for the CCE). One DP pass serves all rows (vectorised over rows, in chunks of at most
    ``max_states`` DP cells); a row of ones gives ``solve_exact``'s value times N."""
    w_all = np.asarray(weights, dtype=np.float64)
    if w_all.ndim != 2 or w_all.shape[1] != prog.n:
        raise ValueError(f"weights must have shape (B, {prog.n}), got {w_all.shape}")
    a, b, ra, rb, members, values = _range_values(prog)
    comps = _components(a, b, ra, rb, prog.n_bins)
    widest = max(w for *_, w in comps)
    chunk = max(1, max_states >> widest)
    out = np.zeros(w_all.shape[0])
    for lo in range(0, w_all.shape[0], chunk):
        wb = w_all[lo:lo + chunk]
        tables = []
        for v, mem in zip(values, members, strict=True):
            t = np.tensordot(wb[:, mem], v, axes=1)  # (b, w+1, w+1)
            t[:, -1, -1] = -np.inf
            tables.append(t)
        for s, e, groups, w in comps:
            out[lo:lo + chunk] += _window_dp(s, e, groups, ra, rb, tables, w)[0]
    return out


def _window_dp(s: int, e: int, groups: list[int], ra: np.ndarray, rb: np.ndarray, tables: list[np.ndarray],
               w: int, *, signs: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """Best value of bins s..e for each of the B stacked tables (``tables[g]``: (B, w_g+1, w_g+1)) by a DP whose
    state is the last w - 1 signs (see module docstring); with ``signs``, also the best sign pattern of the
    first table."""
    n_full = 1 << w
    full = np.arange(n_full, dtype=np.int64)
    bits = ((full[:, None] >> np.arange(w)[None, :]) & 1).astype(bool)  # column j = position m - w + 1 + j
    first_plus = np.empty((n_full, w + 1), dtype=np.int64)
    first_plus[:, w] = w
    for j in range(w - 1, -1, -1):
        first_plus[:, j] = np.where(bits[:, j], j, first_plus[:, j + 1])
    last_minus = np.full(n_full, -1, dtype=np.int64)
    for j in range(w):
        last_minus = np.where(~bits[:, j], j, last_minus)
    closing: dict[int, list[int]] = {}
    for g in groups:
        closing.setdefault(int(rb[g]), []).append(g)
    mask = (1 << (w - 1)) - 1
    n_rows = tables[groups[0]].shape[0]
    dp = np.zeros((n_rows, 1 << (w - 1)))
    choices = []
    for m in range(s, e + 1):
        vals = np.zeros((n_rows, n_full))
        for g in closing.get(m, []):
            ja = int(ra[g]) - (m - w + 1)  # column of the range start in the window
            width = m - int(ra[g]) + 1
            p = first_plus[:, ja]
            p_idx = np.where(p < w, p - ja, width)
            q_idx = np.where(last_minus >= ja, last_minus - ja, width)
            vals += tables[g][:, p_idx, q_idx]
        tot = dp[:, full & mask] + vals
        pair = tot.reshape(n_rows, -1, 2)  # new state f >> 1 from f = 2 s' + (sign of the dropped oldest position)
        dp = np.maximum(pair[:, :, 0], pair[:, :, 1])
        if signs:  # the first maximum, as argmax picks it
            choices.append((pair[0, :, 1] > pair[0, :, 0]).astype(np.int64))
    best = dp.max(axis=1)
    if not signs:
        return best, None
    state = int(np.argmax(dp[0]))
    pattern = np.zeros(e - s + 1, dtype=bool)
    for m in range(e, s - 1, -1):
        pattern[m - s] = bool((state >> (w - 2)) & 1)
        f = 2 * state + int(choices[m - s][state])
        state = f & mask
    return best, pattern
