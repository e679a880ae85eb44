"""Phonetic respellings (Zéroe §3.3 and appendix A.1).

Two stages, as in the paper: a grapheme→phoneme seq2seq model gives the pronunciation of a word,
a phoneme→grapheme seq2seq model "back-translates" it into spellings, and a respelling is kept only
when it differs from the word and its phonetic similarity to the word (appendix Eq. 3) is high:

    sim_ph(π1, π2) = 1 - d(π1, π2) / min(|π1|, |π2|)

with d the Levenshtein distance between the phoneme sequences (ARPAbet, stress removed).

Shipped resources (built by ``tools/build/zeroe_perturb/build_phonetic.py`` from CMUdict):
``g2p.npz`` / ``p2g.npz`` (float16 weights of the two small attentional GRU models, numpy
inference) and ``phonetic_respellings.tsv.gz`` (respellings precomputed for the dictionary words,
with their similarity, computed from the dictionary pronunciation).  Words outside that table go
through the two models at run time (cached).  Departure from the paper: its similarity filter is a
learned InferSent-style classifier over the four Eq. 3 bins; we apply Eq. 3 itself.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources

from ._edit import levenshtein
from ._seq2seq import Seq2Seq


def phonetic_similarity(pron_a: Sequence[str], pron_b: Sequence[str]) -> float:
    """Appendix Eq. 3: ``1 - d(π1, π2) / min(|π1|, |π2|)`` (1 = same pronunciation; can be < 0)."""
    for name, pron in (("pron_a", pron_a), ("pron_b", pron_b)):
        if isinstance(pron, str) or not isinstance(pron, Sequence) or not all(isinstance(x, str) for x in pron):
            raise TypeError(f"{name} must be a sequence of phoneme strings (e.g. ['K', 'AE1', 'T']), got {pron!r:.60}")
    a, b = list(pron_a), list(pron_b)
    m = min(len(a), len(b))
    if m == 0:
        return 1.0 if len(a) == len(b) else 0.0
    return 1.0 - levenshtein(a, b) / m


@lru_cache(maxsize=1)
def load_models() -> tuple[Seq2Seq, Seq2Seq]:
    """The shipped (G2P, P2G) models."""
    base = resources.files("zeroe_perturb").joinpath("data")
    with resources.as_file(base.joinpath("g2p.npz")) as g, resources.as_file(base.joinpath("p2g.npz")) as p:
        return Seq2Seq.load(g), Seq2Seq.load(p)


@lru_cache(maxsize=1)
def load_respelling_table() -> dict[str, tuple[tuple[str, float], ...]]:
    """Word -> ((respelling, similarity), ...) precomputed for the CMUdict words."""
    raw = resources.files("zeroe_perturb").joinpath("data/phonetic_respellings.tsv.gz").read_bytes()
    out: dict[str, tuple[tuple[str, float], ...]] = {}
    for line in gzip.decompress(raw).decode("utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        word, _, rest = line.partition("\t")
        items = []
        for tok in rest.split():
            r, _, s = tok.rpartition(":")
            items.append((r, float(s)))
        out[word] = tuple(items)
    return out


def pronounce(words: Sequence[str]) -> list[list[str]]:
    """Pronunciations (ARPAbet without stress) predicted by the shipped G2P model."""
    g2p, _ = load_models()
    return g2p.greedy([list(w.lower()) for w in words])


class PhoneticRespeller:
    """Respellings that sound like a word, filtered by appendix Eq. 3.

    ``min_similarity`` is the Eq. 3 threshold (default 0.7: the paper's *identical*, *very
    similar* and *similar* bins, normalised distance < 0.3); ``use_model`` enables the run-time
    G2P → P2G path for words missing from the precomputed table.
    """

    def __init__(self, *, min_similarity: float = 0.7, use_model: bool = True, beam_width: int = 6) -> None:
        if not -1.0 <= float(min_similarity) <= 1.0:
            raise ValueError(f"min_similarity must be in [-1, 1], got {min_similarity}")
        if int(beam_width) < 1:
            raise ValueError(f"beam_width must be >= 1, got {beam_width}")
        self.min_similarity = float(min_similarity)
        self.use_model = bool(use_model)
        self.beam_width = int(beam_width)
        self._cache: dict[str, tuple[str, ...]] = {}

    def respellings(self, word: str) -> tuple[str, ...]:
        """Kept respellings of ``word`` (lower case), most similar first; empty if none."""
        if not isinstance(word, str):
            raise TypeError(f"word must be a str, got {type(word).__name__}")
        key = word.lower()
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        table = load_respelling_table()
        if key in table:
            ranked = sorted(table[key], key=lambda t: -t[1])
            out = tuple(r for r, s in ranked if s >= self.min_similarity and r != key)
        elif self.use_model and key.isascii() and key.isalpha() and len(key) >= 2:
            out = self._from_models(key)
        else:
            out = ()
        self._cache[key] = out
        return out

    def scored(self, word: str) -> list[tuple[str, float]]:
        """Respellings of an out-of-table word with their Eq. 3 similarity (model path, unfiltered)."""
        if not isinstance(word, str) or not word:
            raise TypeError(f"word must be a non-empty str, got {word!r:.40}")
        g2p, p2g = load_models()
        key = word.lower()
        pron = g2p.greedy([list(key)])[0]
        hyps = p2g.beam([pron], width=self.beam_width)[0]
        cands = list(dict.fromkeys("".join(t) for t, _ in hyps if "".join(t) != key))
        prons = g2p.greedy([list(c) for c in cands]) if cands else []
        return sorted(((c, phonetic_similarity(pron, pc)) for c, pc in zip(cands, prons, strict=True)),
                      key=lambda t: -t[1])

    def _from_models(self, key: str) -> tuple[str, ...]:
        return tuple(c for c, s in self.scored(key) if s >= self.min_similarity and c.isalpha())
