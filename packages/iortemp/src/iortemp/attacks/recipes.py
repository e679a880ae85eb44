"""TextAttack's recipes (Sec. 5.1: DeepWordBug, PWWS, TextFooler, BAE) as attacks of this package's protocol,
built offline where their resources are local files (WordNet for PWWS, counter-fitted vectors for TextFooler, a
masked LM for BAE)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robustsuite_common.checks import check_choice, check_int

from .._rng import seeded_globals
from .._textattack import import_textattack
from ..wordnet import find_wordnet, wordnet_candidates, wordnet_reader
from .output import AttackOutput, check_text_batch, progress_bar

__all__ = ["RECIPES", "TextAttackRecipe"]

RECIPES = {
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

        self.recipe = check_choice("recipe", recipe, tuple(RECIPES))
        self.query_budget = None if query_budget is None else check_int("query_budget", query_budget, ge=1)
        self.model_batch_size = check_int("model_batch_size", model_batch_size, ge=1)
        for name, path in (("wordnet", wordnet), ("embedding", embedding), ("masked_lm", masked_lm)):
            if path is not None and not os.path.exists(path):
                raise FileNotFoundError(f"{name} path {path!s} does not exist")
        self.wordnet, self.embedding, self.masked_lm = wordnet, embedding, masked_lm
        if self.recipe == "pwws":
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

    def build(self, model):
        """The ``textattack.Attack`` for ``model`` (imports textattack: slow, ~15 s the first time)."""
        import_textattack()
        if self.recipe == "pwws":
            attack = _pwws(model, self.wordnet)
        elif self.recipe == "textfooler" and self.embedding is not None:
            attack = _textfooler(model, self.embedding)
        elif self.recipe == "bae" and self.masked_lm is not None:
            attack = _bae(model, self.masked_lm)
        else:
            import textattack.attack_recipes as recipes

            attack = getattr(recipes, RECIPES[self.recipe]).build(model)
        attack.goal_function.batch_size = self.model_batch_size
        if self.query_budget is not None:
            attack.goal_function.query_budget = self.query_budget
        return attack

    def __call__(
        self, model, texts: Sequence[str], labels, *, seed: int = 0, progress: bool = False
    ) -> AttackOutput:
        texts, labels = check_text_batch(texts, labels, model)
        attack = self.build(model)
        from textattack.attack_results import SkippedAttackResult, SuccessfulAttackResult

        adv, success, skipped, queries = [], [], [], []
        for i, (t, y) in enumerate(progress_bar(list(zip(texts, labels, strict=True)), progress)):
            with seeded_globals(seed + i):
                r = attack.attack(t, int(y))
            adv.append(r.perturbed_result.attacked_text.text if not isinstance(r, SkippedAttackResult) else t)
            success.append(isinstance(r, SuccessfulAttackResult))
            skipped.append(isinstance(r, SkippedAttackResult))
            queries.append(int(getattr(r.perturbed_result, "num_queries", 0)))
        return AttackOutput(adv, np.array(success), np.array(skipped), np.array(queries, dtype=np.int64))


def _wordnet_swap(root):
    """TextAttack's ``WordSwapWordNet`` from local WordNet files (without its ``nltk.download`` call), with
    the candidates cached per word (:func:`wordnet_candidates`)."""
    from textattack.transformations import WordSwap

    wordnet_reader(root)  # fail early (FileNotFoundError naming what to install) before any attack runs
    resolved = find_wordnet(root)

    class LocalWordNetSwap(WordSwap):
        def _get_replacement_words(self, word, random=False):
            return wordnet_candidates(word, resolved)

    return LocalWordNetSwap()


def _pwws(model, wordnet_root):
    """PWWSRen2019 as TextAttack builds it, with the WordNet swap read from local files."""
    from textattack import Attack
    from textattack.constraints.pre_transformation import RepeatModification, StopwordModification
    from textattack.goal_functions import UntargetedClassification
    from textattack.search_methods import GreedyWordSwapWIR

    return Attack(UntargetedClassification(model), [RepeatModification(), StopwordModification()],
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


def _textfooler(model, embedding_path):
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
    return Attack(UntargetedClassification(model), constraints, WordSwapEmbedding(max_candidates=50, embedding=emb),
                  GreedyWordSwapWIR("delete"))


def _bae(model, masked_lm):
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
    return Attack(UntargetedClassification(model), constraints, transformation, GreedyWordSwapWIR("delete"))


