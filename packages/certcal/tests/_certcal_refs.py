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


def interval_instances(*, n: tuple[int, int], n_bins: tuple[int, int],
                       interval: Callable[[Any, int], tuple[float, float]]) -> st.SearchStrategy:
    """Instances ``(lower, upper, correct, n_bins)``: ``n_bins`` and the number of samples drawn from their
    ranges, each sample an interval ``(lower, upper) = interval(draw, n_bins)`` and then a 0/1 label."""

    @st.composite
    def instances(draw: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        bins = draw(st.integers(*n_bins))
        lo, up, c = [], [], []
        for _ in range(draw(st.integers(*n))):
            a, b = interval(draw, bins)
            lo.append(a)
            up.append(b)
            c.append(draw(st.integers(0, 1)))
        return np.array(lo), np.array(up), np.array(c), bins

    return instances()
