"""Shared fixtures: a synthetic sentiment corpus and a tiny BERT built and trained inside the tests
(tokenizer trained with ``tokenizers``, saved locally; nothing is downloaded)."""

from __future__ import annotations

import os
import random

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
