"""The ten Zéroe attackers (§3.2), each applied under the §3.1 protocol.

Every attacker is a class with keyword-only hyper-parameters; calling ``attacker(text, p, seed=...)``
returns a :class:`~zeroe_perturb.protocol.Perturbation`.  ``p`` is the per-word attack probability
of §3.1 and, where §3.2 says so (intrude, keyboard-typo, visual), φ = p is a per-character one,
unless ``phi`` is given.  ``eligible(word)`` is true exactly when the attacker can change ``word``,
so the reported rate is the rate of words actually changed.
"""

from __future__ import annotations

import _random
import bisect
import math
import random
import string
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import ClassVar

from rapidfuzz.distance.Levenshtein import distance as _levenshtein

from ._tokens import WORD_RE, clusters, match_case, split_parts
from .protocol import Perturbation, SeedLike, check_p, make_rng

VOWELS = frozenset("aeiouAEIOU")
_DROP_VOWELS = str.maketrans("", "", "aeiouAEIOU")
_MEMO_MAX = 200_000  # eligibility memo entries per attacker before it is cleared
_TEXT_MEMO_MAX = 50_000  # per-text memo entries (tokenisation + changeable words) before it is cleared
_SPLIT = split_parts  # one C call for ASCII text; combining marks stay on their letters

try:  # the SHA-512 that random.Random.seed uses for str seeds (_sha2 or _sha512 by CPython version)
    from random import _sha512  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - another Python implementation
    from hashlib import sha512 as _sha512
_RANDOM = random.Random
_NEW = object.__new__
_NEW_RANDOM = _random.Random.__new__  # an unseeded instance; _CSEED seeds it
_CSEED = _random.Random.seed  # the C ``_random.Random.seed`` (init_by_array), without the Python layer
_FROM_BYTES = int.from_bytes


def _make_rng(seed: SeedLike) -> random.Random:
    """:func:`~zeroe_perturb.protocol.make_rng` with a fast path for str seeds (the batch item seeds):
    ``random.Random(seed)`` state for state, its Python layer done here (version-2 str seeding: the UTF-8
    bytes followed by their SHA-512 digest, read as a big-endian int) and the C seeding called directly."""
    if type(seed) is str:
        b = seed.encode()
        rng = _NEW_RANDOM(_RANDOM)
        _CSEED(rng, _FROM_BYTES(b + _sha512(b).digest()))
        rng.gauss_next = None
        return rng
    return make_rng(seed)


def _perturbation(attack: str, p: float, original: str, perturbed: str, n_tokens: int,
                  attacked: tuple[int, ...], edit_distance: int) -> Perturbation:
    """A :class:`Perturbation` without the frozen dataclass ``__init__`` (7 ``object.__setattr__``
    calls), for the hot path; identical fields, equality and hash."""
    obj = object.__new__(Perturbation)
    obj.__dict__.update(attack=attack, p=p, original=original, perturbed=perturbed, n_tokens=n_tokens,
                        attacked=attacked, edit_distance=edit_distance)
    return obj


_SET_DICT = Perturbation.__dict__["__dict__"].__set__  # type: ignore[index]


def _report_template(attack: str, text: str, n_tokens: int) -> dict:
    """The ``__dict__`` of a :class:`Perturbation` of ``text`` with the per-call fields left ``None``, in
    field order: a hot path copies it and fills ``p``, ``perturbed``, ``attacked`` and ``edit_distance``."""
    return {"attack": attack, "p": None, "original": text, "perturbed": None, "n_tokens": n_tokens,
            "attacked": None, "edit_distance": None}


#: Symbols the intrude attack may insert (§3.2): ASCII punctuation plus the space character.
INTRUDE_SYMBOLS: tuple[str, ...] = (*string.punctuation, " ")


