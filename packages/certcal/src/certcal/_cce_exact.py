"""Exact optimum of the CCE program (6) by enumerating the signs of the bins' gaps.

|x| = max_{s in {-1, +1}} s x, so for a fixed sign s_m per bin the objective separates over samples: each
sample independently takes its best reachable bin, with its confidence at an interval end (gain
c_n - l_nm when s_m = +1, u_nm - c_n when s_m = -1); the maximum over sign patterns is the optimum.

Faster than the plain 2^M x N x M enumeration:
* a sample's reachable bins form a contiguous range [a_n, b_n]; for s_m = +1 its gain c_n - max(l_n, lo_m)
  falls with m and for s_m = -1 its gain min(u_n, hi_m) - c_n rises with m, so its value under a pattern
  only depends on p = first "+" bin >= a_n and q = last "-" bin <= b_n. Samples sharing a range (a, b) are
  pooled into a table T[a, b][p, q] (O(N M^2) once), and each pattern costs O(#ranges) look-ups;
* bins no range links split the problem into independent components, enumerated separately
  (2^M1 + 2^M2 + ... instead of 2^M); bins no sample can reach drop out.
"""

from __future__ import annotations

import numpy as np

from ._program import Program

MAX_COMPONENT_BINS = 22
_CHUNK = 1 << 15


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


def solve_exact(prog: Program) -> tuple[np.ndarray, np.ndarray, float]:
    """Return (bins, confidences, value) of an optimal solution of program (6)."""
    n, m_bins = prog.n, prog.n_bins
    reach = prog.reachable
    a = reach.argmax(axis=1)
    b = m_bins - 1 - reach[:, ::-1].argmax(axis=1)
    c = prog.correct
    idx = np.arange(n)
    # unique ranges and per-range pooled tables
    keys = a * m_bins + b
    uniq, inv = np.unique(keys, return_inverse=True)
    ra, rb = uniq // m_bins, uniq % m_bins
    tables = []
    for g in range(uniq.shape[0]):
        members = np.nonzero(inv == g)[0]
        ag, bg = int(ra[g]), int(rb[g])
        cols = np.arange(ag, bg + 1)
        gp = c[members, None] - prog.lo[members][:, cols]  # (k, w)
        gm = prog.hi[members][:, cols] - c[members, None]
        w = cols.shape[0]
        neg = np.full((members.shape[0], 1), -np.inf)
        gp = np.concatenate([gp, neg], axis=1)  # index w = "no + bin in range"
        gm = np.concatenate([gm, neg], axis=1)
        t = np.maximum(gp[:, :, None], gm[:, None, :]).sum(axis=0)  # (w+1, w+1)
        t[w, w] = -np.inf
        tables.append(t)

    best_plus = np.zeros(m_bins, dtype=bool)  # the optimal sign pattern (True = "+": c - z > 0)
    total = 0.0
    for s, e in _component_ranges(a, b, m_bins):
        width = e - s + 1
        if width > MAX_COMPONENT_BINS:
            raise ValueError(
                f"method='exact' enumerates 2^{width} sign patterns for a block of {width} linked bins; "
                f"use n_bins <= {MAX_COMPONENT_BINS} or method='admm'"
            )
        groups = [g for g in range(uniq.shape[0]) if s <= ra[g] and rb[g] <= e]
        best_val, best_pat = -np.inf, 0
        for start in range(0, 1 << width, _CHUNK):
            pats = np.arange(start, min(start + _CHUNK, 1 << width), dtype=np.int64)
            bits = ((pats[:, None] >> np.arange(width)[None, :]) & 1).astype(bool)  # (P, width)
            P = pats.shape[0]
            first_plus = np.empty((P, width + 1), dtype=np.int64)
            first_plus[:, width] = width
            for j in range(width - 1, -1, -1):
                first_plus[:, j] = np.where(bits[:, j], j, first_plus[:, j + 1])
            last_minus = np.empty((P, width), dtype=np.int64)
            prev = np.full(P, -1, dtype=np.int64)
            for j in range(width):
                prev = np.where(~bits[:, j], j, prev)
                last_minus[:, j] = prev
            vals = np.zeros(P)
            for g in groups:
                ag, bg = int(ra[g]) - s, int(rb[g]) - s
                w = bg - ag + 1
                p = first_plus[:, ag]
                p_idx = np.where(p <= bg, p - ag, w)
                q = last_minus[:, bg]
                q_idx = np.where(q >= ag, q - ag, w)
                vals += tables[g][p_idx, q_idx]
            k = int(np.argmax(vals))
            if vals[k] > best_val:
                best_val, best_pat = float(vals[k]), int(pats[k])
        total += best_val
        best_plus[s:e + 1] = ((best_pat >> np.arange(width)) & 1).astype(bool)

    # recover the per-sample choice under the optimal pattern
    gains_plus = np.where(reach & best_plus[None, :], c[:, None] - prog.lo, -np.inf)
    gains_minus = np.where(reach & ~best_plus[None, :], prog.hi - c[:, None], -np.inf)
    gains = np.maximum(gains_plus, gains_minus)
    bins = gains.argmax(axis=1)
    plus_chosen = gains_plus[idx, bins] >= gains_minus[idx, bins]
    z = np.where(plus_chosen, prog.lo[idx, bins], prog.hi[idx, bins])
    return bins, z, total / n
