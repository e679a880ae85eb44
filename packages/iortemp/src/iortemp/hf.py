"""Text classifiers: :class:`HFTextClassifier` (any Hugging Face sequence classifier as the text-classifier
contract; robustsuite_common's one copy, re-exported) and :class:`CachedTextClassifier` (per-text memo)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from robustsuite_common.checks import check_int, check_texts
from robustsuite_common.text import HFTextClassifier

__all__ = ["CachedTextClassifier", "HFTextClassifier"]


class CachedTextClassifier:
    """Memoise a text classifier's float32 logits per text (the same contract: ``list[str] -> (N, K)``).

    The attacks of a Table 2/3 grid query the same texts again and again: every served temperature of one
    base model, every adversary temperature (plain / cal / opt) and the Brent search's probes rank the same
    words and score many of the same candidates. Wrapping the *base* model once and serving
    ``TemperatureScaled(cached, temperature=T)`` computes each distinct text once, in batches of the texts not yet seen.
    A text's logits are those of the batch it was first computed in (padding can move float32 logits by an
    ulp between batches); with the same query order the results are reproducible. ``maxsize`` bounds the
    memory (oldest entries dropped first); ``hits`` / ``misses`` count texts.
    """

    def __init__(self, model, *, maxsize: int = 1_000_000):
        if not callable(model):
            raise TypeError("model must be a callable list[str] -> np.ndarray of logits")
        self.inner = model
        self.maxsize = check_int("maxsize", maxsize, ge=1)
        self.model = getattr(model, "model", model)
        tok = getattr(model, "tokenizer", None)
        if tok is not None:
            self.tokenizer = tok
        self._cache: dict[str, np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    def __call__(self, text_list: Sequence[str]) -> np.ndarray:
        texts = check_texts("text_list", text_list, allow_empty=True)
        if not texts:
            return np.asarray(self.inner([]))
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        self.misses += len(todo)
        self.hits += len(texts) - len(todo)
        if todo:
            out = np.asarray(self.inner(todo))
            if out.ndim != 2 or out.shape[0] != len(todo):
                raise ValueError(f"the wrapped model returned shape {out.shape} for {len(todo)} texts")
            for t, z in zip(todo, out, strict=True):
                self._cache[t] = z
            while len(self._cache) > self.maxsize:
                self._cache.pop(next(iter(self._cache)))
        fresh = dict(zip(todo, out, strict=True)) if todo else {}
        return np.stack([self._cache[t] if t in self._cache else fresh[t] for t in texts])

    def logits64(self, text_list: Sequence[str]) -> np.ndarray:
        """Reporting logits: the cached float32 logits in float64 (or the inner model's own ``logits64``)."""
        texts = check_texts("text_list", text_list, allow_empty=True)
        inner64 = getattr(self.inner, "logits64", None)
        return inner64(texts) if inner64 is not None else self(texts).astype(np.float64)

    def clear(self) -> None:
        self._cache.clear()
