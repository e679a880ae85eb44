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


@pytest.fixture(scope="session")
def digits_model():
    """(tiny MLP trained on sklearn's 8x8 digits, (val x, y), (test x, y)); deterministic, ~2 s."""
    import torch
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.images / 16.0, dtype=torch.float32).unsqueeze(1)
    y = torch.tensor(d.target)
    g = torch.Generator().manual_seed(0)
    perm = torch.randperm(len(y), generator=g)
    x, y = x[perm], y[perm]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                                  torch.nn.Linear(64, 10))
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    for _ in range(150):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(net(x[:1200]), y[:1200]).backward()
        opt.step()
    net.eval()
    return net, (x[1200:1400], y[1200:1400]), (x[1400:1600], y[1400:1600])


@pytest.fixture(scope="session")
def counting_text():
    """The class ``CountingText``: ``counting_text(clf)`` wraps a text classifier, counting its calls."""

    class CountingText:
        """A text classifier that counts its calls (and exposes .model/.tokenizer like HFTextClassifier)."""

        def __init__(self, clf):
            self.clf, self.calls, self.model, self.tokenizer = clf, 0, clf.model, clf.tokenizer

        def __call__(self, texts):
            self.calls += 1
            return self.clf(texts)

    return CountingText
