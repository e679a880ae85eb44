"""Independent references shared by certcal's tests: the ECE written out as loops over explicit bins, and the
hypothesis helper that draws (lower, upper, correct) instances one interval at a time."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import strategies as st


def ece_loop(z, c, n_bins):
    """ECE written out: bin m = (m/M, (m+1)/M], the first bin including 0; (1/N) sum_m |sum_{n in m}(c_n - z_n)|."""
    total = 0.0
    for m in range(n_bins):
        lo, hi = m / n_bins, (m + 1) / n_bins
        members = [(zi, ci) for zi, ci in zip(z, c, strict=True) if (lo < zi <= hi) or (m == 0 and zi == 0.0)]
        total += abs(sum(ci - zi for zi, ci in members))
    return total / len(z)


def draw_intervals(draw: Any, n: int, interval: Callable[[Any], tuple[float, float]]) -> tuple[np.ndarray, ...]:
    """``n`` samples, each an interval ``(lower, upper) = interval(draw)`` and then a 0/1 label."""
    lo, up, c = [], [], []
    for _ in range(n):
        a, b = interval(draw)
        lo.append(a)
        up.append(b)
        c.append(draw(st.integers(0, 1)))
    return np.array(lo), np.array(up), np.array(c)
