"""The package's own offline text attack: a greedy word swap with word-importance ranking
(:class:`GreedyWordSwap`, TextAttack's ``GreedyWordSwapWIR`` search) over any substitution candidates, e.g. the
nearest tokens of an embedding (:class:`EmbeddingNeighbours`); and :func:`text_attack`, every Sec. 5.1 text
attack by name."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_choice, check_finite_array, check_int, check_texts

from .._textattack import STOPWORDS
from ..embedding import embedding_matrix
from .output import AttackOutput, check_text_batch, progress_bar
from .recipes import TextAttackRecipe

__all__ = ["TEXT_ATTACKS", "EmbeddingNeighbours", "GreedyWordSwap", "goal_probabilities", "text_attack"]


def goal_probabilities(outputs) -> torch.Tensor:
    """TextAttack's convention: use the model's scores as probabilities if rows sum to 1, else softmax.

    Computed in the dtype the model returned (float32 for served models), so the float32 saturation of a
    T_d = 0.005 model is reproduced exactly as TextAttack sees it.
    """
    s = torch.as_tensor(np.asarray(outputs))
    if not ((s.sum(dim=1) - 1).abs() < 1e-6).all():
        s = torch.softmax(s, dim=1)
    return s


_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


class EmbeddingNeighbours:
    """Substitution candidates: the ``k`` nearest whole-word tokens in an embedding space (cosine).

    An offline stand-in for counter-fitted synonym embeddings (TextFooler) when those cannot be
    downloaded: build it from any word-vector table, or from a Hugging Face model's input embeddings with
    :meth:`from_hf`. Neighbours are computed lazily per word and cached.
    """

    def __init__(self, words: Sequence[str], vectors, *, k: int = 10, min_similarity: float = -1.0):
        words = check_texts("words", words)
        vec = check_finite_array("vectors", vectors, ndim=2)
        if vec.shape[0] != len(words):
            raise ValueError(f"vectors must have shape (len(words), d) = ({len(words)}, d), got {vec.shape}")
        self.k = check_int("k", k, ge=1)
        self.words = [str(w) for w in words]
        self._index = {w: i for i, w in enumerate(self.words)}
        self._unit = vec / np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12)
        self.min_similarity = float(min_similarity)
        self._cache: dict[str, list[str]] = {}

    @classmethod
    def from_hf(cls, model: nn.Module, tokenizer, *, k: int = 10, min_length: int = 3, vocabulary=None):
        """Neighbours among the alphabetic whole-word tokens of a transformers model's input embeddings."""
        emb = embedding_matrix(model).detach().cpu().double().numpy()
        vocab = tokenizer.get_vocab()
        allowed = None if vocabulary is None else {w.lower() for w in vocabulary}
        keep = [
            (tok, idx)
            for tok, idx in sorted(vocab.items(), key=lambda kv: kv[1])
            if tok.isalpha()
            and len(tok) >= min_length
            and tok not in STOPWORDS
            and (allowed is None or tok in allowed)
        ]
        if not keep:
            raise ValueError("no whole-word tokens found in the tokenizer vocabulary")
        return cls([t for t, _ in keep], emb[[i for _, i in keep]], k=k)

    def __call__(self, word: str) -> list[str]:
        w = word.lower()
        if w in self._cache:
            return self._cache[w]
        i = self._index.get(w)
        if i is None:
            out: list[str] = []
        else:
            sims = self._unit @ self._unit[i]
            sims[i] = -np.inf
            order = np.argsort(-sims, kind="stable")[: self.k]
            out = [self.words[j] for j in order if sims[j] >= self.min_similarity]
        self._cache[w] = out
        return out


