"""A text classifier around any Hugging Face sequence classifier (the text-classifier contract)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from robustsuite_common.models import evaluating, logits_from

from ._validation import check_int, check_texts
from .temperature import _device_of

__all__ = ["CachedTextClassifier", "HFTextClassifier"]


class HFTextClassifier:
    """``list[str] -> np.ndarray (N, K)`` float32 logits of a transformers sequence classifier.

    Also a TextAttack ``ModelWrapper`` by duck typing (``__call__``, ``.model``, ``.tokenizer``). Runs in
    eval mode without gradients on the model's device, in batches of ``batch_size``.
    """

    def __init__(self, model: nn.Module, tokenizer, *, max_length: int = 128, batch_size: int = 64):
        if not isinstance(model, nn.Module):
            raise TypeError("model must be a torch.nn.Module (a transformers sequence classifier)")
        self.model = model
        self.tokenizer = tokenizer
        self.max_length = check_int("max_length", max_length, ge=1)
        self.batch_size = check_int("batch_size", batch_size, ge=1)

    def encode(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        enc = self.tokenizer(
            list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        dev = _device_of(self.model)
        accepted = self._accepted_inputs()
        # DistilBERT / RoBERTa-style models take no token_type_ids even when a BERT-style tokenizer emits them
        return {k: v.to(dev) for k, v in enc.items() if accepted is None or k in accepted}

    def _accepted_inputs(self) -> frozenset[str] | None:
        """Names the model's ``forward`` accepts (``None``: it takes ``**kwargs``, pass everything)."""
        if not hasattr(self, "_accepted"):
            try:
                params = inspect.signature(self.model.forward).parameters
            except (TypeError, ValueError):  # pragma: no cover - forward without a signature
                params = {}
            var_kw = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
            self._accepted = None if var_kw or not params else frozenset(params)
        return self._accepted

    def __call__(self, text_list: Sequence[str]) -> np.ndarray:
        texts = check_texts("text_list", text_list, allow_empty=True)
        if not texts:
            return np.zeros((0, self.model.config.num_labels), dtype=np.float32)
        outs = []
        with evaluating(self.model), torch.no_grad():  # the caller's mode and buffers come back unchanged
            for i in range(0, len(texts), self.batch_size):
                logits = logits_from(self.model(**self.encode(texts[i : i + self.batch_size])))
                outs.append(logits.float().cpu().numpy())
        return np.concatenate(outs, axis=0)


class CachedTextClassifier:
    """Memoise a text classifier's float32 logits per text (the same contract: ``list[str] -> (N, K)``).

    The attacks of a Table 2/3 grid query the same texts again and again: every served temperature of one
    base model, every adversary temperature (plain / cal / opt) and the Brent search's probes rank the same
    words and score many of the same candidates. Wrapping the *base* model once and serving
    ``TemperatureScaled(cached, T)`` computes each distinct text once, in batches of the texts not yet seen.
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
