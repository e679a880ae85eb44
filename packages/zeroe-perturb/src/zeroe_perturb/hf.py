"""Hugging Face models as the task contracts of this package (extra ``zeroe-perturb[hf]``):

- text classification and multi-label classification (:func:`~zeroe_perturb.evaluate`): ``list[str] -> (N, K)``
  logits, :class:`HFTextClassifier` (robustsuite_common's one copy) and :class:`MultiLabelClassifier`;
- sentence pairs (:data:`zeroe_perturb.tasks.PairClassifier`, :func:`~zeroe_perturb.evaluate_pairs`):
  ``list[(premise, hypothesis)] -> (N, K)`` logits, :class:`PairClassifier`;
- token tagging (:data:`zeroe_perturb.tasks.Tagger`, :func:`~zeroe_perturb.evaluate_tagging`):
  ``list[list[str]] -> list[(n_i, K) logits]``, :class:`TokenTagger`.

Each takes ``(model, tokenizer, *, max_length=None, batch_size=64)`` like :class:`HFTextClassifier`; the model and a
fast tokenizer (the tagger reads character offsets) are passed in, so this module imports neither transformers
nor, until a wrapper is called, torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from robustsuite_common.checks import check_texts
from robustsuite_common.models import evaluating
from robustsuite_common.text import HFTextClassifier

from .tasks import _check_pairs

__all__ = ["HFTextClassifier", "MultiLabelClassifier", "PairClassifier", "TASK_WRAPPERS", "TokenTagger"]


class PairClassifier(HFTextClassifier):
    """``list[(premise, hypothesis)] -> (N, K)`` logits; the pair is the tokenizer's sentence-pair input (RoBERTa:
    ``<s> A </s></s> B </s>``, BERT: ``[CLS] A [SEP] B [SEP]``)."""

    def _check_inputs(self, inputs: Any) -> list:
        return _check_pairs(inputs, allow_empty=True)

    def encode(self, pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
        return self._model_inputs(self._tokenize([a for a, _ in pairs], [b for _, b in pairs]))


class MultiLabelClassifier(HFTextClassifier):
    """``list[str] -> (N, K)`` logits, one independent sigmoid per label (a model trained with BCE, scored by
    macro AUROC in :func:`~zeroe_perturb.evaluate`)."""


class TokenTagger(HFTextClassifier):
    """``list[list[str]] -> list[(n_i, K) logits]`` of a token-classification model.

    The tokens are joined by single spaces and each token is read at its first sub-word, found from the tokenizer's
    character offsets: a token that an attack split with a space (intrude) still gets exactly one row, and a token
    cut off by ``max_length`` gets zero logits (a uniform guess) instead of an error.
    """

    def encode(self, sentences: Sequence[Sequence[str]]) -> tuple[dict[str, Any], list[list[int]]]:
        """The model inputs, and per sentence the position of each token's first sub-word (-1: cut off)."""
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
        return self._model_inputs(enc), firsts

    def __call__(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        import torch

        if isinstance(sentences, str) or any(isinstance(s, str) for s in sentences):
            raise TypeError("sentences must be a list of token lists")
        sents = [check_texts(f"sentences[{i}]", s, allow_empty=True) for i, s in enumerate(sentences)]
        out: list[np.ndarray] = []
        with evaluating(self.model), torch.no_grad():
            for i in range(0, len(sents), self.batch_size):
                enc, firsts = self.encode(sents[i:i + self.batch_size])
                logits = self.model(**enc).logits.float().cpu().numpy()
                for z, first in zip(logits, firsts, strict=True):
                    rows = np.zeros((len(first), self.num_classes), np.float32)
                    ok = [k for k, j in enumerate(first) if j >= 0]
                    rows[ok] = z[[first[k] for k in ok]]
                    out.append(rows)
        return out


# the wrapper of each task type (robustsuite's shipped WordNet task models are loaded through it)
TASK_WRAPPERS = {"pairs": PairClassifier, "multilabel": MultiLabelClassifier, "tagging": TokenTagger}
