"""Levenshtein edit distance (unit costs), used for the change reports and Fig. 5 of the paper."""

from __future__ import annotations

from collections.abc import Sequence


def levenshtein(a: Sequence, b: Sequence) -> int:
    """Minimum number of insertions, deletions and substitutions turning ``a`` into ``b``."""
    if a == b:
        return 0
    # common prefix and suffix never need an edit: strip them before the O(n·m) table
    i, n, m = 0, len(a), len(b)
    while i < n and i < m and a[i] == b[i]:
        i += 1
    while n > i and m > i and a[n - 1] == b[m - 1]:
        n -= 1
        m -= 1
    a, b = a[i:n], b[i:m]
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]
