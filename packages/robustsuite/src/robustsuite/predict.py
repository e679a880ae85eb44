"""Batched prediction over either model contract (vision module or text classifier)."""

from __future__ import annotations

import numpy as np
import torch


def predict_logits(model, x, *, batch_size: int = 256, device: torch.device | str | None = None,
                   outputs: str = "logits") -> np.ndarray:
    """Logits (N, K) as float64 numpy for a vision ``nn.Module`` (tensor x; evaluated in eval mode, its mode restored,
    outputs read by :func:`robustsuite_common.models.logits_from` as ``outputs``: with "logits", probabilities are
    refused) or a text classifier (list x; every batch checked the same way). ``device`` is kept for callers; inputs follow the model's device."""
    from robustsuite_common.models import forward_logits, text_logits

    if isinstance(model, torch.nn.Module):
        if not isinstance(x, torch.Tensor):
            raise TypeError("a vision model needs a tensor input")
        return forward_logits(model, x, batch_size=batch_size, outputs=outputs, dtype=torch.float64).cpu().numpy()
    return text_logits(model, list(x), outputs=outputs, batch_size=batch_size)

