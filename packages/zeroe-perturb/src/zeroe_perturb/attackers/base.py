"""The base of the ten attackers: :class:`Attacker`, a word-level attacker run under the §3.1 protocol, and
:class:`FastPath`, an attacker with its own loop over the texts (the §3.1 protocol specialised draw for draw).

``attacker(text, p, seed=...)`` returns a :class:`~zeroe_perturb.protocol.Perturbation`.  The protocol loop is the
hot path of the benchmark: tokenisation and the changeable words are memoised per text, the Perturbation is built
without its dataclass ``__init__`` and the batch form reseeds one ``Random`` in place per text
(:mod:`zeroe_perturb.attackers.streams`).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar

from rapidfuzz.distance.Levenshtein import distance as _levenshtein

from .._tokens import split_parts
from ..protocol import Perturbation, SeedLike, check_p
from .streams import _bit_steps, _make_rng, draw_picks, item_stream, reseeded, target

_MEMO_MAX = 200_000  # eligibility memo entries per attacker before it is cleared
_TEXT_MEMO_MAX = 50_000  # per-text memo entries (tokenisation + changeable words) before it is cleared
_SPLIT = split_parts  # one C call for ASCII text; combining marks stay on their letters
_NEW = object.__new__
_SET_DICT = Perturbation.__dict__["__dict__"].__set__  # type: ignore[index]
# the package's attackers (defined in this package) never keep the Random they are given: one object, reseeded
# per text, serves a whole batch
_OWN = __name__.rpartition(".")[0] + "."

# a text's memo entry: its parts, words, changeable word indices, their count, the sample's draw steps, the report
TextEntry = tuple[list[str], list[str], list[int], int, tuple[tuple[int, int, int], ...], dict[str, Any]]


def checked(text: Any, p: Any) -> float:
    """``p`` checked (a float in [0, 1]) after ``text`` is found to be a str; the attackers' argument check."""
    if type(text) is not str and not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return p if (type(p) is float and 0.0 <= p <= 1.0) else check_p(p)


def _perturbation(attack: str, p: float, original: str, perturbed: str, n_tokens: int,
                  attacked: tuple[int, ...], edit_distance: int) -> Perturbation:
    """A :class:`Perturbation` without the frozen dataclass ``__init__`` (7 ``object.__setattr__``
    calls), for the hot path; identical fields, equality and hash."""
    obj = object.__new__(Perturbation)
    obj.__dict__.update(attack=attack, p=p, original=original, perturbed=perturbed, n_tokens=n_tokens,
                        attacked=attacked, edit_distance=edit_distance)
    return obj


def _report_template(attack: str, text: str, n_tokens: int) -> dict[str, Any]:
    """The ``__dict__`` of a :class:`Perturbation` of ``text`` with the per-call fields left ``None``, in
    field order: a hot path copies it and fills ``p``, ``perturbed``, ``attacked`` and ``edit_distance``."""
    return {"attack": attack, "p": None, "original": text, "perturbed": None, "n_tokens": n_tokens,
            "attacked": None, "edit_distance": None}


