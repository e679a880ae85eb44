"""The word-replacing attackers: :class:`NaturalNoise` (real human misspellings, §3.2) and :class:`Phonetic`
(respellings that sound alike, §3.3). Each replaces a word by one of its case-matched options, uniformly."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from rapidfuzz.distance.Levenshtein import distance as _levenshtein

from .._tokens import match_case
from .base import _MEMO_MAX, Attacker


def _cased_options(att: Attacker, word: str, lookup: Callable[[str], Any], *,
                   lower: bool = True) -> tuple[str, ...]:
    """``tuple(match_case(word, o) for o in lookup(word.lower() if lower else word))``, memoised per word."""
    memo = vars(att).setdefault("_options", {})
    out = memo.get(word)
    if out is None:
        if len(memo) > _MEMO_MAX:
            memo.clear()
        out = memo[word] = tuple(match_case(word, o) for o in lookup(word.lower() if lower else word))
    return out


class _OptionPicker(Attacker):
    """``perturb_word`` = one of the word's case-matched options (:meth:`_options_of`), uniformly
    (``_randbelow``): the general loop draws it inline from a per-word memo ``(options, len, bit count,
    Levenshtein distances)``, unless a subclass overrides ``perturb_word``, ``word_distance`` or the option
    lookup."""

    _option_kind: ClassVar[type[Any]]

    def _lookup(self) -> tuple[Callable[[str], Any], bool]:
        """The option lookup and whether it takes the lowercased word."""
        raise NotImplementedError

    def _options_of(self, word: str) -> tuple[str, ...]:
        """The word's options in its capitalisation (memoised)."""
        memo = self.__dict__.get("_options")
        options = memo.get(word) if memo is not None else None
        if options is None:
            lookup, lower = self._lookup()
            options = _cased_options(self, word, lookup, lower=lower)
        return options

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        options = self._options_of(word)
        m = len(options)  # options[rng._randbelow(m)], randbelow inlined draw for draw
        b = m.bit_length()
        getrandbits = rng.getrandbits
        j = getrandbits(b)
        while j >= m:
            j = getrandbits(b)
        return options[j]

    def _choice_table(self) -> dict | None:
        cls, kind = type(self), self._option_kind
        if not (cls.perturb_word is kind.perturb_word and cls.word_distance is Attacker.word_distance
                and cls._options_of is kind._options_of):
            return None
        table = self.__dict__.get("_choice_memo")
        if table is None or len(table) > _MEMO_MAX:
            table = vars(self)["_choice_memo"] = {}
        return table

    def _choices(self, word: str) -> tuple[tuple[str, ...], int, int, tuple[int, ...]]:
        options = self._options_of(word)
        out = vars(self)["_choice_memo"][word] = (options, len(options), len(options).bit_length(),
                                                     tuple(_levenshtein(word, o) for o in options))
        return out


class NaturalNoise(_OptionPicker):
    """Replace a word by one of its real human misspellings from a typo lexicon (§3.2, Belinkov & Bisk).

    Default lexicon (``source="auto"``): codespell's list of real misspellings, inverted at run time
    (tens of thousands of English words), or the small shipped list with a warning when codespell is
    not installed; ``source="shipped"``/``"codespell"`` pick one; ``lexicon=`` supplies any mapping.
    """

    name = "natural-noise"

    def __init__(self, *, phi: float | None = None, ensure_change: bool = True,
                 lexicon: Mapping[str, Sequence[str]] | None = None, source: str = "auto") -> None:
        super().__init__(phi=phi, ensure_change=ensure_change)
        if lexicon is None:
            from ..natural_noise import load_natural_lexicon

            lexicon, self.source = load_natural_lexicon(source=source)
        else:
            self.source = "user"
        self.lexicon = {k.lower(): tuple(v) for k, v in lexicon.items() if v}

    def eligible(self, word: str) -> bool:
        return word.lower() in self.lexicon

    def _lookup(self) -> tuple[Callable[[str], Any], bool]:
        return self.lexicon.get, True


class Phonetic(_OptionPicker):
    """Replace a word by a respelling that sounds alike (§3.3): G2P, P2G back-translation, and the
    appendix Eq. 3 similarity filter.  See :mod:`zeroe_perturb.phonetic`."""

    name = "phonetic"

    def __init__(self, *, phi: float | None = None, ensure_change: bool = True,
                 min_similarity: float = 0.7, use_model: bool = True) -> None:
        super().__init__(phi=phi, ensure_change=ensure_change)
        from ..phonetic import PhoneticRespeller

        self.respeller = PhoneticRespeller(min_similarity=min_similarity, use_model=use_model)

    def eligible(self, word: str) -> bool:
        return bool(self.respeller.respellings(word))

    def _lookup(self) -> tuple[Callable[[str], Any], bool]:
        return self.respeller.respellings, False


# (set here: a class body cannot name its own class)
NaturalNoise._option_kind = NaturalNoise
Phonetic._option_kind = Phonetic