class Attacker(ABC):
    """Base class: a word-level attacker run under the §3.1 protocol.

    Per-word answers (``eligible``, keyboard plans, case-matched options) are memoised on the instance,
    so resources (``layout``, ``lexicon``, ``neighbours``) are fixed at construction: build a new
    attacker to change them.
    """

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

    #: characters changed between a word and its perturbation (Levenshtein; subclasses with a closed
    #: form override it)
    word_distance = staticmethod(_levenshtein)

    def __call__(self, text: str, p: float, *, seed: SeedLike = None) -> Perturbation:
        """Attack ``text`` at word-level perturbation probability ``p`` (§3.1)."""
        if type(text) is not str and not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not (type(p) is float and 0.0 <= p <= 1.0):
            p = check_p(p)
        return self._protocol_run((text,), p, _make_rng(seed), 0, 0)[0]

    def _protocol_run(self, texts: Sequence[str], p: float, rng: random.Random | None, base: int,
                      start: int) -> list[Perturbation]:
        """The §3.1 protocol over ``texts`` (validated): with ``rng``, or (``rng=None``) each text ``i``
        with the stream of ``item_seed(start + i, seed=base)``.  (Validation, ``protocol.target_count`` and
        ``select_tokens`` inlined: this is the hot path.)"""
        fresh = rng is None
        if fresh:
            prefix = b"zeroe:%d:" % base
            # the package's attackers never keep the Random they are given: one object, reseeded per text
            reuse = type(self).__module__ == __name__
            rng = _NEW_RANDOM(_RANDOM)
            rng.gauss_next = None
        rand = rng.random
        phi = p if self.phi is None else self.phi
        # per-text memo of the tokenisation and the changeable words: the benchmark attacks the same texts
        # in every cell (attacker × level × seed), and both depend only on the text and the fixed resources
        memo_texts = self.__dict__.get("_texts")
        if memo_texts is None:
            memo_texts = self.__dict__["_texts"] = {}
        name = self.name
        perturb_word, word_distance = self.perturb_word, self.word_distance
        choices = self._choice_table()  # word -> (options, len, bit count, distances), or None
        out: list[Perturbation] = []
        append = out.append
        for idx, text in enumerate(texts, start):
            if fresh:
                b = prefix + b"%d" % idx  # = item_seed(idx, seed=base).encode(); Random(str) seeding
                if not reuse:
                    rng = _NEW_RANDOM(_RANDOM)
                    rng.gauss_next = None
                    rand = rng.random
                _CSEED(rng, _FROM_BYTES(b + _sha512(b).digest()))
            entry = memo_texts.get(text)
            if entry is None:
                if len(memo_texts) > _TEXT_MEMO_MAX:
                    memo_texts.clear()
                parts = _SPLIT(text)
                words = parts[1::2]
                memo = self.__dict__.get("_memo")
                if memo is None or len(memo) > _MEMO_MAX:
                    memo = self.__dict__["_memo"] = {}
                cand = []
                for i, w in enumerate(words):
                    e = memo.get(w)
                    if e is None:
                        e = memo[w] = bool(self.eligible(w))
                    if e:
                        cand.append(i)
                entry = memo_texts[text] = (parts, words, cand, len(cand), _bit_steps(len(cand)),
                                            _report_template(name, text, len(words)))
            parts, words, cand, nc, steps, template = entry
            n = len(words)
            # §3.1 target p·n rounded at random, capped by the changeable words
            x = p * n
            k = int(x + 1e-9)  # = floor(x + 1e-9), x >= 0
            if x - k > 1e-9 and rand() < x - k:
                k += 1
            if k > nc:
                k = nc
            changed = []
            if k:
                if nc <= 21 or _pool_sample_ok(nc, k):
                    # sample(rng, cand, k), pool branch, draw for draw (all k drawn before any word)
                    getrandbits = rng.getrandbits
                    pool = cand.copy()
                    picks = []
                    for m, bits, last in steps[:k]:
                        j = getrandbits(bits)
                        while j >= m:
                            j = getrandbits(bits)
                        picks.append(pool[j])
                        pool[j] = pool[last]
                else:
                    picks = sample(rng, cand, k)
                dist = 0
                new_parts = parts.copy()  # the memoised list stays the original text's
                if choices is None:
                    for i in picks:
                        w = words[i]
                        new = perturb_word(w, phi, rng)
                        if new != w:
                            new_parts[2 * i + 1] = new
                            changed.append(i)
                            dist += word_distance(w, new)
                else:  # perturb_word = options[rng._randbelow(len(options))], inlined draw for draw
                    getrandbits = rng.getrandbits
                    for i in picks:
                        w = words[i]
                        c = choices.get(w)
                        if c is None:
                            c = self._choices(w)
                        options, m, bits, dists = c
                        j = getrandbits(bits)
                        while j >= m:
                            j = getrandbits(bits)
                        new = options[j]
                        if new != w:
                            new_parts[2 * i + 1] = new
                            changed.append(i)
                            dist += dists[j]
            report = template.copy()
            report["p"] = p
            if changed:
                changed.sort()
                report["perturbed"] = "".join(new_parts)
                report["attacked"] = tuple(changed)
                report["edit_distance"] = dist
            else:
                report["perturbed"] = text
                report["attacked"] = ()
                report["edit_distance"] = 0
            obj = _NEW(Perturbation)
            _SET_DICT(obj, report)
            append(obj)
        return out

    def _choice_table(self) -> dict | None:
        """For attackers whose ``perturb_word`` picks one of a fixed tuple of options per word uniformly
        (natural-noise, phonetic): the memo filled by :meth:`_choices`; ``None`` for the others."""
        return None

    def _choices(self, word: str) -> tuple[tuple[str, ...], int, int, tuple[int, ...]]:
        raise NotImplementedError

    def _batch(self, texts: Sequence[str], p: float, base: int, start: int) -> list[Perturbation]:
        """``[self(t, p, seed=item_seed(start + i, seed=base)) for i, t in enumerate(texts)]`` (the batch form;
        ``texts`` and ``p`` already validated), each item's ``random.Random`` seeded through the C seeding
        with the int its str seed stands for, state for state (see :func:`_make_rng`)."""
        if type(self).__call__ is Attacker.__call__:
            return self._protocol_run(texts, p, None, base, start)
        out = []
        append = out.append
        prefix = b"zeroe:%d:" % base
        for idx, text in enumerate(texts, start):
            b = prefix + b"%d" % idx  # = item_seed(idx, seed=base).encode()
            rng = _NEW_RANDOM(_RANDOM)
            _CSEED(rng, _FROM_BYTES(b + _sha512(b).digest()))
            rng.gauss_next = None
            append(self(text, p, seed=rng))
        return out


