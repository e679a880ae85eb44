"""The shuffling attackers (§3.2, Rayner et al.): :class:`InnerShuffle` and :class:`FullShuffle`. Letters are
grapheme clusters: an accent moves with its letter."""

from __future__ import annotations

import random

from .._tokens import clusters
from .base import Attacker
from .streams import sample


def _shuffle_changed(chars: list[str], rng: random.Random, ensure_change: bool) -> list[str]:
    """A uniformly random permutation; with ``ensure_change`` one that differs from the input
    (rejection sampling, i.e. uniform over the changing permutations) whenever one exists."""
    if len(chars) < 2:
        return chars
    can_change = ensure_change and len(set(chars)) > 1
    while True:
        out = sample(rng, chars, len(chars))
        if not can_change or out != chars:
            return out


class InnerShuffle(Attacker):
    """Shuffle all letters except the first and last; words of length ≥ 3 (§3.2, Rayner et al.) whose
    inner letters are not all the same (``the``, ``wood`` cannot change and are not attacked). Letters are
    grapheme clusters: an accent moves with its letter."""

    name = "inner-shuffle"

    def eligible(self, word: str) -> bool:
        if not word.isascii():
            cl = clusters(word)
            return len(cl) >= 4 and len(set(cl[1:-1])) > 1
        return len(word) >= 4 and len(set(word[1:-1])) > 1

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        if not word.isascii():
            cl = clusters(word)
            return cl[0] + "".join(_shuffle_changed(cl[1:-1], rng, self.ensure_change)) + cl[-1]
        mid = _shuffle_changed(list(word[1:-1]), rng, self.ensure_change)
        return word[0] + "".join(mid) + word[-1]


class FullShuffle(Attacker):
    """Shuffle all letters of words of length ≥ 2 (§3.2) that are not one repeated letter (letters: grapheme
    clusters)."""

    name = "full-shuffle"

    def eligible(self, word: str) -> bool:
        cl = word if word.isascii() else clusters(word)
        return len(cl) >= 2 and len(set(cl)) > 1

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        return "".join(_shuffle_changed(list(word) if word.isascii() else clusters(word), rng, self.ensure_change))
