"""The visual attacker (§3.2/§3.3, VIPER): characters replaced by visually similar ones."""

from __future__ import annotations

import bisect
import random
from collections.abc import Mapping, Sequence
from typing import ClassVar

from rapidfuzz.distance.Levenshtein import distance as _levenshtein

from .._tokens import WORD_RE, split_parts
from ..protocol import Perturbation, SeedLike
from .base import Attacker, _perturbation, checked
from .streams import _make_rng, char_hits


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
            from ..visual import load_neighbour_weights, load_neighbours

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
            return nb[rng._randbelow(len(nb))]  # pyright: ignore[reportAttributeAccessIssue] - CPython's draw
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
        p = checked(text, p)
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
