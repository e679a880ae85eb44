"""Levenshtein edit distance (unit costs), used for the change reports and Fig. 5 of the paper.

Computed by ``rapidfuzz`` (C++, bit-parallel), which accepts strings and sequences of hashables.
"""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz.distance import Levenshtein


def levenshtein(a: Sequence, b: Sequence) -> int:
    """Minimum number of insertions, deletions and substitutions turning ``a`` into ``b`` (two strings, or two
    sequences of hashable items such as phonemes)."""
    for name, value in (("a", a), ("b", b)):
        if not isinstance(value, str | Sequence):
            raise TypeError(f"{name} must be a str or a sequence, got {type(value).__name__}")
    return int(Levenshtein.distance(a, b))
