"""Shared fixtures: a tiny BERT + WordPiece tokenizer trained on a generated sentiment corpus (seconds)."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from iortemp._toy import SYNONYMS, build_tiny_bert, make_corpus  # noqa: E402


@pytest.fixture(scope="session")
def corpus():
    tr = make_corpus(800, 0)
    va = make_corpus(150, 1)
    te = make_corpus(120, 2)
    return tr, va, te


@pytest.fixture(scope="session")
def tiny_text(corpus):
    """(HFTextClassifier of a trained tiny BERT, corpus). Trained once per session."""
    import iortemp

    (xtr, ytr), _, _ = corpus
    model, tok = build_tiny_bert(xtr)
    cfg = iortemp.TrainingConfig(lr=3e-3, batch_size=32, epochs=6, max_length=32)
    iortemp.train_classifier(model, tok, xtr, ytr, method="base", config=cfg, seed=0)
    return iortemp.HFTextClassifier(model, tok, max_length=32)


@pytest.fixture(scope="session")
def synonyms():
    return SYNONYMS


@pytest.fixture(scope="session")
def tiny_bert():
    """Factory ``(texts, seed) -> (untrained tiny BertForSequenceClassification, fast tokenizer)``."""
    return build_tiny_bert


@pytest.fixture(scope="session")
def corpus_maker():
    return make_corpus
