"""Table 5 (App. B): DDi-AT's gradient normalisation ablation over seeds, with intervals.

Fine-tunes a copy of one base classifier with DDi-AT under each ``ddi_normalization`` setting (``normalise``:
Eq. 12's global unit-norm direction; ``clip``; ``none``) once per seed, and reports clean accuracy and mean
predicted-class confidence (float64) on held-out texts: the mean over seeds, a Student-t interval over seeds,
and per-run intervals (Clopper-Pearson for accuracy, BCa bootstrap for the mean confidence; the hull over
seeds). The paper's claim: only ``normalise`` makes the model over-confident at unchanged accuracy.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from torch import nn

from robustsuite_common.checks import check_choice, check_labels, check_texts
from robustsuite_common.intervals import mean_interval, proportion_of, seed_interval

from .hf import HFTextClassifier
from .temperature import logits64
from .training import train_classifier
from .training_config import NORMALIZATIONS, TrainingConfig

__all__ = ["NormalizationAblation", "ddi_normalization_ablation"]


@dataclass(frozen=True)
class NormalizationAblation:
    """Rows ``{"setting", "accuracy", "confidence", ..._ci_low/_high (per run), ..._seed_ci_low/_high,
    "per_seed": [{"seed", "accuracy", "confidence"}]}``; ``base`` is the model before fine-tuning."""

    rows: tuple[dict, ...]
    seeds: tuple[int, ...]
    n: int

    def to_dict(self) -> dict:
        return {"rows": [dict(r) for r in self.rows], "seeds": list(self.seeds), "n": self.n}

    def row(self, setting: str) -> dict:
        for r in self.rows:
            if r["setting"] == setting:
                return r
        raise KeyError(f"no row {setting!r}")


def _measure(clf, texts, labels, seed: int) -> tuple[float, float, object, object]:
    z = logits64(clf, texts)
    z = z - z.max(axis=1, keepdims=True)
    conf = 1.0 / np.exp(z).sum(axis=1)  # max-softmax from log-sum-exp (the max logit is 0)
    correct = z.argmax(axis=1) == labels
    return (float(correct.mean()), float(conf.mean()), proportion_of(correct),
            mean_interval(conf, seed=seed, bounds=(0.0, 1.0)))


def _row(setting: str, runs: list[tuple[int, tuple]]) -> dict:
    acc = [r[1][0] for r in runs]
    conf = [r[1][1] for r in runs]
    row = {"setting": setting, "accuracy": float(np.mean(acc)), "confidence": float(np.mean(conf)),
           "accuracy_ci_low": min(r[1][2].low for r in runs), "accuracy_ci_high": max(r[1][2].high for r in runs),
           "confidence_ci_low": min(r[1][3].low for r in runs),
           "confidence_ci_high": max(r[1][3].high for r in runs)}
    for name, vals in (("accuracy", acc), ("confidence", conf)):
        iv = seed_interval(vals, bounds=(0.0, 1.0))
        row[f"{name}_seed_ci_low"] = None if iv is None else iv.low
        row[f"{name}_seed_ci_high"] = None if iv is None else iv.high
    row["per_seed"] = [{"seed": sd, "accuracy": m[0], "confidence": m[1]} for sd, m in runs]
    return row


def ddi_normalization_ablation(
    model,
    tokenizer,
    train_texts: Sequence[str],
    train_labels,
    test_texts: Sequence[str],
    test_labels,
    *,
    settings: Sequence[str] = NORMALIZATIONS,
    seeds: Sequence[int] = (0, 1, 2),
    config: TrainingConfig | None = None,
    max_length: int | None = None,
    progress: bool = False,
) -> NormalizationAblation:
    """Table 5: DDi-AT fine-tuned from ``model`` (a transformers classifier, left unchanged) with each
    ``ddi_normalization`` in ``settings``, once per training seed; accuracy and mean confidence on the test
    texts with per-run and over-seed 95 % intervals, plus the ``base`` row (``model`` itself)."""
    for s in settings:
        check_choice("settings", s, NORMALIZATIONS)
    seed_list = tuple(int(s) for s in seeds)
    if not seed_list:
        raise ValueError("seeds must be a non-empty sequence of integers")
    cfg = config or TrainingConfig()
    if not isinstance(model, nn.Module) or not hasattr(model, "get_input_embeddings"):
        raise TypeError("model must be a transformers sequence classifier (nn.Module with get_input_embeddings), got "
                        f"{type(model).__name__}")
    train_texts = check_texts("train_texts", train_texts)
    check_labels("train_labels", train_labels, length=len(train_texts))
    texts = check_texts("test_texts", test_texts)
    y = check_labels("test_labels", test_labels, length=len(texts))
    ml = int(max_length or cfg.max_length)
    was_training = model.training
    base = HFTextClassifier(model, tokenizer, max_length=ml)
    rows = [_row("base", [(seed_list[0], _measure(base, texts, y, seed_list[0]))])]
    model.train(was_training)
    for setting in settings:
        runs = []
        for sd in seed_list:
            m = copy.deepcopy(model)
            train_classifier(m, tokenizer, train_texts, train_labels, method="ddi-at",
                             config=dataclasses.replace(cfg, ddi_normalization=setting), seed=sd, progress=progress)
            m.eval()
            runs.append((sd, _measure(HFTextClassifier(m, tokenizer, max_length=ml), texts, y, sd)))
        rows.append(_row(setting, runs))
    return NormalizationAblation(tuple(rows), seed_list, len(texts))
