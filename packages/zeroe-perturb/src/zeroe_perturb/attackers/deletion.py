"""The deleting attackers (§3.2): :class:`Disemvowel` (the vowels) and :class:`Truncate` (the last letter), both
on grapheme clusters so an accent is never left behind or cut from its letter. Truncation draws nothing per word,
so it has its own loop (:class:`~.base.FastPath`)."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from .._tokens import clusters
from ..protocol import Perturbation
from .base import _SPLIT, Attacker, FastPath, _report_template, report
from .streams import _bit_steps, draw_picks, target

VOWELS = frozenset("aeiouAEIOU")
_DROP_VOWELS = str.maketrans("", "", "aeiouAEIOU")


class Disemvowel(Attacker):
    """Remove the vowels a, e, i, o, u; words of length ≤ 3 and all-vowel words are skipped (§3.2).

    Letters are grapheme clusters: a vowel carrying a combining accent (``"e\u0301"``) is kept like the
    precomposed ``"é"``, so an accent is never left on the preceding consonant."""

    name = "disemvowel"

    def eligible(self, word: str) -> bool:
        cl = word if word.isascii() else clusters(word)
        if len(cl) <= 3:
            return False
        n_vowels = sum(c in VOWELS for c in cl)
        return 0 < n_vowels < len(cl)

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        if word.isascii():
            return word.translate(_DROP_VOWELS)
        return "".join(c for c in clusters(word) if c not in VOWELS)

    @staticmethod
    def word_distance(a: str, b: str) -> int:  # deletions only
        return len(a) - len(b)


class Truncate(FastPath):
    """Cut the last letter of words of length ≥ 3 (§3.2); the letter is a grapheme cluster (its combining
    accents go with it: ``"cafe\u0301"`` becomes ``"caf"``)."""

    name = "truncate"

    def eligible(self, word: str) -> bool:
        return len(word if word.isascii() else clusters(word)) >= 3

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        return word[:-1] if word.isascii() else "".join(clusters(word)[:-1])

    @staticmethod
    def word_distance(a: str, b: str) -> int:  # deletions only: one cluster (one character without marks)
        return len(a) - len(b)

    def _specialised(self) -> bool:
        """Whether :meth:`_run` applies (a subclass overriding the per-word rules takes the general path)."""
        cls = type(self)
        return (cls.eligible is Truncate.eligible and cls.perturb_word is Truncate.perturb_word
                and cls.word_distance is Truncate.word_distance)

    def _run(self, texts: Sequence[str], p: float, rng: random.Random | None, base: int,
             start: int) -> list[Perturbation]:
        """:meth:`Attacker.__call__` specialised to truncation, draw for draw, over ``texts``.  Truncation draws
        nothing per word and always changes the word, so the §3.1 selection is all that is drawn."""
        rng, entries = self._entries(texts, rng, base, start)
        rand = rng.random
        out: list[Perturbation] = []
        append = out.append
        for text, (parts, n, cand, nc, cut, steps, template, cut_len) in entries:
            k = target(p, n, rand, nc)  # §3.1 target p·n rounded at random, capped by the changeable words
            if k == 0:
                append(report(template, p, text, None, [], 0))
                continue
            new = parts.copy()  # the memoised list stays the original text's
            picked = draw_picks(rng, cand, nc, steps, k)
            for i in picked:
                new[2 * i + 1] = cut[i]
            # one deletion per truncated word (a cluster's code points without marks: one)
            append(report(template, p, text, new, picked, k if cut_len is None else sum(cut_len[i] for i in picked)))
        return out

    def _entry(self, text: str, rng: random.Random) -> tuple[Any, ...]:
        """The per-text memo entry: tokens, candidates, their truncations, the sample's draw steps, the report
        template and (non-ASCII text) the characters each truncation removes."""
        parts = _SPLIT(text)
        n = len(parts) // 2
        if text.isascii():
            cand = [i for i in range(n) if len(parts[2 * i + 1]) >= 3]
            cut = [w[:-1] for w in parts[1::2]]
            cut_len = None  # one character per truncated word
        else:  # grapheme clusters (Truncate.eligible / perturb_word)
            cand = [i for i in range(n) if self.eligible(parts[2 * i + 1])]
            cut = [self.perturb_word(w, 0.0, rng) for w in parts[1::2]]
            cut_len = [len(w) - len(c) for w, c in zip(parts[1::2], cut, strict=True)]
        return (parts, n, cand, len(cand), cut, _bit_steps(len(cand)), _report_template(self.name, text, n),
                cut_len)