def sample(rng: random.Random, population: list, k: int) -> list:
    """``rng.sample(population, k)`` for a list, draw for draw (CPython's algorithm, without its
    argument handling), so results are identical to ``random.Random.sample``."""
    n = len(population)
    randbelow = rng._randbelow
    result = [None] * k
    setsize = 21
    if k > 5:
        setsize += 4 ** math.ceil(math.log(k * 3, 4))
    if n <= setsize:
        pool = list(population)
        getrandbits = rng.getrandbits
        for i in range(k):
            m = n - i
            # randbelow(m) inlined (random.Random._randbelow_with_getrandbits)
            b = m.bit_length()
            j = getrandbits(b)
            while j >= m:
                j = getrandbits(b)
            result[i] = pool[j]
            pool[j] = pool[m - 1]
    else:
        selected: set[int] = set()
        for i in range(k):
            j = randbelow(n)
            while j in selected:
                j = randbelow(n)
            selected.add(j)
            result[i] = population[j]
    return result


def _cased_options(att: Attacker, word: str, lookup, *, lower: bool = True) -> tuple[str, ...]:
    """``tuple(match_case(word, o) for o in lookup(word.lower() if lower else word))``, memoised per word."""
    memo = att.__dict__.setdefault("_options", {})
    out = memo.get(word)
    if out is None:
        if len(memo) > _MEMO_MAX:
            memo.clear()
        out = memo[word] = tuple(match_case(word, o) for o in lookup(word.lower() if lower else word))
    return out


