"""What every attack of the evaluation protocol returns (:class:`AttackOutput`: the adversarial inputs and the
per-sample outcome on the attacked model), and the input check and progress bar the text and vision attacks
share."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from robustsuite_common.checks import check_labels, check_texts

__all__ = ["AttackOutput", "check_text_batch", "progress_bar"]


@dataclass(frozen=True)
class AttackOutput:
    """Adversarial inputs (list of str, or a tensor for vision) and per-sample outcome on the model."""

    adversarial: list | torch.Tensor
    success: np.ndarray  # bool (N,): model's prediction flipped from the label
    skipped: np.ndarray  # bool (N,): model already wrong on the clean input, not attacked
    queries: np.ndarray  # int (N,): model queries spent (0 for gradient attacks)
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        out = {
            "n": int(len(self.success)),
            "success_rate": float(np.mean(self.success)) if len(self.success) else 0.0,
            "skipped": int(np.sum(self.skipped)),
            "mean_queries": float(np.mean(self.queries)) if len(self.queries) else 0.0,
        }
        if isinstance(self.adversarial, list):
            out["adversarial"] = list(self.adversarial)
        return out


def check_text_batch(texts, labels, model=None) -> tuple[list[str], np.ndarray]:
    """Texts and labels checked; with ``model``, the labels against its number of classes (one query of the
    first text alone — the query every attack starts with)."""
    texts = check_texts("texts", texts)
    y = check_labels("labels", labels, length=len(texts))
    if model is not None:
        k = np.asarray(model([texts[0]])).shape[-1]
        check_labels("labels", y, n_classes=k)
    return texts, y


def progress_bar(it, progress: bool):
    if not progress:
        return it
    from tqdm.auto import tqdm

    return tqdm(it)


