"""The ten Zéroe attackers (§3.2), each applied under the §3.1 protocol.

Every attacker is a class with keyword-only hyper-parameters; calling ``attacker(text, p, seed=...)``
returns a :class:`~zeroe_perturb.protocol.Perturbation`.  ``p`` is the per-word attack probability
of §3.1 and, where §3.2 says so (intrude, keyboard-typo, visual), φ = p is a per-character one,
unless ``phi`` is given.  ``eligible(word)`` is true exactly when the attacker can change ``word``,
so the reported rate is the rate of words actually changed.
"""

from __future__ import annotations

import math
import random
import string
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import ClassVar

from ._edit import levenshtein
from ._tokens import WORD_RE, join_words, match_case, split_words
from .protocol import Perturbation, SeedLike, check_p, make_rng, select_tokens, target_count

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

    def _report(self, p: float, text: str, gaps: list[str], words: list[str], new: list[str]) -> Perturbation:
        """The change report: attacked = the word tokens that differ (diff of input and output)."""
        attacked = tuple(i for i, (a, b) in enumerate(zip(words, new, strict=True)) if a != b)
        dist = sum(levenshtein(words[i], new[i]) for i in attacked)
        return Perturbation(self.name, p, text, join_words(gaps, new), len(words), attacked, dist)

    def __call__(self, text: str, p: float, *, seed: SeedLike = None) -> Perturbation:
        """Attack ``text`` at word-level perturbation probability ``p`` (§3.1)."""
        p, rng, phi, gaps, words = self._prepare(text, p, seed)
        new = list(words)
        for i in select_tokens(len(words), p, rng, lambda i: self.eligible(words[i])):
            new[i] = self.perturb_word(words[i], phi, rng)
        return self._report(p, text, gaps, words, new)


def char_hits(m: int, phi: float, rng: random.Random, ensure_change: bool) -> list[bool]:
    """Which of ``m`` positions are hit, each i.i.d. with probability ``phi`` (§3.2's character-level φ).

    With ``ensure_change`` the draw is conditioned on at least one hit (the zero-truncated
    binomial, sampled exactly: the first hit J has P(J = j) ∝ φ(1 − φ)^j, later positions are i.i.d.),
    so an attacked word always changes and each position is still hit with probability
    φ / (1 − (1 − φ)^m) given the word was attacked.  For φ = 0 one uniform position is hit.
    """
    if not ensure_change or m == 0:
        return [rng.random() < phi for _ in range(m)]
    if phi <= 0.0:
        first = rng.randrange(m)
    elif phi >= 1.0:
        first = 0
    else:
        q = 1.0 - (1.0 - phi) ** m
        first = min(int(math.log1p(-rng.random() * q) / math.log1p(-phi)), m - 1)
    hits = [False] * first + [True]
    hits.extend(rng.random() < phi for _ in range(m - first - 1))
    return hits


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
    """Shuffle all letters except the first and last; words of length ≥ 3 (§3.2, Rayner et al.) whose
    inner letters are not all the same (``the``, ``wood`` cannot change and are not attacked)."""

    name = "inner-shuffle"

    def eligible(self, word: str) -> bool:
        return len(word) >= 4 and len(set(word[1:-1])) > 1

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        mid = _shuffle_changed(list(word[1:-1]), rng, self.ensure_change)
        return word[0] + "".join(mid) + word[-1]