def char_hits(m: int, phi: float, rng: random.Random, ensure_change: bool) -> list[bool]:
    """Which of ``m`` positions are hit, each i.i.d. with probability ``phi`` (§3.2's character-level φ).

    With ``ensure_change`` the draw is conditioned on at least one hit (the zero-truncated
    binomial, sampled exactly: the first hit J has P(J = j) ∝ φ(1 − φ)^j, later positions are i.i.d.),
    so an attacked word always changes and each position is still hit with probability
    φ / (1 − (1 − φ)^m) given the word was attacked.  For φ = 0 one uniform position is hit.
    """
    rand = rng.random
    if not ensure_change or m == 0:
        return [rand() < phi for _ in range(m)]
    if phi <= 0.0:
        first = rng._randbelow(m)  # = rng.randrange(m), without its argument checks
    elif phi >= 1.0:
        first = 0
    else:
        q = 1.0 - (1.0 - phi) ** m
        first = min(int(math.log1p(-rand() * q) / math.log1p(-phi)), m - 1)
    hits = [False] * first
    hits.append(True)
    hits.extend([rand() < phi for _ in range(m - first - 1)])
    return hits


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
        if not word.isascii():  # symbols go between grapheme clusters, never between a letter and its accent
            word = clusters(word)  # a list of clusters: the code below indexes and joins it alike
        m = len(word) - 1
        if not self.ensure_change or m == 0 or phi <= 0.0:
            slots = char_hits(m, phi, rng, self.ensure_change)
            out = [word[0]]
            for c, ins in zip(word[1:], slots, strict=False):
                if ins:
                    out.append(sym)
                out.append(c)
            return "".join(out)
        # char_hits(m, phi, rng, True) inlined draw for draw: the first hit, then slot j (before word[j + 1])
        # i.i.d. with probability phi
        rand = rng.random
        if phi >= 1.0:
            first = 0
        else:
            first = min(int(math.log1p(-rand() * (1.0 - (1.0 - phi) ** m)) / math.log1p(-phi)), m - 1)
        head = word[:first + 1]
        out = [head if type(head) is str else "".join(head), sym, word[first + 1]]
        for c in word[first + 2:]:
            if rand() < phi:
                out.append(sym)
            out.append(c)
        return "".join(out)

    @staticmethod
    def word_distance(a: str, b: str) -> int:  # insertions only
        return len(b) - len(a)


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


def _pool_sample_ok(n: int, k: int) -> bool:
    """Whether ``Random.sample`` draws ``k`` of ``n`` items with its pool branch (``n <= setsize``)."""
    setsize = 21
    if k > 5:
        setsize += 4 ** math.ceil(math.log(k * 3, 4))
    return n <= setsize


def _bit_steps(n: int) -> tuple[tuple[int, int, int], ...]:
    """``((n, n.bit_length(), n - 1), …, (1, 1, 0))``: the range, bit count and last pool slot of the
    successive ``_randbelow`` draws of ``Random.sample``'s pool branch."""
    return tuple((m, m.bit_length(), m - 1) for m in range(n, 0, -1))


