"""Shipped demo data and a small model, so the experiment runs offline with this package alone.

- :func:`load_glosses`: WordNet 3.0 noun glosses labelled with their topic (8 classes: artifact, person, plant,
  animal, act, communication, location, food), 150 training and 40 test glosses per topic
  (``data/wordnet_glosses.json.xz``, WordNet licence in ``data/LICENSE-WordNet.txt``; rebuilt by
  ``tools/build/zeroe_perturb/build_glosses.py`` from robustsuite's ``builtin:wordnet-topics``).
- :class:`WordNaiveBayes`: multinomial naive Bayes over lower-cased word tokens, numpy only — a text classifier
  ``list[str] -> (N, K)`` log-probabilities (logits) of exactly the kind the benchmark attacks: a misspelt word
  is an unknown word to it.
"""

from __future__ import annotations

import functools
import json
import lzma
from collections.abc import Sequence
from importlib import resources
from typing import Any

import numpy as np

from robustsuite_common.checks import check_choice, check_float, check_labels, check_texts
from robustsuite_common.experiment import Split

from ._tokens import split_parts

SPLITS = ("train", "test")


@functools.cache
def _payload() -> dict[str, Any]:
    raw = resources.files("zeroe_perturb").joinpath("data/wordnet_glosses.json.xz").read_bytes()
    return json.loads(lzma.decompress(raw).decode("utf-8"))


def load_glosses(split: str = "test") -> Split:
    """The shipped glosses of ``split`` ("train" or "test") as a ``Split``: texts, integer topic labels, the
    row ids ``"<split>-<row>"`` of robustsuite's ``builtin:wordnet-topics`` and the topic names."""
    check_choice("split", split, SPLITS)
    d = _payload()
    part = d[split]
    return Split(list(part["text"]), np.asarray(part["label"], dtype=np.int64),
                 tuple(f"{split}-{r}" for r in part["row"]), tuple(d["classes"]))


def _words(text: str) -> list[str]:
    return [w.lower() for w in split_parts(text)[1::2]]


class WordNaiveBayes:
    """Multinomial naive Bayes on word counts with add-``alpha`` smoothing; ``__call__(texts)`` returns the
    ``(N, K)`` log-posteriors (logits; words never seen in training are ignored)."""

    def __init__(self, *, alpha: float = 1.0) -> None:
        self.alpha = check_float("alpha", alpha, gt=0)
        self.vocab: dict[str, int] = {}
        self.log_prior: np.ndarray | None = None
        self.log_lik: np.ndarray | None = None

    def fit(self, texts: Sequence[str], labels: Any, n_classes: int | None = None) -> WordNaiveBayes:
        texts = check_texts("texts", texts)
        y = check_labels("labels", labels, length=len(texts))
        k = int(n_classes or y.max() + 1)
        for t in texts:
            for w in _words(t):
                self.vocab.setdefault(w, len(self.vocab))
        counts = np.zeros((k, len(self.vocab)))
        for t, c in zip(texts, y, strict=True):
            for w in _words(t):
                counts[c, self.vocab[w]] += 1
        self.log_prior = np.log(np.bincount(y, minlength=k) / len(y))
        smoothed = counts + self.alpha
        self.log_lik = np.log(smoothed / smoothed.sum(axis=1, keepdims=True))
        return self

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        if self.log_lik is None or self.log_prior is None:
            raise ValueError("WordNaiveBayes must be fitted first (call .fit(texts, labels))")
        texts = check_texts("texts", texts, allow_empty=True)
        x = np.zeros((len(texts), len(self.vocab)))
        for i, t in enumerate(texts):
            for w in _words(t):
                j = self.vocab.get(w)
                if j is not None:
                    x[i, j] += 1
        z = self.log_prior + x @ self.log_lik.T
        return z - np.logaddexp.reduce(z, axis=1, keepdims=True)
