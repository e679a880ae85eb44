"""Levenshtein edit distance (unit costs), used for the change reports and Fig. 5 of the paper.

Computed by ``rapidfuzz`` (C++, bit-parallel), which accepts strings and sequences of hashables.
"""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein


def levenshtein(a: Sequence, b: Sequence) -> int:
    """Minimum number of insertions, deletions and substitutions turning ``a`` into ``b``."""
    return int(Levenshtein.distance(a, b))