class Truncate(Attacker):
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

    def __call__(self, text: str, p: float, *, seed: SeedLike = None) -> Perturbation:
        if not self._specialised():
            return super().__call__(text, p, seed=seed)
        if type(text) is not str and not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not (type(p) is float and 0.0 <= p <= 1.0):
            p = check_p(p)
        return self._run((text,), p, _make_rng(seed), 0, 0)[0]

    def _batch(self, texts: Sequence[str], p: float, base: int, start: int) -> list[Perturbation]:
        if not self._specialised():
            return super()._batch(texts, p, base, start)
        return self._run(texts, p, None, base, start)

    def _run(self, texts: Sequence[str], p: float, rng: random.Random | None, base: int,
             start: int) -> list[Perturbation]:
        """:meth:`Attacker.__call__` specialised to truncation, draw for draw, over ``texts``: with ``rng``,
        or (``rng=None``) each text ``i`` with the stream of ``item_seed(start + i, seed=base)``, a private
        ``Random`` reseeded in place.  Truncation draws nothing per word and always changes the word, so
        the §3.1 selection is all that is drawn."""
        fresh = rng is None
        if fresh:
            rng = _NEW_RANDOM(_RANDOM)  # reseeded for every text below; never leaves this method
            prefix = b"zeroe:%d:" % base
        getrandbits, rand = rng.getrandbits, rng.random
        memo = self.__dict__.get("_run_texts")  # own per-text memo (Attacker.__call__'s holds other tuples)
        if memo is None or len(memo) > _TEXT_MEMO_MAX:
            memo = self.__dict__["_run_texts"] = {}
        name = self.name
        out: list[Perturbation] = []
        append = out.append
        for idx, text in enumerate(texts, start):
            if fresh:
                b = prefix + b"%d" % idx  # = item_seed(idx, seed=base).encode(); Random(str) seeding
                _CSEED(rng, _FROM_BYTES(b + _sha512(b).digest()))
            entry = memo.get(text)
            if entry is None:  # per-text memo: tokens, candidates, their truncations, the sample's draws
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
                entry = memo[text] = (parts, n, cand, len(cand), cut, _bit_steps(len(cand)),
                                      _report_template(name, text, n), cut_len)
            parts, n, cand, nc, cut, steps, template, cut_len = entry
            # §3.1 target p·n rounded at random (protocol.target_count), capped by the changeable words
            x = p * n
            k = int(x + 1e-9)  # = floor(x + 1e-9), x >= 0
            if x - k > 1e-9 and rand() < x - k:
                k += 1
            if k > nc:
                k = nc
            report = template.copy()
            report["p"] = p
            if k == 0:
                report["perturbed"] = text
                report["attacked"] = ()
                report["edit_distance"] = 0
            else:
                new = parts.copy()  # the memoised list stays the original text's
                if nc <= 21 or _pool_sample_ok(nc, k):
                    # sample(rng, cand, k), pool branch, draw for draw
                    pool = cand.copy()
                    picked = []
                    for m, bits, last in steps[:k]:
                        j = getrandbits(bits)
                        while j >= m:
                            j = getrandbits(bits)
                        i = pool[j]
                        pool[j] = pool[last]
                        picked.append(i)
                        new[2 * i + 1] = cut[i]
                else:
                    picked = sample(rng, cand, k)
                    for i in picked:
                        new[2 * i + 1] = cut[i]
                picked.sort()
                report["perturbed"] = "".join(new)
                report["attacked"] = tuple(picked)
                # one deletion per truncated word (a cluster's code points without marks: one)
                report["edit_distance"] = k if cut_len is None else sum(cut_len[i] for i in picked)
            obj = _NEW(Perturbation)
            _SET_DICT(obj, report)
            append(obj)
        return out


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
        if type(text) is not str and not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        if not (type(p) is float and 0.0 <= p <= 1.0):
            p = check_p(p)
        return self._run((text,), p, _make_rng(seed), 0, 0)[0]

    def _batch(self, texts: Sequence[str], p: float, base: int, start: int) -> list[Perturbation]:
        return self._run(texts, p, None, base, start)

    def _run(self, texts: Sequence[str], p: float, rng: random.Random | None, base: int,
             start: int) -> list[Perturbation]:
        """The segment attack over ``texts``: with ``rng``, or (``rng=None``) each text ``i`` with the
        stream of ``item_seed(start + i, seed=base)`` (a private ``Random`` reseeded in place).

        Draws, in order: the §3.1 rounding of ``p·n``, a uniform permutation of the joinable gaps
        (``Random.sample`` of all of them, pool branch, draw for draw), then one ``random()`` per
        attempted extension of a join to the next word (probability φ², φ³, …)."""
        phi = p if self.phi is None else self.phi
        powers: list[float] = []
        fresh = rng is None
        if fresh:
            rng = _NEW_RANDOM(_RANDOM)  # reseeded for every text below; never leaves this method
            prefix = b"zeroe:%d:" % base
        getrandbits, rand = rng.getrandbits, rng.random
        memo = self.__dict__.get("_run_texts")  # own per-text memo (Attacker.__call__'s holds other tuples)
        if memo is None or len(memo) > _TEXT_MEMO_MAX:
            memo = self.__dict__["_run_texts"] = {}
        name = self.name
        out: list[Perturbation] = []
        append = out.append
        for idx, text in enumerate(texts, start):
            if fresh:
                b = prefix + b"%d" % idx  # = item_seed(idx, seed=base).encode(); Random(str) seeding
                _CSEED(rng, _FROM_BYTES(b + _sha512(b).digest()))
            entry = memo.get(text)
            if entry is None:  # per-text memo: tokens, joinable gaps (joinable[i]: the gap before word i)
                parts = _SPLIT(text)
                n = len(parts) // 2
                joinable = [g != "" and g.isspace() for g in parts[0::2]]
                cand = [i for i in range(1, n) if joinable[i]]
                joinable[n] = False  # no word after the last gap
                entry = memo[text] = (parts, n, joinable, cand, len(cand), _bit_steps(len(cand)),
                                      _report_template(name, text, n), [len(g) for g in parts[0::2]])
            parts, n, open_gaps, cand, nc, steps, template, gap_len = entry
            if n >= len(powers):  # powers[k] = phi**k for the k <= n + 1 of this text
                powers = [phi**k for k in range(2 * n + 2)]
            # target_count(n, p, generator=rng) inlined, capped by the joinable gaps
            x = p * n
            budget = int(x + 1e-9)  # = floor(x + 1e-9), x >= 0
            if x - budget > 1e-9 and rand() < x - budget:
                budget += 1
            if budget > nc:
                budget = nc
            report = template.copy()
            report["p"] = p
            if not budget:
                report["perturbed"] = text
                report["attacked"] = ()
                report["edit_distance"] = 0
            else:
                # the permutation sample(rng, cand, nc): all of it is drawn before any extension draw
                pool = cand.copy()
                perm = []
                for m, bits, last in steps:
                    j = getrandbits(bits)
                    while j >= m:
                        j = getrandbits(bits)
                    perm.append(pool[j])
                    pool[j] = pool[last]
                # free[j]: the gap before word j is joinable and not removed yet (free[n] is False, so the
                # test stands for "j < n and not joined[j] and joinable[j]")
                free = open_gaps.copy()
                attacked = []
                used = 0
                for i in perm:
                    if used >= budget:
                        break
                    if not free[i]:
                        continue
                    free[i] = False
                    attacked.append(i)
                    used, k, j = used + 1, 2, i + 1
                    while used < budget and free[j] and rand() < powers[k]:
                        free[j] = False
                        attacked.append(j)
                        used, k, j = used + 1, k + 1, j + 1
                attacked.sort()
                new = parts.copy()  # the memoised list stays the original text's
                removed = 0
                for i in attacked:
                    removed += gap_len[i]
                    new[2 * i] = ""
                report["perturbed"] = "".join(new)
                report["attacked"] = tuple(attacked)
                report["edit_distance"] = removed
            obj = _NEW(Perturbation)
            _SET_DICT(obj, report)
            append(obj)
        return out


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

    def _plan(self, word: str) -> tuple[list[int], list[tuple[str, ...]]]:
        """Positions of the word's keys and their neighbours in the character's case (memoised)."""
        plans = self.__dict__.setdefault("_plans", {})
        plan = plans.get(word)
        if plan is None:
            if len(plans) > _MEMO_MAX:
                plans.clear()
            idx = [k for k, c in enumerate(word) if c.lower() in self.layout]
            nbs = [tuple(r.upper() for r in self.layout[word[k].lower()]) if word[k].isupper()
                   else tuple(self.layout[word[k].lower()]) for k in idx]
            plan = plans[word] = (idx, nbs)
        return plan

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        plans = self.__dict__.get("_plans")
        plan = plans.get(word) if plans is not None else None
        idx, nbs = plan if plan is not None else self._plan(word)
        m = len(idx)
        if self.ensure_change and 0.0 < phi < 1.0 and m > 0:
            # char_hits(m, phi, rng, True) inlined draw for draw
            rand = rng.random
            first = min(int(math.log1p(-rand() * (1.0 - (1.0 - phi) ** m)) / math.log1p(-phi)), m - 1)
            hit = [False] * first
            hit.append(True)
            hit.extend([rand() < phi for _ in range(m - first - 1)])
        else:
            hit = char_hits(m, phi, rng, self.ensure_change)
        chars = list(word)
        getrandbits = rng.getrandbits
        for k, h, nb in zip(idx, hit, nbs, strict=False):
            if h:
                m = len(nb)  # nb[rng.randrange(m)], randbelow inlined
                b = m.bit_length()
                j = getrandbits(b)
                while j >= m:
                    j = getrandbits(b)
                chars[k] = nb[j]
        return "".join(chars)


