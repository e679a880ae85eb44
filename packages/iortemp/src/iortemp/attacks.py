"""Attacks used by the evaluation protocol: TextAttack recipes, an offline greedy word swap, and L-inf PGD.

Every attack is an object whose hyper-parameters are keyword-only constructor arguments and whose call
``attack(victim, inputs, labels, *, seed=0, progress=False) -> AttackOutput`` attacks ``victim`` (which the
protocol sets to the temperature-modified model). Success is judged on the victim; the protocol re-scores
the adversarial inputs on the unmodified model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import (
    check_bool,
    check_choice,
    check_finite_array,
    check_float,
    check_images,
    check_int,
    check_labels,
    check_seed,
    check_texts,
)
from robustsuite_common.models import as_model_input, evaluating, logits_from

from ._rng import seeded_globals
from ._textattack import STOPWORDS, import_textattack
from .temperature import _device_of

__all__ = [
    "AttackOutput",
    "AutoAttackLinf",
    "EmbeddingNeighbours",
    "GreedyWordSwap",
    "PGDLinf",
    "TextAttackRecipe",
    "TEXT_ATTACKS",
    "text_attack",
]


@dataclass(frozen=True)
class AttackOutput:
    """Adversarial inputs (list of str, or a tensor for vision) and per-sample outcome on the victim."""

    adversarial: list | torch.Tensor
    success: np.ndarray  # bool (N,): victim's prediction flipped from the label
    skipped: np.ndarray  # bool (N,): victim already wrong on the clean input, not attacked
    queries: np.ndarray  # int (N,): victim queries spent (0 for gradient attacks)
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {
            "n": int(len(self.success)),
            "success_rate": float(np.mean(self.success)) if len(self.success) else 0.0,
            "skipped": int(np.sum(self.skipped)),
            "mean_queries": float(np.mean(self.queries)) if len(self.queries) else 0.0,
        }
        if isinstance(self.adversarial, list):
            out["adversarial"] = list(self.adversarial)
        return out


def goal_probabilities(outputs) -> torch.Tensor:
    """TextAttack's convention: use the victim's scores as probabilities if rows sum to 1, else softmax.

    Computed in the dtype the victim returned (float32 for served models), so the float32 saturation of a
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
        emb = model.get_input_embeddings().weight.detach().cpu().double().numpy()
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
    words are ranked by how much replacing them with ``unk_token`` lowers the victim's true-class
    probability, then visited in that order; at each word the best candidate is kept only if it raises the
    goal score ``1 - p(true)`` strictly, and the search stops once the prediction flips. Scores follow
    TextAttack's convention (:func:`goal_probabilities`), so a saturated float32 victim stalls it as it
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

    def _query(self, victim, texts: list[str]) -> torch.Tensor:
        outs = [
            goal_probabilities(victim(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        return torch.cat(outs, dim=0)

    def attack_one(self, victim, text: str, label: int) -> tuple[str, bool, bool, int]:
        """Attack one text; returns (adversarial text, success, skipped, queries)."""
        p0 = self._query(victim, [text])[0]
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
        probs = self._query(victim, [replace(words, i, self.unk_token) for i in idx])
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
            probs = self._query(victim, texts)
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
        self, victim, texts: Sequence[str], labels, *, seed: int = 0, progress: bool = False
    ) -> AttackOutput:
        texts, labels = _check_text_batch(texts, labels, victim)
        res = [
            self.attack_one(victim, t, int(y))
            for t, y in _progress(list(zip(texts, labels, strict=True)), progress)
        ]
        return AttackOutput(
            adversarial=[r[0] for r in res],
            success=np.array([r[1] for r in res], dtype=bool),
            skipped=np.array([r[2] for r in res], dtype=bool),
            queries=np.array([r[3] for r in res], dtype=np.int64),
        )


_RECIPES = {
    "deepwordbug": "DeepWordBugGao2018",
    "pwws": "PWWSRen2019",
    "textfooler": "TextFoolerJin2019",
    "bae": "BAEGarg2019",
}


class TextAttackRecipe:
    """A TextAttack recipe with its default configuration (Sec. 5.1): deepwordbug, pwws, textfooler, bae.

    Offline: ``deepwordbug`` (character edits, stopword list supplied by this package) and ``pwws``, whose
    WordNet synonyms are read from local WordNet 3.0 files (``wordnet=`` a directory, else
    ``$IORTEMP_WORDNET``, Debian's ``wordnet-base`` in ``/usr/share/wordnet`` or NLTK data; see
    :mod:`iortemp.wordnet`) instead of TextAttack's ``nltk.download``. ``textfooler`` needs counter-fitted
    word vectors (``embedding=`` a local text file ``word v1 ... vd``, e.g. ``counter-fitted-vectors.txt``
    from github.com/nmrksic/counter-fitting) and ``bae`` a masked language model (``masked_lm=`` a local
    transformers directory, e.g. ``bert-base-uncased`` saved with ``save_pretrained``); both also use the
    Universal Sentence Encoder constraint (``tensorflow_hub`` and its model download). Without local paths
    they fall back to TextAttack's downloads. The global NumPy / ``random`` state TextAttack draws from is
    seeded per example with ``seed + i`` and restored afterwards, so the same examples see the same random
    edits at every temperature.
    """

    def __init__(
        self,
        *,
        recipe: str = "deepwordbug",
        query_budget: int | None = None,
        model_batch_size: int = 32,
        wordnet: str | None = None,
        embedding: str | None = None,
        masked_lm: str | None = None,
    ):
        import os

        self.recipe = check_choice("recipe", recipe, tuple(_RECIPES))
        self.query_budget = None if query_budget is None else check_int("query_budget", query_budget, ge=1)
        self.model_batch_size = check_int("model_batch_size", model_batch_size, ge=1)
        for name, path in (("wordnet", wordnet), ("embedding", embedding), ("masked_lm", masked_lm)):
            if path is not None and not os.path.exists(path):
                raise FileNotFoundError(f"{name} path {path!s} does not exist")
        self.wordnet, self.embedding, self.masked_lm = wordnet, embedding, masked_lm
        if self.recipe == "pwws":
            from .wordnet import find_wordnet

            if find_wordnet(wordnet) is None:
                raise FileNotFoundError(
                    "pwws needs WordNet 3.0: install Debian's wordnet-base (/usr/share/wordnet), pass wordnet= a "
                    "WordNet dict directory, or run python -m nltk.downloader wordnet where the network exists"
                )

    @property
    def stochastic(self) -> bool:
        """Whether ``seed`` changes the run: DeepWordBug draws random character edits; PWWS, TextFooler and
        BAE are deterministic greedy searches (several seeds repeat one run)."""
        return self.recipe == "deepwordbug"

    def build(self, victim):
        """The ``textattack.Attack`` for ``victim`` (imports textattack: slow, ~15 s the first time)."""
        import_textattack()
        if self.recipe == "pwws":
            attack = _pwws(victim, self.wordnet)
        elif self.recipe == "textfooler" and self.embedding is not None:
            attack = _textfooler(victim, self.embedding)
        elif self.recipe == "bae" and self.masked_lm is not None:
            attack = _bae(victim, self.masked_lm)
        else:
            import textattack.attack_recipes as recipes

            attack = getattr(recipes, _RECIPES[self.recipe]).build(victim)
        attack.goal_function.batch_size = self.model_batch_size
        if self.query_budget is not None:
            attack.goal_function.query_budget = self.query_budget
        return attack

    def __call__(
        self, victim, texts: Sequence[str], labels, *, seed: int = 0, progress: bool = False
    ) -> AttackOutput:
        texts, labels = _check_text_batch(texts, labels, victim)
        attack = self.build(victim)
        from textattack.attack_results import SkippedAttackResult, SuccessfulAttackResult

        adv, success, skipped, queries = [], [], [], []
        for i, (t, y) in enumerate(_progress(list(zip(texts, labels, strict=True)), progress)):
            with seeded_globals(seed + i):
                r = attack.attack(t, int(y))
            adv.append(r.perturbed_result.attacked_text.text if not isinstance(r, SkippedAttackResult) else t)
            success.append(isinstance(r, SuccessfulAttackResult))
            skipped.append(isinstance(r, SkippedAttackResult))
            queries.append(int(getattr(r.perturbed_result, "num_queries", 0)))
        return AttackOutput(adv, np.array(success), np.array(skipped), np.array(queries, dtype=np.int64))


class PGDLinf:
    """L-inf projected gradient descent (Madry et al., 2018) on the cross-entropy of the victim's logits.

    The loss is computed from the victim's own (served) logits, so a T_d = 0.005 victim saturates the
    float32 softmax and zeroes the gradient — the vision analogue of the IOR (gradient masking). That is the
    paper's point, so this attack is kept for the IOR tables and always *named* there; a robust accuracy that
    names no attack is standard AutoAttack (:class:`AutoAttackLinf`, :func:`robust_accuracy`).
    ``eps`` is an L∞ radius for images in [0, 1]: a finite number in (0, 1].
    """

    def __init__(
        self,
        *,
        eps: float = 0.1,
        alpha: float | None = None,
        steps: int = 20,
        random_start: bool = True,
        batch_size: int = 512,
    ):
        self.eps = check_float("eps", eps, gt=0.0, le=1.0)
        self.steps = check_int("steps", steps, ge=1)
        self.alpha = check_float("alpha", alpha, gt=0.0) if alpha is not None else 2.5 * self.eps / self.steps
        self.random_start = check_bool("random_start", random_start)
        self.batch_size = check_int("batch_size", batch_size, ge=1)

    @property
    def name(self) -> str:
        """What a table column calls it, e.g. ``"PGD-10 (L∞ 0.1)"``."""
        return f"PGD-{self.steps} (L∞ {self.eps:g}{', random start' if self.random_start else ''})"

    @property
    def stochastic(self) -> bool:
        """Only the random start depends on ``seed``."""
        return self.random_start

    def __call__(
        self, victim: nn.Module, x: torch.Tensor, y, *, seed: int = 0, progress: bool = False
    ) -> AttackOutput:
        if not isinstance(victim, nn.Module):
            raise TypeError("victim must be a torch.nn.Module (vision contract)")
        check_images("x", x)
        y = torch.as_tensor(check_labels("labels", y, length=x.shape[0]), dtype=torch.long)
        seed = check_seed("seed", seed)
        device = _device_of(victim)
        gen = torch.Generator().manual_seed(int(seed))
        advs, succ, skip = [], [], []
        with evaluating(victim, freeze_parameters=True):
            for a in _progress(range(0, x.shape[0], self.batch_size), progress):
                xb = as_model_input(victim, x[a : a + self.batch_size])
                yb = y[a : a + self.batch_size].to(device)
                with torch.no_grad():
                    z0 = logits_from(victim(xb), n=xb.shape[0])
                if a == 0:  # the number of classes, known from the first forward pass: before any attack step
                    check_labels("labels", y, n_classes=z0.shape[1])
                clean_wrong = z0.argmax(1) != yb
                delta = torch.zeros_like(xb)
                if self.random_start:
                    delta = (torch.rand(xb.shape, generator=gen) * 2 - 1).to(device, xb.dtype) * self.eps
                xa = (xb + delta).clamp(0, 1)
                for _ in range(self.steps):
                    xa = xa.detach().requires_grad_(True)
                    loss = nn.functional.cross_entropy(logits_from(victim(xa), n=xa.shape[0]), yb)
                    (g,) = torch.autograd.grad(loss, xa)
                    xa = xa.detach() + self.alpha * g.sign()
                    xa = torch.min(torch.max(xa, xb - self.eps), xb + self.eps).clamp(0, 1)
                xa = torch.where(clean_wrong.view(-1, 1, 1, 1), xb, xa.detach())
                with torch.no_grad():
                    s = logits_from(victim(xa), n=xa.shape[0]).argmax(1) != yb
                advs.append(xa.to(x.device, x.dtype))
                succ.append((s & ~clean_wrong).cpu().numpy())
                skip.append(clean_wrong.cpu().numpy())
        return AttackOutput(
            torch.cat(advs), np.concatenate(succ), np.concatenate(skip), np.zeros(x.shape[0], dtype=np.int64)
        )


class AutoAttackLinf:
    """Standard AutoAttack (Croce & Hein, 2020: APGD-CE, APGD-T, FAB-T, Square) at L∞ radius ``eps``, as an
    attack of this package's protocol (``attack(victim, x, y, *, seed) -> AttackOutput``), through
    :func:`robustsuite_common.autoattack.autoattack` (pyautoattack, seeded; the caller's RNG and model
    untouched). APGD-T's DLR loss is invariant to a temperature, so a T_d = 0.005 victim does not mask it —
    the field's robust accuracy, shown beside PGD. Needs the ``autoattack`` extra and >= 4 classes for
    ``version="standard"``."""

    stochastic = True

    def __init__(self, *, eps: float = 0.1, version: str = "standard", batch_size: int = 250):
        self.eps = check_float("eps", eps, gt=0.0, le=1.0)
        self.version = check_choice("version", version, ("standard", "plus", "rand"))
        self.batch_size = check_int("batch_size", batch_size, ge=1)

    @property
    def name(self) -> str:
        return f"AutoAttack ({self.version}, L∞ {self.eps:g})"

    def __call__(self, victim: nn.Module, x: torch.Tensor, y, *, seed: int = 0, progress: bool = False) -> AttackOutput:
        from robustsuite_common.autoattack import autoattack

        if not isinstance(victim, nn.Module):
            raise TypeError("victim must be a torch.nn.Module (vision contract)")
        check_images("x", x)
        yl = check_labels("labels", y, length=x.shape[0])
        with evaluating(victim), torch.no_grad():  # one input: the number of classes, before the attack runs
            k = logits_from(victim(as_model_input(victim, x[:1])), n=1).shape[1]
        check_labels("labels", yl, n_classes=k)
        res = autoattack(victim, x, yl, eps=self.eps, norm="Linf", version=self.version,
                         seed=check_seed("seed", seed), batch_size=self.batch_size)
        clean = res.clean_correct.numpy().astype(bool)
        robust = res.robust.numpy().astype(bool)
        return AttackOutput(res.x_adv.to(x.device, x.dtype), clean & ~robust, ~clean,
                            np.zeros(x.shape[0], dtype=np.int64), extra={"attack": res.attack})


def _check_text_batch(texts, labels, victim=None) -> tuple[list[str], np.ndarray]:
    """Texts and labels checked; with ``victim``, the labels against its number of classes (one query of the
    first text alone — the query every attack starts with)."""
    texts = check_texts("texts", texts)
    y = check_labels("labels", labels, length=len(texts))
    if victim is not None:
        k = np.asarray(victim([texts[0]])).shape[-1]
        check_labels("labels", y, n_classes=k)
    return texts, y


def _progress(it, progress: bool):
    if not progress:
        return it
    from tqdm.auto import tqdm

    return tqdm(it)


_WN_CANDIDATES: dict[tuple[str, str], list[str]] = {}


def wordnet_candidates(word: str, root=None) -> list[str]:
    """TextAttack's ``WordSwapWordNet`` candidates of ``word`` (single-word lemmas of every synset, the word
    itself excluded), read from local WordNet files and cached per (WordNet directory, word) for the process:
    PWWS asks for the same words at every temperature, seed and system of a table."""
    from .wordnet import find_wordnet, wordnet_reader

    key = (str(root) if root is not None else str(find_wordnet(None)), word)
    if key not in _WN_CANDIDATES:
        wn = wordnet_reader(root)
        out = set()
        for syn in wn.synsets(word):
            for lemma in syn.lemma_names():
                if lemma != word and "_" not in lemma and " " not in lemma:
                    out.add(lemma)
        _WN_CANDIDATES[key] = sorted(out)
    return list(_WN_CANDIDATES[key])


def _wordnet_swap(root):
    """TextAttack's ``WordSwapWordNet`` from local WordNet files (without its ``nltk.download`` call), with
    the candidates cached per word (:func:`wordnet_candidates`)."""
    from textattack.transformations import WordSwap

    from .wordnet import find_wordnet, wordnet_reader

    wordnet_reader(root)  # fail early (FileNotFoundError naming what to install) before any attack runs
    resolved = find_wordnet(root)

    class LocalWordNetSwap(WordSwap):
        def _get_replacement_words(self, word, random=False):
            return wordnet_candidates(word, resolved)

    return LocalWordNetSwap()


def _pwws(victim, wordnet_root):
    """PWWSRen2019 as TextAttack builds it, with the WordNet swap read from local files."""
    from textattack import Attack
    from textattack.constraints.pre_transformation import RepeatModification, StopwordModification
    from textattack.goal_functions import UntargetedClassification
    from textattack.search_methods import GreedyWordSwapWIR

    return Attack(UntargetedClassification(victim), [RepeatModification(), StopwordModification()],
                  _wordnet_swap(wordnet_root), GreedyWordSwapWIR("weighted-saliency"))


def _use_constraint(threshold, window, metric="angular"):
    import importlib.util

    # TextAttack's USE constraint imports tensorflow_hub itself; check for it up front for a clear message
    if importlib.util.find_spec("tensorflow_hub") is None:
        raise ImportError(
            "textfooler/bae use the Universal Sentence Encoder constraint: pip install tensorflow tensorflow_hub "
            "where the network exists (TextAttack downloads the USE model on first use)"
        )
    from textattack.constraints.semantics.sentence_encoders import UniversalSentenceEncoder

    return UniversalSentenceEncoder(threshold=threshold, metric=metric, compare_against_original=False,
                                    window_size=window, skip_text_shorter_than_window=True)


def _load_vectors(path):
    words, vecs = [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            parts = line.rstrip().split(" ")
            if len(parts) > 2:
                words.append(parts[0])
                vecs.append(np.asarray(parts[1:], dtype=np.float32))
    if not words:
        raise ValueError(f"embedding file {path!s} holds no 'word v1 ... vd' lines")
    return words, np.stack(vecs)


def _textfooler(victim, embedding_path):
    """TextFoolerJin2019 as TextAttack builds it, with counter-fitted vectors from a local text file."""
    from textattack import Attack
    from textattack.constraints.grammaticality import PartOfSpeech
    from textattack.constraints.overlap import MaxWordsPerturbed  # noqa: F401 - recipe parity
    from textattack.constraints.pre_transformation import (
        InputColumnModification,
        RepeatModification,
        StopwordModification,
    )
    from textattack.constraints.semantics import WordEmbeddingDistance
    from textattack.goal_functions import UntargetedClassification
    from textattack.search_methods import GreedyWordSwapWIR
    from textattack.shared import WordEmbedding
    from textattack.transformations import WordSwapEmbedding

    words, vecs = _load_vectors(embedding_path)
    emb = WordEmbedding(vecs, {w: i for i, w in enumerate(words)}, dict(enumerate(words)))
    constraints = [RepeatModification(), StopwordModification(),
                   InputColumnModification(["premise", "hypothesis"], {"premise"}),
                   WordEmbeddingDistance(embedding=emb, min_cos_sim=0.5), PartOfSpeech(allow_verb_noun_swap=True),
                   _use_constraint(0.840845057, 15)]
    return Attack(UntargetedClassification(victim), constraints, WordSwapEmbedding(max_candidates=50, embedding=emb),
                  GreedyWordSwapWIR("delete"))


def _bae(victim, masked_lm):
    """BAEGarg2019 (BAE-R) as TextAttack builds it, with the masked LM from a local directory."""
    from textattack import Attack
    from textattack.constraints.grammaticality import PartOfSpeech
    from textattack.constraints.pre_transformation import RepeatModification, StopwordModification
    from textattack.goal_functions import UntargetedClassification
    from textattack.search_methods import GreedyWordSwapWIR
    from textattack.transformations import WordSwapMaskedLM
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    lm, tok = AutoModelForMaskedLM.from_pretrained(masked_lm), AutoTokenizer.from_pretrained(masked_lm)
    transformation = WordSwapMaskedLM(method="bae", masked_language_model=lm, tokenizer=tok, max_candidates=50,
                                      min_confidence=0.0)
    constraints = [RepeatModification(), StopwordModification(), PartOfSpeech(allow_verb_noun_swap=True),
                   _use_constraint(0.936338023, 15, metric="cosine")]
    return Attack(UntargetedClassification(victim), constraints, transformation, GreedyWordSwapWIR("delete"))


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