class GreedyWordSwap:
    """Greedy word substitution with word-importance ranking (offline word-level attack).

    The search of TextAttack's ``GreedyWordSwapWIR("unk")`` (used by PWWS / TextFooler / DeepWordBug):
    words are ranked by how much replacing them with ``unk_token`` lowers the model's true-class
    probability, then visited in that order; at each word the best candidate is kept only if it raises the
    goal score ``1 - p(true)`` strictly, and the search stops once the prediction flips. Scores follow
    TextAttack's convention (:func:`goal_probabilities`), so a saturated float32 model stalls it as it
    stalls TextAttack (Eq. 6). Departs from PWWS/TextFooler in its candidate source (any mapping or
    callable word -> candidates, e.g. :class:`EmbeddingNeighbours`), because their WordNet /
    counter-fitted resources need downloads; ``seed`` is accepted for interface uniformity (deterministic).
    """

    def __init__(
        self,
        *,
        candidates: Mapping[str, Sequence[str]] | Callable[[str], Sequence[str]],
        max_candidates: int = 20,
        max_swap_fraction: float = 1.0,
        unk_token: str = "[UNK]",
        stopwords: Sequence[str] | None = STOPWORDS,
        batch_size: int = 256,
    ):
        if not (isinstance(candidates, Mapping) or callable(candidates)):
            raise TypeError("candidates must be a mapping word -> list of words, or a callable word -> list")
        if not (0.0 < max_swap_fraction <= 1.0):
            raise ValueError(f"max_swap_fraction must lie in (0, 1], got {max_swap_fraction}")
        self.candidates = candidates
        self.max_candidates = check_int("max_candidates", max_candidates, ge=1)
        self.max_swap_fraction = float(max_swap_fraction)
        self.unk_token = unk_token
        self.stopwords = frozenset(stopwords or ())
        self.batch_size = check_int("batch_size", batch_size, ge=1)

    stochastic = False  # deterministic search: every seed gives the same run

    def _cands(self, word: str) -> list[str]:
        lw = word.lower()
        src = self.candidates.get(lw, ()) if isinstance(self.candidates, Mapping) else self.candidates(lw)
        out = [c for c in src if c.lower() != lw][: self.max_candidates]
        if word[:1].isupper():
            out = [c[:1].upper() + c[1:] for c in out]
        return out

    def _query(self, model, texts: list[str]) -> torch.Tensor:
        outs = [
            goal_probabilities(model(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        return torch.cat(outs, dim=0)

    def attack_one(self, model, text: str, label: int) -> tuple[str, bool, bool, int]:
        """Attack one text; returns (adversarial text, success, skipped, queries)."""
        p0 = self._query(model, [text])[0]
        queries = 1
        if int(p0.argmax()) != label:
            return text, False, True, queries
        spans = [(m.start(), m.end()) for m in _WORD.finditer(text)]
        words = [text[a:b] for a, b in spans]
        idx = [i for i, w in enumerate(words) if w.lower() not in self.stopwords and self._cands(w)]
        if not idx:
            return text, False, False, queries

        def replace(tokens: list[str], i: int, new: str) -> str:
            tokens = list(tokens)
            tokens[i] = new
            out, last = [], 0
            for (a, b), w in zip(spans, tokens, strict=True):
                out.append(text[last:a])
                out.append(w)
                last = b
            out.append(text[last:])
            return "".join(out)

        base_score = 1.0 - float(p0[label])
        probs = self._query(model, [replace(words, i, self.unk_token) for i in idx])
        queries += len(idx)
        importance = (1.0 - probs[:, label].double().numpy()) - base_score
        order = [idx[j] for j in np.argsort(-importance, kind="stable")]
        budget = max(1, int(np.floor(self.max_swap_fraction * len(words))))

        cur_words, cur_score, swaps = list(words), base_score, 0
        for i in order:
            if swaps >= budget:
                break
            cands = self._cands(words[i])
            texts = [replace(cur_words, i, c) for c in cands]
            probs = self._query(model, texts)
            queries += len(texts)
            scores = 1.0 - probs[:, label].double().numpy()
            flipped = (probs.argmax(dim=1) != label).numpy()
            if flipped.any():
                j = int(np.flatnonzero(flipped)[np.argmax(scores[flipped])])
                cur_words[i] = cands[j]
                return replace(cur_words, i, cands[j]), True, False, queries
            j = int(np.argmax(scores))
            if scores[j] > cur_score:  # strict improvement, as TextAttack's greedy WIR search
                cur_words[i], cur_score = cands[j], float(scores[j])
                swaps += 1
        return replace(cur_words, 0, cur_words[0]) if spans else text, False, False, queries

    def __call__(
        self, model, texts: Sequence[str], labels, *, seed: int = 0, progress: bool = False
    ) -> AttackOutput:
        texts, labels = check_text_batch(texts, labels, model)
        res = [
            self.attack_one(model, t, int(y))
            for t, y in progress_bar(list(zip(texts, labels, strict=True)), progress)
        ]
        return AttackOutput(
            adversarial=[r[0] for r in res],
            success=np.array([r[1] for r in res], dtype=bool),
            skipped=np.array([r[2] for r in res], dtype=bool),
            queries=np.array([r[3] for r in res], dtype=np.int64),
        )


TEXT_ATTACKS = ("deepwordbug", "pwws", "textfooler", "bae", "wordswap")


def text_attack(
    name: str,
    *,
    model=None,
    wordnet: str | None = None,
    embedding: str | None = None,
    masked_lm: str | None = None,
    neighbours: int = 8,
):
    """The Sec. 5.1 text attack called ``name``: a :class:`TextAttackRecipe` (``deepwordbug``, ``pwws`` with
    local WordNet, ``textfooler`` / ``bae`` with local embeddings / masked LM), or ``wordswap``: the offline
    :class:`GreedyWordSwap` over ``neighbours`` nearest input-embedding tokens of ``model`` (a text classifier
    with ``.model`` and ``.tokenizer``, e.g. :class:`~iortemp.HFTextClassifier`)."""
    check_choice("name", name, TEXT_ATTACKS)
    if name == "wordswap":
        net, tok = getattr(model, "model", None), getattr(model, "tokenizer", None)
        if net is None or tok is None:
            raise TypeError("wordswap needs model= a text classifier with .model and .tokenizer (HF)")
        nb = EmbeddingNeighbours.from_hf(net, tok, k=check_int("neighbours", neighbours, ge=1))
        return GreedyWordSwap(candidates=nb)
    return TextAttackRecipe(recipe=name, wordnet=wordnet, embedding=embedding, masked_lm=masked_lm)
