"""The ten Zéroe attackers (§3.2), each applied under the §3.1 protocol.

Every attacker is a class with keyword-only hyper-parameters; calling ``attacker(text, p, seed=...)``
returns a :class:`~zeroe_perturb.protocol.Perturbation`.  The character-level probability φ equals
the word-level p unless ``phi`` is given (the paper sets φ = p throughout).
"""

from __future__ import annotations

import random
import string
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import ClassVar

from ._edit import levenshtein
from ._tokens import join_words, match_case, split_words
from .protocol import Perturbation, SeedLike, check_p, make_rng, select_tokens

VOWELS = frozenset("aeiouAEIOU")
#: Symbols the intrude attack may insert (§3.2): ASCII punctuation plus the space character.
INTRUDE_SYMBOLS: tuple[str, ...] = (*string.punctuation, " ")


class Attacker(ABC):
    """Base class: a word-level attacker run under the §3.1 protocol."""

    name: ClassVar[str]

    def __init__(self, *, phi: float | None = None, ensure_change: bool = True) -> None:
        self.phi = None if phi is None else check_p(phi, "phi")
        self.ensure_change = bool(ensure_change)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(phi={self.phi}, ensure_change={self.ensure_change})"

    @abstractmethod
    def eligible(self, word: str) -> bool:
        """Whether the attacker applies to ``word`` (the paper's length and content limits)."""

    @abstractmethod
    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        """Perturb one eligible word with character-level probability ``phi``."""

    def _prepare(self, text: str, p: float, seed: SeedLike):
        """Validate the call and return (p, rng, phi, gaps, words) for one text."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        p = check_p(p)
        gaps, words = split_words(text)
        return p, make_rng(seed), (p if self.phi is None else self.phi), gaps, words

    def __call__(self, text: str, p: float, *, seed: SeedLike = None) -> Perturbation:
        """Attack ``text`` at word-level perturbation probability ``p`` (§3.1)."""
        p, rng, phi, gaps, words = self._prepare(text, p, seed)
        new = list(words)

        def attack(i: int, budget: int) -> int:
            new[i] = self.perturb_word(words[i], phi, rng)
            return 1

        attacked = select_tokens(len(words), p, rng, lambda i: self.eligible(words[i]), attack)
        dist = sum(levenshtein(words[i], new[i]) for i in attacked)
        return Perturbation(self.name, p, text, join_words(gaps, new), len(words), tuple(sorted(attacked)), dist)


def _shuffle_changed(chars: list[str], rng: random.Random, ensure_change: bool) -> list[str]:
    """A uniformly random permutation; with ``ensure_change`` one that differs from the input
    (rejection sampling, i.e. uniform over the changing permutations) whenever one exists."""
    if len(chars) < 2:
        return chars
    can_change = ensure_change and len(set(chars)) > 1
    while True:
        out = rng.sample(chars, len(chars))
        if not can_change or out != chars:
            return out


class InnerShuffle(Attacker):
    """Shuffle all letters except the first and last; words of length ≥ 3 (§3.2, Rayner et al.)."""

    name = "inner-shuffle"

    def eligible(self, word: str) -> bool:
        return len(word) >= 3

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        mid = _shuffle_changed(list(word[1:-1]), rng, self.ensure_change)
        return word[0] + "".join(mid) + word[-1]


class FullShuffle(Attacker):
    """Shuffle all letters of words of length ≥ 2 (§3.2)."""

    name = "full-shuffle"

    def eligible(self, word: str) -> bool:
        return len(word) >= 2

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        return "".join(_shuffle_changed(list(word), rng, self.ensure_change))


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
        return len(word) >= 3

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        sym = self.symbols[rng.randrange(len(self.symbols))]
        slots = [rng.random() < phi for _ in range(len(word) - 1)]
        if self.ensure_change and not any(slots):
            # Departure (documented): at least one insertion, so an attacked word is always changed.
            slots[rng.randrange(len(slots))] = True
        out = [word[0]]
        for c, ins in zip(word[1:], slots, strict=True):
            if ins:
                out.append(sym)
            out.append(c)
        return "".join(out)


class Disemvowel(Attacker):
    """Remove the vowels a, e, i, o, u; words of length ≤ 3 and all-vowel words are skipped (§3.2)."""

    name = "disemvowel"

    def eligible(self, word: str) -> bool:
        if len(word) <= 3:
            return False
        n_vowels = sum(c in VOWELS for c in word)
        return 0 < n_vowels < len(word)

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        return "".join(c for c in word if c not in VOWELS)


class Truncate(Attacker):
    """Cut the last letter of words of length ≥ 3 (§3.2)."""

    name = "truncate"

    def eligible(self, word: str) -> bool:
        return len(word) >= 3

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        return word[:-1]


class Segment(Attacker):
    """Join adjacent words (§3.2): an attacked word is glued to its left neighbour, the following
    words are appended with probabilities φ², φ³, … to avoid giant words.

    Only whitespace-only gaps are removed (words separated by punctuation are not joined).  The
    attacked tokens are the words that lose their preceding whitespace, so the §3.1 budget
    ``floor(p·n)`` bounds the number of joins.
    """

    name = "segment"

    def eligible(self, word: str) -> bool:  # decided per position, see __call__
        return True

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        return word

    def __call__(self, text: str, p: float, *, seed: SeedLike = None) -> Perturbation:
        p, rng, phi, gaps, words = self._prepare(text, p, seed)
        n = len(words)
        joined = [False] * n  # joined[i]: gap before word i removed
        removed = 0
        attacked: list[int] = []

        def joinable(i: int) -> bool:
            return 0 < i < n and not joined[i] and gaps[i] != "" and gaps[i].isspace()

        def attack(i: int, budget: int) -> int:
            nonlocal removed
            joined[i] = True
            removed += len(gaps[i])
            used, k, j = 1, 2, i + 1
            while used < budget and joinable(j) and rng.random() < phi**k:
                joined[j] = True
                removed += len(gaps[j])
                attacked.append(j)
                used, k, j = used + 1, k + 1, j + 1
            return used

        attacked.extend(select_tokens(n, p, rng, joinable, attack))
        new_gaps = [("" if (0 < i < n and joined[i]) else g) for i, g in enumerate(gaps)]
        return Perturbation(self.name, p, text, join_words(new_gaps, words), n, tuple(sorted(attacked)), removed)


class KeyboardTypo(Attacker):
    """Replace characters by QWERTY-adjacent keys, each with probability φ (§3.2, Belinkov & Bisk)."""

    name = "keyboard-typo"

    def __init__(self, *, phi: float | None = None, ensure_change: bool = True,
                 layout: Mapping[str, str] | None = None) -> None:
        super().__init__(phi=phi, ensure_change=ensure_change)
        from .keyboard import QWERTY_NEIGHBOURS

        self.layout = dict(QWERTY_NEIGHBOURS if layout is None else layout)

    def eligible(self, word: str) -> bool:
        return any(c.lower() in self.layout for c in word)

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        idx = [k for k, c in enumerate(word) if c.lower() in self.layout]
        hit = [rng.random() < phi for _ in idx]
        if self.ensure_change and not any(hit):
            hit[rng.randrange(len(idx))] = True  # at least one typo per attacked word
        chars = list(word)
        for k, h in zip(idx, hit, strict=True):
            if h:
                nb = self.layout[chars[k].lower()]
                r = nb[rng.randrange(len(nb))]
                chars[k] = r.upper() if chars[k].isupper() else r
        return "".join(chars)


class NaturalNoise(Attacker):
    """Replace a word by one of its real human misspellings from a typo lexicon (§3.2, Belinkov & Bisk)."""

    name = "natural-noise"

    def __init__(self, *, phi: float | None = None, ensure_change: bool = True,
                 lexicon: Mapping[str, Sequence[str]] | None = None) -> None:
        super().__init__(phi=phi, ensure_change=ensure_change)
        if lexicon is None:
            from .natural_noise import load_default_lexicon

            lexicon = load_default_lexicon()
        self.lexicon = {k.lower(): tuple(v) for k, v in lexicon.items() if v}

    def eligible(self, word: str) -> bool:
        return word.lower() in self.lexicon

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        options = self.lexicon[word.lower()]
        return match_case(word, options[rng.randrange(len(options))])


class Phonetic(Attacker):
    """Replace a word by a respelling that sounds alike (§3.3): G2P, P2G back-translation, and the
    appendix Eq. 3 similarity filter.  See :mod:`zeroe_perturb.phonetic`."""

    name = "phonetic"

    def __init__(self, *, phi: float | None = None, ensure_change: bool = True,
                 min_similarity: float = 0.7, use_model: bool = True) -> None:
        super().__init__(phi=phi, ensure_change=ensure_change)
        from .phonetic import PhoneticRespeller

        self.respeller = PhoneticRespeller(min_similarity=min_similarity, use_model=use_model)

    def eligible(self, word: str) -> bool:
        return bool(self.respeller.respellings(word))

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        options = self.respeller.respellings(word)
        return match_case(word, options[rng.randrange(len(options))])


class Visual(Attacker):
    """Replace each character i.i.d. with probability φ by one of its ``k`` = 20 visual nearest
    neighbours (§3.2/§3.3).  ``embedding`` picks the shipped table (``"pca"`` or ``"cae"``, see
    :mod:`zeroe_perturb.visual`); ``neighbours`` overrides it with any mapping."""

    name = "visual"

    def __init__(self, *, phi: float | None = None, ensure_change: bool = True,
                 neighbours: Mapping[str, Sequence[str]] | None = None, k: int = 20,
                 embedding: str = "pca") -> None:
        super().__init__(phi=phi, ensure_change=ensure_change)
        if neighbours is None:
            from .visual import load_neighbours

            neighbours = load_neighbours(embedding=embedding)
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        self.k = k
        self.neighbours = {c: tuple(v[:k]) for c, v in neighbours.items() if v}

    def eligible(self, word: str) -> bool:
        return any(c in self.neighbours for c in word)

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        idx = [k for k, c in enumerate(word) if c in self.neighbours]
        hit = [rng.random() < phi for _ in idx]
        if self.ensure_change and not any(hit):
            hit[rng.randrange(len(idx))] = True  # at least one replacement per attacked word
        chars = list(word)
        for k, h in zip(idx, hit, strict=True):
            if h:
                nb = self.neighbours[chars[k]]
                chars[k] = nb[rng.randrange(len(nb))]
        return "".join(chars)


ATTACKER_CLASSES: dict[str, type[Attacker]] = {
    cls.name: cls
    for cls in (InnerShuffle, FullShuffle, Intrude, Disemvowel, Truncate, Segment, KeyboardTypo,
                NaturalNoise, Phonetic, Visual)
}