class FullShuffle(Attacker):
    """Shuffle all letters of words of length ≥ 2 (§3.2) that are not one repeated letter."""

    name = "full-shuffle"

    def eligible(self, word: str) -> bool:
        return len(word) >= 2 and len(set(word)) > 1

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
        slots = char_hits(len(word) - 1, phi, rng, self.ensure_change)
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

    Only whitespace-only gaps are removed, so punctuation stays exactly where it was (words
    separated by punctuation are never joined).  The attacked tokens are the words that lose their
    preceding whitespace; §3.1 attacks ``p·n`` of them (rounded at random, see
    :func:`~zeroe_perturb.protocol.target_count`), or every joinable one when fewer exist.
    """

    name = "segment"

    def eligible(self, word: str) -> bool:  # decided per position (the gap before the word), see __call__
        return True

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        return word

    @staticmethod
    def joinable_gap(gap: str) -> bool:
        """Whether the text between two words may be removed (non-empty and whitespace only)."""
        return gap != "" and gap.isspace()

    def __call__(self, text: str, p: float, *, seed: SeedLike = None) -> Perturbation:
        p, rng, phi, gaps, words = self._prepare(text, p, seed)
        n = len(words)
        cand = [i for i in range(1, n) if self.joinable_gap(gaps[i])]
        budget = min(target_count(n, p, rng), len(cand))
        joined = [False] * n  # joined[i]: gap before word i removed
        used = 0
        if budget:
            for i in rng.sample(cand, len(cand)):
                if used >= budget:
                    break
                if joined[i]:
                    continue
                joined[i] = True
                used, k, j = used + 1, 2, i + 1
                while (used < budget and j < n and not joined[j] and self.joinable_gap(gaps[j])
                       and rng.random() < phi**k):
                    joined[j] = True
                    used, k, j = used + 1, k + 1, j + 1
        attacked = tuple(i for i in range(n) if joined[i])
        removed = sum(len(gaps[i]) for i in attacked)
        new_gaps = [("" if (0 < i < n and joined[i]) else g) for i, g in enumerate(gaps)]
        return Perturbation(self.name, p, text, join_words(new_gaps, words), n, attacked, removed)


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
        hit = char_hits(len(idx), phi, rng, self.ensure_change)
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
    """Replace characters by one of their ``k`` = 20 visual nearest neighbours (§3.2/§3.3), each i.i.d.
    with probability φ, the neighbour drawn as VIPER does (proportional to its similarity when the
    table stores weights, else uniformly).

    ``scope="text"`` (default) follows §3.2 ("we replace each character in the input sequence") and
    the original Zéroe/VIPER code: every replaceable letter of the text is replaced with probability
    φ = p, no word selection.  ``scope="word"`` applies the §3.1 word protocol first and replaces the
    letters of the attacked words with probability φ (at least one with ``ensure_change``).
    ``embedding`` picks the shipped table (see :mod:`zeroe_perturb.visual`); ``neighbours`` overrides it.
    """

    name = "visual"
    SCOPES: ClassVar[tuple[str, ...]] = ("text", "word")

    def __init__(self, *, phi: float | None = None, ensure_change: bool = True,
                 neighbours: Mapping[str, Sequence[str]] | None = None, k: int = 20,
                 embedding: str = "pca", scope: str = "text") -> None:
        super().__init__(phi=phi, ensure_change=ensure_change)
        if scope not in self.SCOPES:
            raise ValueError(f"scope must be one of {', '.join(self.SCOPES)}; got {scope!r}")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise ValueError(f"k must be a positive int, got {k!r}")
        weights: Mapping[str, Sequence[float]] = {}
        if neighbours is None:
            from .visual import load_neighbour_weights, load_neighbours

            neighbours = load_neighbours(embedding=embedding)
            weights = load_neighbour_weights(embedding=embedding)
        self.k = k
        self.scope = scope
        self.embedding = embedding
        # only letters/digits as sources and replacements, so a replacement never splits a word token
        self.neighbours = {}
        keep: dict[str, list[int]] = {}
        for c, v in neighbours.items():
            pos = [j for j, x in enumerate(v) if len(x) == 1 and x != c and WORD_RE.fullmatch(x)][:k]
            if len(c) == 1 and WORD_RE.fullmatch(c) and pos:
                self.neighbours[c] = tuple(v[j] for j in pos)
                keep[c] = pos
        # cumulative weights for rng.choices (VIPER draws a neighbour proportionally to its similarity)
        self._cum: dict[str, tuple[float, ...] | None] = {}
        for c in self.neighbours:
            w = weights.get(c)
            if w is None or len(w) <= max(keep[c]):
                self._cum[c] = None
            else:
                acc, cum = 0.0, []
                for x in (w[j] for j in keep[c]):
                    acc += max(float(x), 0.0)
                    cum.append(acc)
                self._cum[c] = tuple(cum) if acc > 0 else None

    def __repr__(self) -> str:
        return f"Visual(phi={self.phi}, k={self.k}, scope={self.scope!r}, embedding={self.embedding!r})"

    def eligible(self, word: str) -> bool:
        return any(c in self.neighbours for c in word)

    def _pick(self, c: str, rng: random.Random) -> str:
        nb = self.neighbours[c]
        cum = self._cum[c]
        if cum is None:
            return nb[rng.randrange(len(nb))]
        return rng.choices(nb, cum_weights=cum)[0]

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        idx = [k for k, c in enumerate(word) if c in self.neighbours]
        hit = char_hits(len(idx), phi, rng, self.ensure_change)
        chars = list(word)
        for k, h in zip(idx, hit, strict=True):
            if h:
                chars[k] = self._pick(chars[k], rng)
        return "".join(chars)

    def __call__(self, text: str, p: float, *, seed: SeedLike = None) -> Perturbation:
        if self.scope == "word":
            return super().__call__(text, p, seed=seed)
        p, rng, phi, gaps, words = self._prepare(text, p, seed)
        new = list(words)
        if phi > 0:
            for i, w in enumerate(words):
                chars = None
                for k, c in enumerate(w):
                    if c in self.neighbours and rng.random() < phi:
                        if chars is None:
                            chars = list(w)
                        chars[k] = self._pick(c, rng)
                if chars is not None:
                    new[i] = "".join(chars)
        return self._report(p, text, gaps, words, new)


ATTACKER_CLASSES: dict[str, type[Attacker]] = {
    cls.name: cls
    for cls in (InnerShuffle, FullShuffle, Intrude, Disemvowel, Truncate, Segment, KeyboardTypo,
                NaturalNoise, Phonetic, Visual)
}
