"""A text classifier around any Hugging Face sequence classifier (the text-classifier contract)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import numpy as np
import torch
from torch import nn

from ._validation import check_positive_int
from .temperature import _device_of

__all__ = ["HFTextClassifier"]


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
        self.max_length = check_positive_int(max_length, "max_length")
        self.batch_size = check_positive_int(batch_size, "batch_size")

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
        texts = list(text_list)
        if not texts:
            return np.zeros((0, self.model.config.num_labels), dtype=np.float32)
        was_training = self.model.training
        self.model.eval()
        outs = []
        try:
            with torch.no_grad():
                for i in range(0, len(texts), self.batch_size):
                    logits = self.model(**self.encode(texts[i : i + self.batch_size])).logits
                    outs.append(logits.float().cpu().numpy())
        finally:
            self.model.train(was_training)
        return np.concatenate(outs, axis=0)
