"""Shared fixtures: a synthetic sentiment corpus and a tiny BERT built and trained inside the tests
(tokenizer trained with ``tokenizers``, saved locally; nothing is downloaded)."""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

POS = ["good", "great", "wonderful", "excellent", "brilliant", "lovely", "enjoyable", "charming",
       "beautiful", "amazing", "delightful", "superb"]
NEG = ["bad", "terrible", "awful", "boring", "horrible", "dull", "weak", "disappointing", "painful",
       "dreadful", "mediocre", "tedious"]
SUBJ = ["the movie", "this film", "the acting", "the story", "the ending", "the music", "the script",
        "the cast", "the plot", "the dialogue"]
TEMPL = ["{s} was {a}", "{s} was really {a}", "honestly {s} is {a}", "i think {s} was {a} and {a2}",
         "{s} felt {a} overall", "what a {a} experience , {s} was {a2}"]


def make_corpus(n: int, seed: int) -> tuple[list[str], list[int]]:
    rng = random.Random(seed)
    texts, labels = [], []
    for _ in range(n):
        y = rng.randrange(2)
        words = POS if y else NEG
        t = rng.choice(TEMPL).format(s=rng.choice(SUBJ), a=rng.choice(words), a2=rng.choice(words))
        texts.append(t)
        labels.append(y)
    return texts, labels


@pytest.fixture(scope="session")
def corpus():
    tr = make_corpus(600, 0)
    te = make_corpus(200, 1)
    return tr, te


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory, corpus):
    """(base_model, tokenizer): an untrained 1-layer BERT and a WordPiece tokenizer trained on the corpus."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    from tokenizers import models, normalizers, pre_tokenizers, processors, trainers

    torch.set_num_threads(1)
    (train_texts, _), _ = corpus
    tok = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=400, show_progress=False,
                                         special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.train_from_iterator(train_texts, trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                                cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    path = tmp_path_factory.mktemp("tiny_bert_tok")
    fast.save_pretrained(path)
    tokenizer = transformers.AutoTokenizer.from_pretrained(path)
    cfg = transformers.BertConfig(vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=1,
                                  num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                                  num_labels=2)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        model = transformers.BertForSequenceClassification(cfg)
    return model, tokenizer


def pytest_configure(config):
    # registered here too so the suite runs standalone (outside the workspace's pytest config)
    config.addinivalue_line("markers", "slow: longer tests (still run in CI)")


# --- toy models and data of the four task types (the experiment's tests; no download, no torch) ----------------

POSITIVE = set(POS)
TOPICS = ("negative", "positive")


class Toy:
    """Keyword models: exact-word lookups, so any misspelling of the keyword changes the prediction. ``calls``
    counts the model calls."""

    def __init__(self, fn):
        self.fn = fn
        self.calls = 0

    def __call__(self, batch):
        self.calls += 1
        return self.fn(batch)


def sentiment_logits(texts):
    return np.array([[0.0, 2.0] if POSITIVE & set(t.split()) else [2.0, 0.0] for t in texts])


def pair_logits(pairs):
    return np.array([[0.0, 2.0] if set(hyp.split()) <= set(pre.split()) else [2.0, 0.0] for pre, hyp in pairs])


LABELS_ML = ("toxic", "insult", "threat")


def multilabel_logits(texts):
    return np.array([[2.0 if w in t.split() else -2.0 for w in LABELS_ML] for t in texts])


LEXICON = {"the": 0, "a": 0, "cat": 1, "dog": 1, "mat": 1, "park": 1, "sat": 2, "ran": 2, "slept": 2, "on": 3,
           "in": 3}
TAGS = ("DET", "NOUN", "VERB", "ADP", "PUNCT")


def tagger_logits(sents):
    return [2.0 * np.eye(5)[[LEXICON.get(t.lower(), 1) for t in s]] for s in sents]


def toy_data(n: int = 60, seed: int = 0):
    """``(Models, Data)`` for the four task types, the user's ids ``row-<k>`` and label names."""
    from robustsuite_common.experiment import Split
    from zeroe_perturb.experiment import Data, Models

    rng = random.Random(seed)
    texts, labels = make_corpus(n, seed)
    ids = tuple(f"row-{k}" for k in range(n))
    premises = [rng.choice(["the cat sat on the mat today", "a dog ran in the park early",
                            "the child slept in the car"]) for _ in range(n)]
    pairs, py = [], []
    for pre in premises:
        words = pre.split()
        if rng.random() < 0.5:
            pairs.append((pre, " ".join(rng.sample(words, 3))))
            py.append(1)
        else:
            pairs.append((pre, "the ocean was purple"))
            py.append(0)
    ml_texts, ml_y = [], []
    for _ in range(n):
        on = [w for w in LABELS_ML if rng.random() < 0.4]
        ml_texts.append(" ".join(rng.sample(on + ["some", "plain", "words", "here"], len(on) + 4)))
        ml_y.append([int(w in on) for w in LABELS_ML])
    sents, tags = [], []
    for _ in range(n):
        s = [rng.choice(["The", "A"]), rng.choice(["cat", "dog"]), rng.choice(["sat", "ran", "slept"]),
             rng.choice(["on", "in"]), "the", rng.choice(["mat", "park"]), "."]
        sents.append(s)
        tags.append([LEXICON.get(t.lower(), 4) if t != "." else -1 for t in s])
    models = Models(classifier=Toy(sentiment_logits), pairs=Toy(pair_logits), multilabel=Toy(multilabel_logits),
                    tagger=Toy(tagger_logits), names={"classification": "keyword-sentiment"})
    data = Data(classification=Split(texts, np.array(labels), ids, TOPICS),
                pairs=Split(pairs, np.array(py), ids, ("unrelated", "entailed")),
                multilabel=Split(ml_texts, np.array(ml_y), ids, LABELS_ML),
                tagging=Split(sents, tags, ids, TAGS))
    return models, data


@pytest.fixture()
def toy():
    """The factory :func:`toy_data` (fresh models with zeroed call counters on every call)."""
    return toy_data
