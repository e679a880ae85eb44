"""Text models as the text-classifier contract (``list[str] -> (N, K)`` logits, TextAttack's ``ModelWrapper`` shape),
and the wrappers of the WordNet task models of the Zéroe section (sentence pairs, multi-label, token tagging)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn


class TextClassifier:
    """A Hugging Face sequence classifier as the text-classifier contract: ``list[str] -> (N, K)`` logits.

    It has TextAttack's ``ModelWrapper`` shape (``__call__``, ``model``, ``tokenizer``, ``get_grad``), so
    TextAttack recipes accept it directly.
    """

    def __init__(self, model, tokenizer, *, max_length: int | None = None, batch_size: int = 64,
                 max_length_cap: int = 512):
        self.model, self.tokenizer, self.batch_size = model.eval(), tokenizer, batch_size
        if max_length is None:  # the tokenizer's own limit; "unset" tokenizers report a huge sentinel
            limit = getattr(tokenizer, "model_max_length", None)
            positions = getattr(model.config, "max_position_embeddings", None) or getattr(model.config, "n_positions", None)
            candidates = [v for v in (limit, positions, max_length_cap) if isinstance(v, int) and v > 0]
            max_length = min(candidates)
        if not isinstance(max_length, int) or max_length < 1:
            raise ValueError(f"max_length must be a positive integer, got {max_length!r}")
        self.max_length = max_length
        if tokenizer.pad_token is None:  # GPT-2 family: pad with EOS (the model reads the last non-pad token)
            if tokenizer.eos_token is None:
                raise ValueError("tokenizer has neither a pad token nor an EOS token to pad batches with; "
                                 "set tokenizer.pad_token before wrapping it")
            tokenizer.pad_token = tokenizer.eos_token
        if getattr(model.config, "pad_token_id", None) is None:
            model.config.pad_token_id = tokenizer.pad_token_id

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def labels(self) -> list[str] | None:
        """The model's class names in id order (``config.id2label``), or ``None`` when they are only
        transformers' placeholders ``LABEL_0, LABEL_1, ...``."""
        id2label = getattr(self.model.config, "id2label", None) or {}
        names = [str(id2label.get(i, id2label.get(str(i), ""))) for i in range(self.num_classes)]
        if not all(names) or names == [f"LABEL_{i}" for i in range(self.num_classes)]:
            return None
        return names

    @property
    def num_classes(self) -> int:
        return int(self.model.config.num_labels)

    def _tokenize(self, *texts, **kw) -> dict[str, torch.Tensor]:
        enc = self.tokenizer(*texts, padding=True, truncation=True, max_length=self.max_length,
                             return_tensors="pt", **kw)
        return {k: v.to(self.device) for k, v in enc.items()}

    def encode(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        return self._tokenize(list(texts))

    def to(self, device) -> TextClassifier:
        self.model.to(device)
        return self

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("texts must be a list of strings (or of pairs, of token lists), not a single string")
        texts = list(texts)
        out = [np.zeros((0, self.num_classes), dtype=np.float32)]
        with torch.no_grad():
            for i in range(0, len(texts), self.batch_size):
                out.append(self.model(**self.encode(texts[i:i + self.batch_size])).logits.float().cpu().numpy())
        return np.concatenate(out)

    def get_grad(self, text: str) -> dict:
        """Gradient of the loss w.r.t. the word embeddings (TextAttack's ``ModelWrapper.get_grad``)."""
        emb_layer = self.model.get_input_embeddings()
        store: dict = {}

        def hook(_module, _inp, out):
            out.retain_grad()
            store["emb"] = out

        handle = emb_layer.register_forward_hook(hook)
        try:
            enc = self.encode([text])
            logits = self.model(**enc).logits
            nn.functional.cross_entropy(logits, logits.argmax(-1)).backward()
        finally:
            handle.remove()
            self.model.zero_grad()
        return {"ids": enc["input_ids"][0].tolist(), "gradient": store["emb"].grad[0].cpu().numpy()}


def load_text_dir(path: Path, *, max_length: int = 64) -> TextClassifier:
    """A directory written by ``save_pretrained`` (model + tokenizer) as a :class:`TextClassifier`."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(str(path), local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    return TextClassifier(model, tokenizer, max_length=max_length)


# --- the WordNet task models of the Zéroe section ---------------------------------------------------------


class PairClassifier(TextClassifier):
    """``list[(premise, hypothesis)] -> (N, K)`` logits (RoBERTa pair input ``<s> A </s></s> B </s>``)."""

    def encode(self, pairs: Sequence[tuple[str, str]]) -> dict[str, torch.Tensor]:
        return self._tokenize([a for a, _ in pairs], [b for _, b in pairs])


class MultiLabelClassifier(TextClassifier):
    """``list[str] -> (N, K)`` logits, one independent sigmoid per label (trained with BCE)."""


class TokenTagger(TextClassifier):
    """``list[list[str]] -> list[(n_i, K) logits]``: the tokens are joined by single spaces, and each token
    is read at its first sub-word (found from the tokenizer's character offsets), so a token that an attack
    split with a space (intrude) or that is cut off by ``max_length`` still gets exactly one row (cut-off
    tokens: zero logits, i.e. a uniform guess)."""

    def encode(self, sentences: Sequence[Sequence[str]]) -> tuple[dict[str, torch.Tensor], list[list[int]]]:
        texts, spans = [], []
        for toks in sentences:
            pos, sp = 0, []
            for t in toks:
                sp.append((pos, pos + len(t)))
                pos += len(t) + 1
            texts.append(" ".join(toks))
            spans.append(sp)
        enc = self._tokenize(texts, return_offsets_mapping=True)
        offsets = enc.pop("offset_mapping").tolist()
        firsts = []
        for sp, off in zip(spans, offsets, strict=True):
            first = [-1] * len(sp)
            w = 0
            for j, (a, b) in enumerate(off):
                if b <= a:  # special or padding token
                    continue
                while w < len(sp) and a >= sp[w][1]:
                    w += 1
                if w < len(sp) and first[w] < 0 and b > sp[w][0]:
                    first[w] = j
            firsts.append(first)
        return enc, firsts

    def __call__(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        if isinstance(sentences, str) or any(isinstance(s, str) for s in sentences):
            raise TypeError("sentences must be a list of token lists")
        sents = [list(s) for s in sentences]
        out: list[np.ndarray] = []
        with torch.no_grad():
            for i in range(0, len(sents), self.batch_size):
                enc, firsts = self.encode(sents[i:i + self.batch_size])
                logits = self.model(**enc).logits.float().cpu().numpy()
                for z, first in zip(logits, firsts, strict=True):
                    rows = np.zeros((len(first), self.num_classes), np.float32)
                    ok = [k for k, j in enumerate(first) if j >= 0]
                    rows[ok] = z[[first[k] for k in ok]]
                    out.append(rows)
        return out


TASK_WRAPPERS = {"pairs": PairClassifier, "multilabel": MultiLabelClassifier, "tagging": TokenTagger}


class LogProbabilities:
    """A model declared to return probabilities (``?outputs=probabilities``), seen through ``log``: logits with the
    same softmax, so every method can take it. Text classifiers are wrapped here, vision modules by
    :class:`LogProbabilityModule`."""

    def __init__(self, inner) -> None:
        self.inner = inner

    @staticmethod
    def wrap(model):
        return LogProbabilityModule(model) if isinstance(model, nn.Module) else LogProbabilities(model)

    def __call__(self, x):
        p = np.asarray(self.inner(x), dtype=np.float32)
        return np.log(np.clip(p, np.finfo(np.float32).tiny, None))

    def __getattr__(self, name: str):
        return getattr(self.__dict__["inner"], name)


class LogProbabilityModule(nn.Module):
    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        from robustsuite_common.models import logits_from

        return logits_from(self.inner(x), outputs="probabilities")