def report(template: dict[str, Any], p: float, text: str, new_parts: list[str] | None, attacked: list[int],
           dist: int) -> Perturbation:
    """The :class:`Perturbation` of ``text`` from its memoised ``template``: ``new_parts`` joined when words were
    ``attacked`` (sorted here, in place), else the text unchanged."""
    out = template.copy()
    out["p"] = p
    if attacked and new_parts is not None:
        attacked.sort()
        out["perturbed"] = "".join(new_parts)
        out["attacked"] = tuple(attacked)
        out["edit_distance"] = dist
    else:
        out["perturbed"] = text
        out["attacked"] = ()
        out["edit_distance"] = 0
    obj = _NEW(Perturbation)
    _SET_DICT(obj, out)
    return obj


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
        p = checked(text, p)
        return self._protocol_run((text,), p, _make_rng(seed), 0, 0)[0]

    def _protocol_run(self, texts: Sequence[str], p: float, rng: random.Random | None, base: int,
                      start: int) -> list[Perturbation]:
        """The §3.1 protocol over ``texts`` (validated): with ``rng``, or (``rng=None``) each text ``i``
        with the stream of ``item_seed(start + i, seed=base)``.  (Validation, ``protocol.target_count`` and
        ``select_tokens`` inlined: this is the hot path.)"""
        if rng is None and not type(self).__module__.startswith(_OWN):
            # an attacker defined elsewhere may keep the Random it is given: a new one per text
            out: list[Perturbation] = []
            for idx, text in enumerate(texts, start):
                out += self._protocol_run((text,), p, item_stream(base, idx), 0, 0)
            return out
        rng, items = reseeded(texts, rng, base, start)
        rand = rng.random
        phi = p if self.phi is None else self.phi
        # per-text memo of the tokenisation and the changeable words: the benchmark attacks the same texts
        # in every cell (attacker × level × seed), and both depend only on the text and the fixed resources
        memo_texts = self.__dict__.get("_texts")
        if memo_texts is None:
            memo_texts = vars(self)["_texts"] = {}
        choices = self._choice_table()  # word -> (options, len, bit count, distances), or None
        out = []
        append = out.append
        for text in items:
            entry = memo_texts.get(text)
            if entry is None:
                entry = self._text_entry(text, memo_texts)
            parts, words, cand, nc, steps, template = entry
            k = target(p, len(words), rand, nc)  # §3.1 target p·n rounded at random, capped
            if not k:
                append(report(template, p, text, None, [], 0))
                continue
            picks = draw_picks(rng, cand, nc, steps, k)
            if choices is None:
                new_parts, changed, dist = self._perturb_picks(parts, words, picks, phi, rng)
            else:
                new_parts, changed, dist = self._choose_picks(parts, words, picks, choices, rng)
            append(report(template, p, text, new_parts, changed, dist))
        return out

    def _text_entry(self, text: str, memo_texts: dict[str, TextEntry]) -> TextEntry:
        """Tokenise ``text`` and find its changeable words (memoised per word and per text)."""
        if len(memo_texts) > _TEXT_MEMO_MAX:
            memo_texts.clear()
        parts = _SPLIT(text)
        words = parts[1::2]
        memo = self.__dict__.get("_memo")
        if memo is None or len(memo) > _MEMO_MAX:
            memo = vars(self)["_memo"] = {}
        cand = []
        for i, w in enumerate(words):
            e = memo.get(w)
            if e is None:
                e = memo[w] = bool(self.eligible(w))
            if e:
                cand.append(i)
        entry = memo_texts[text] = (parts, words, cand, len(cand), _bit_steps(len(cand)),
                                    _report_template(self.name, text, len(words)))
        return entry

    def _perturb_picks(self, parts: list[str], words: list[str], picks: list[int], phi: float,
                       rng: random.Random) -> tuple[list[str], list[int], int]:
        """``perturb_word`` on the picked words, in the order drawn: the new parts, the changed words, the edits."""
        perturb_word, word_distance = self.perturb_word, self.word_distance
        new_parts = parts.copy()  # the memoised list stays the original text's
        changed = []
        dist = 0
        for i in picks:
            w = words[i]
            new = perturb_word(w, phi, rng)
            if new != w:
                new_parts[2 * i + 1] = new
                changed.append(i)
                dist += word_distance(w, new)
        return new_parts, changed, dist

    def _choose_picks(self, parts: list[str], words: list[str], picks: list[int], choices: dict,
                      rng: random.Random) -> tuple[list[str], list[int], int]:
        """:meth:`_perturb_picks` for an attacker whose ``perturb_word`` is
        ``options[rng._randbelow(len(options))]``, inlined draw for draw from the per-word ``choices``."""
        getrandbits = rng.getrandbits
        new_parts = parts.copy()
        changed = []
        dist = 0
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
        return new_parts, changed, dist

    def _choice_table(self) -> dict | None:
        """For attackers whose ``perturb_word`` picks one of a fixed tuple of options per word uniformly
        (natural-noise, phonetic): the memo filled by :meth:`_choices`; ``None`` for the others."""
        return None

    def _choices(self, word: str) -> tuple[tuple[str, ...], int, int, tuple[int, ...]]:
        raise NotImplementedError

    def _batch(self, texts: Sequence[str], p: float, base: int, start: int) -> list[Perturbation]:
        """``[self(t, p, seed=item_seed(start + i, seed=base)) for i, t in enumerate(texts)]`` (the batch form;
        ``texts`` and ``p`` already validated), each item's ``random.Random`` seeded through the C seeding
        with the int its str seed stands for, state for state (see :func:`~.streams._make_rng`)."""
        if type(self).__call__ is Attacker.__call__:
            return self._protocol_run(texts, p, None, base, start)
        return [self(text, p, seed=item_stream(base, idx)) for idx, text in enumerate(texts, start)]


class FastPath(Attacker):
    """An attacker with its own loop over the texts (:meth:`_run`: the §3.1 protocol specialised draw for draw,
    with its own per-text memo); one whose per-word rules a subclass changed (:meth:`_specialised` false) takes the
    general path of :class:`Attacker`."""

    def _specialised(self) -> bool:
        """Whether :meth:`_run` applies."""
        return True

    def __call__(self, text: str, p: float, *, seed: SeedLike = None) -> Perturbation:
        if not self._specialised():
            return super().__call__(text, p, seed=seed)
        p = checked(text, p)
        return self._run((text,), p, _make_rng(seed), 0, 0)[0]

    def _batch(self, texts: Sequence[str], p: float, base: int, start: int) -> list[Perturbation]:
        if not self._specialised():
            return super()._batch(texts, p, base, start)
        return self._run(texts, p, None, base, start)

    @abstractmethod
    def _run(self, texts: Sequence[str], p: float, rng: random.Random | None, base: int,
             start: int) -> list[Perturbation]:
        """The attack over ``texts``: with ``rng``, or (``rng=None``) each text ``i`` with the stream of
        ``item_seed(start + i, seed=base)`` (see :func:`~.streams.reseeded`)."""

    @abstractmethod
    def _entry(self, text: str, rng: random.Random) -> tuple[Any, ...]:
        """The per-text memo entry of :meth:`_run` (tokens, candidates, draw steps, report template, …)."""

    def _entries(self, texts: Sequence[str], rng: random.Random | None, base: int,
                 start: int) -> tuple[random.Random, Iterator[tuple[str, tuple[Any, ...]]]]:
        """The opening every :meth:`_run` shares: the ``Random`` the texts draw from (:func:`~.streams.reseeded`)
        and each text with its entry in the loop's own per-text memo (:meth:`_entry` on first sight; the memo of
        :meth:`Attacker.__call__` holds other tuples), a new memo when it has grown past its bound."""
        rng, items = reseeded(texts, rng, base, start)
        memo = self.__dict__.get("_run_texts")
        if memo is None or len(memo) > _TEXT_MEMO_MAX:
            memo = vars(self)["_run_texts"] = {}
        return rng, _memoised(items, memo, self._entry, rng)


def _memoised(items: Iterable[str], memo: dict[str, Any], entry: Callable[[str, random.Random], tuple[Any, ...]],
              rng: random.Random) -> Iterator[tuple[str, tuple[Any, ...]]]:
    for text in items:
        got = memo.get(text)
        if got is None:
            got = memo[text] = entry(text, rng)
        yield text, got
