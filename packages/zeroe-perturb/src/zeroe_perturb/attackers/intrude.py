"""The intrude attacker (§3.2, Hosseini et al.): one random symbol inserted between the characters of a word."""

from __future__ import annotations

import random
import string
from collections.abc import Sequence

from .._tokens import clusters
from .base import Attacker
from .streams import char_hits, first_hit

#: Symbols the intrude attack may insert (§3.2): ASCII punctuation plus the space character.
INTRUDE_SYMBOLS: tuple[str, ...] = (*string.punctuation, " ")


class Intrude(Attacker):
    """Insert one random symbol (the same within a word) between characters with probability φ
    each; words of length ≥ 3 (§3.2, Hosseini et al.)."""

    name = "intrude"

    def __init__(self, *, phi: float | None = None, ensure_change: bool = True,
                 symbols: Sequence[str] = INTRUDE_SYMBOLS) -> None:
        super().__init__(phi=phi, ensure_change=ensure_change)
        if not symbols or any(not isinstance(s, str) or len(s) != 1 for s in symbols):
            raise ValueError("symbols must be a non-empty sequence of single characters")
        self.symbols = tuple(symbols)

    def eligible(self, word: str) -> bool:
        return len(word if word.isascii() else clusters(word)) >= 3

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        m = len(self.symbols)  # self.symbols[rng.randrange(m)], randbelow inlined
        b = m.bit_length()
        j = rng.getrandbits(b)
        while j >= m:
            j = rng.getrandbits(b)
        sym = self.symbols[j]
        # symbols go between grapheme clusters, never between a letter and its accent: a list of clusters is
        # indexed and joined like the str
        letters: str | list[str] = word if word.isascii() else clusters(word)
        m = len(letters) - 1
        if not self.ensure_change or m == 0 or phi <= 0.0:
            slots = char_hits(m, phi, rng, self.ensure_change)
            out = [letters[0]]
            for c, ins in zip(letters[1:], slots, strict=False):
                if ins:
                    out.append(sym)
                out.append(c)
            return "".join(out)
        # char_hits(m, phi, rng, True) inlined draw for draw: the first hit, then slot j (before letters[j + 1])
        # i.i.d. with probability phi
        rand = rng.random
        first = 0 if phi >= 1.0 else first_hit(m, phi, rand)
        head = letters[:first + 1]
        out = [head if type(head) is str else "".join(head), sym, letters[first + 1]]
        for c in letters[first + 2:]:
            if rand() < phi:
                out.append(sym)
            out.append(c)
        return "".join(out)

    @staticmethod
    def word_distance(a: str, b: str) -> int:  # insertions only
        return len(b) - len(a)
