"""A Hugging Face sequence classifier as the text-classifier contract (ARCHITECTURE.md, "Contracts"):
``list[str] -> numpy (N, K)`` float32 logits, with TextAttack's ``ModelWrapper`` shape (``__call__``, ``model``,
``tokenizer``, ``get_grad``), so TextAttack recipes take it as it is.

The transformers model and tokenizer are passed in: nothing here imports transformers, and torch is imported
when a classifier is built.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from .checks import check_int, check_texts
from .models import evaluating, logits_from, model_device

__all__ = ["MAX_LENGTH_CAP", "HFTextClassifier", "TextClassifier", "position_limit"]

MAX_LENGTH_CAP = 512  # tokens: the default max_length when the tokenizer reports no real limit


def position_limit(model: Any) -> int | None:
    """How many tokens the model's position table holds (``max_position_embeddings``, GPT-2's ``n_positions``), if
    it has one. RoBERTa-style embeddings (they keep a ``padding_idx``) number positions from ``padding_idx + 1``, so
    the first ``padding_idx + 1`` rows of their table are never a token's."""
    config = getattr(model, "config", None)
    n = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
    if not isinstance(n, int) or n <= 0:
        return None
    embeddings = getattr(getattr(model, "base_model", None), "embeddings", None)
    offset = getattr(embeddings, "padding_idx", None)
    if isinstance(offset, int) and hasattr(embeddings, "position_embeddings"):
        n -= offset + 1
    return n if n > 0 else None


def _forward_parameters(model: Any) -> frozenset[str] | None:
    """The names ``model.forward`` accepts, or ``None`` when it takes ``**kwargs`` (pass everything)."""
    try:
        params = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):  # pragma: no cover - a forward without a signature
        return None
    if not params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return frozenset(params)


class HFTextClassifier:
    """A transformers sequence classifier + its tokenizer as ``list[str] -> numpy (N, K)`` float32 logits.

    - ``max_length`` (tokens): ``None`` takes the smallest of the tokenizer's ``model_max_length``, the model's
      position table and ``max_length_cap`` (a tokenizer without a limit reports a huge sentinel); a given value is
      capped at the position table. Longer texts are truncated.
    - A tokenizer without a pad token (the GPT-2 family) pads with its EOS token, and the model's ``pad_token_id``
      is set to it, so batched and one-by-one logits agree.
    - Only the inputs the model's ``forward`` takes are passed (DistilBERT and RoBERTa-style models get no
      ``token_type_ids`` even when a BERT-style tokenizer emits them).
    - Calls run without gradients in eval mode, in batches of ``batch_size`` on the model's device; the model's
      modes and buffers come back as they were (:func:`robustsuite_common.models.evaluating`).
    """

    def __init__(self, model: Any, tokenizer: Any, *, max_length: int | None = None, batch_size: int = 64,
                 max_length_cap: int = MAX_LENGTH_CAP):
        import torch

        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"model must be a torch.nn.Module (a transformers sequence classifier), "
                            f"got {type(model).__name__}")
        model = cast(Any, model)  # a transformers model: its config and methods are not torch.nn.Module's
        self.model, self.tokenizer = model, tokenizer
        self.batch_size = check_int("batch_size", batch_size, ge=1)
        positions = position_limit(model)
        if max_length is None:
            limit = getattr(tokenizer, "model_max_length", None)
            cap = check_int("max_length_cap", max_length_cap, ge=1)
            max_length = min(v for v in (limit, positions, cap) if isinstance(v, int) and v > 0)
        else:
            max_length = min(check_int("max_length", max_length, ge=1), positions or max_length)
        self.max_length = max_length
        if tokenizer.pad_token is None:  # GPT-2 family: pad with EOS (the model reads the last non-pad token)
            if tokenizer.eos_token is None:
                raise ValueError("tokenizer has neither a pad token nor an EOS token to pad batches with; "
                                 "set tokenizer.pad_token before wrapping it")
            tokenizer.pad_token = tokenizer.eos_token
        if getattr(model.config, "pad_token_id", None) is None:
            model.config.pad_token_id = tokenizer.pad_token_id
        self._accepted = _forward_parameters(model)

    @property
    def device(self) -> Any:
        return model_device(self.model)

    @property
    def num_classes(self) -> int:
        return int(self.model.config.num_labels)

    @property
    def labels(self) -> list[str] | None:
        """The model's class names in id order (``config.id2label``), or ``None`` when they are only
        transformers' placeholders ``LABEL_0, LABEL_1, ...``."""
        id2label = getattr(self.model.config, "id2label", None) or {}
        names = [str(id2label.get(i, id2label.get(str(i), ""))) for i in range(self.num_classes)]
        if not all(names) or names == [f"LABEL_{i}" for i in range(self.num_classes)]:
            return None
        return names

    def to(self, device: Any) -> HFTextClassifier:
        self.model.to(device)
        return self

    def _tokenize(self, *texts: Any, **kw: Any) -> dict[str, Any]:
        """The tokenizer's padded, truncated batch (on the CPU, every field it returns)."""
        return dict(self.tokenizer(*texts, padding=True, truncation=True, max_length=self.max_length,
                                   return_tensors="pt", **kw))

    def _model_inputs(self, enc: dict[str, Any]) -> dict[str, Any]:
        """The fields of ``enc`` the model takes, on its device."""
        dev = self.device
        return {k: v.to(dev) for k, v in enc.items() if self._accepted is None or k in self._accepted}

    def encode(self, texts: Sequence[str]) -> dict[str, Any]:
        """The model inputs of a batch of texts."""
        return self._model_inputs(self._tokenize(list(texts)))

    def _check_inputs(self, inputs: Any) -> list:
        return check_texts("texts", inputs, allow_empty=True)

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        import torch

        items = self._check_inputs(texts)
        out = []
        with evaluating(self.model), torch.no_grad():
            for i in range(0, len(items), self.batch_size):
                logits = logits_from(self.model(**self.encode(items[i:i + self.batch_size])))
                out.append(logits.float().cpu().numpy())
        return np.concatenate(out) if out else np.zeros((0, self.num_classes), dtype=np.float32)

    def get_grad(self, text: str) -> dict:
        """Gradient of the cross-entropy at the predicted class w.r.t. the word embeddings of ``text`` (TextAttack's
        ``ModelWrapper.get_grad``): ``{"ids": token ids, "gradient": (n_tokens, hidden) array}``."""
        import torch

        emb_layer = self.model.get_input_embeddings()
        store: dict = {}

        def hook(_module, _inp, out):
            out.retain_grad()
            store["emb"] = out

        handle = emb_layer.register_forward_hook(hook)
        try:
            with evaluating(self.model), torch.enable_grad():
                enc = self.encode([text])
                logits = logits_from(self.model(**enc))
                torch.nn.functional.cross_entropy(logits, logits.argmax(-1)).backward()
        finally:
            handle.remove()
            self.model.zero_grad()
        return {"ids": enc["input_ids"][0].tolist(), "gradient": store["emb"].grad[0].cpu().numpy()}


TextClassifier = HFTextClassifier  # the umbrella's public name (robustsuite.TextClassifier)