class _OptionPicker:
    """``perturb_word`` = one of the word's case-matched options, uniformly (``_randbelow``): the general
    loop draws it inline from a per-word memo ``(options, len, bit count, Levenshtein distances)``, unless
    a subclass overrides ``perturb_word``, ``word_distance`` or the option lookup."""

    _option_kind: ClassVar[type]

    def _choice_table(self) -> dict | None:
        cls, kind = type(self), self._option_kind
        if not (cls.perturb_word is kind.perturb_word and cls.word_distance is Attacker.word_distance
                and cls._options_of is kind._options_of):
            return None
        table = self.__dict__.get("_choice_memo")
        if table is None or len(table) > _MEMO_MAX:
            table = self.__dict__["_choice_memo"] = {}
        return table

    def _choices(self, word: str) -> tuple[tuple[str, ...], int, int, tuple[int, ...]]:
        options = self._options_of(word)
        out = self.__dict__["_choice_memo"][word] = (options, len(options), len(options).bit_length(),
                                                     tuple(_levenshtein(word, o) for o in options))
        return out


class NaturalNoise(_OptionPicker, Attacker):
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
            from .natural_noise import load_natural_lexicon

            lexicon, self.source = load_natural_lexicon(source=source)
        else:
            self.source = "user"
        self.lexicon = {k.lower(): tuple(v) for k, v in lexicon.items() if v}

    def eligible(self, word: str) -> bool:
        return word.lower() in self.lexicon

    def _options_of(self, word: str) -> tuple[str, ...]:
        """The word's misspellings in its capitalisation (memoised)."""
        memo = self.__dict__.get("_options")
        options = memo.get(word) if memo is not None else None
        return options if options is not None else _cased_options(self, word, self.lexicon.get)

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        memo = self.__dict__.get("_options")
        options = memo.get(word) if memo is not None else None
        if options is None:
            options = _cased_options(self, word, self.lexicon.get)
        m = len(options)  # options[rng._randbelow(m)], randbelow inlined draw for draw
        b = m.bit_length()
        getrandbits = rng.getrandbits
        j = getrandbits(b)
        while j >= m:
            j = getrandbits(b)
        return options[j]


class Phonetic(_OptionPicker, Attacker):
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

    def _options_of(self, word: str) -> tuple[str, ...]:
        """The word's respellings in its capitalisation (memoised)."""
        memo = self.__dict__.get("_options")
        options = memo.get(word) if memo is not None else None
        return options if options is not None else _cased_options(self, word, self.respeller.respellings,
                                                                   lower=False)

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        memo = self.__dict__.get("_options")
        options = memo.get(word) if memo is not None else None
        if options is None:
            options = _cased_options(self, word, self.respeller.respellings, lower=False)
        m = len(options)  # options[rng._randbelow(m)], randbelow inlined draw for draw
        b = m.bit_length()
        getrandbits = rng.getrandbits
        j = getrandbits(b)
        while j >= m:
            j = getrandbits(b)
        return options[j]


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
                 embedding: str = "unifont", scope: str = "text") -> None:
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
            return nb[rng._randbelow(len(nb))]
        # = rng.choices(nb, cum_weights=cum)[0], draw for draw
        return nb[bisect.bisect(cum, rng.random() * (cum[-1] + 0.0), 0, len(nb) - 1)]

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
        if type(text) is not str and not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        p = p if (type(p) is float and 0.0 <= p <= 1.0) else check_p(p)
        rng = _make_rng(seed)
        phi = p if self.phi is None else self.phi
        # every table character is a word character (see __init__), so scanning the whole text left to
        # right visits exactly the letters of the word tokens, in order
        nb, rand, pick = self.neighbours, rng.random, self._pick
        chars = None
        if phi > 0:
            for k, c in enumerate(text):
                if c in nb and rand() < phi:
                    if chars is None:
                        chars = list(text)
                    chars[k] = pick(c, rng)
        if chars is None:
            return _perturbation(self.name, p, text, text, len(split_parts(text)) // 2, (), 0)
        new_text = "".join(chars)
        old, new = split_parts(text)[1::2], split_parts(new_text)[1::2]
        attacked = tuple(i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b)
        dist = sum(_levenshtein(old[i], new[i]) for i in attacked)
        return _perturbation(self.name, p, text, new_text, len(old), attacked, dist)


ATTACKER_CLASSES: dict[str, type[Attacker]] = {
    cls.name: cls
    for cls in (InnerShuffle, FullShuffle, Intrude, Disemvowel, Truncate, Segment, KeyboardTypo,
                NaturalNoise, Phonetic, Visual)
}
# (set here: a class body cannot name its own class)
NaturalNoise._option_kind = NaturalNoise
Phonetic._option_kind = Phonetic
