"""Batched prediction over either model contract (vision module or text classifier)."""

from __future__ import annotations

import numpy as np
import torch


def predict_logits(model, x, *, batch_size: int = 256, device: torch.device | str | None = None) -> np.ndarray:
    """Logits (N, K) as float64 numpy for a vision ``nn.Module`` (tensor x) or a text classifier (list x)."""
    if isinstance(model, torch.nn.Module):
        if not isinstance(x, torch.Tensor):
            raise TypeError("a vision model needs a tensor input")
        dev = device or next(model.parameters()).device
        outs = []
        with torch.no_grad():
            for i in range(0, len(x), batch_size):
                outs.append(model(x[i:i + batch_size].to(dev)).double().cpu())
        return torch.cat(outs).numpy()
    return np.asarray(model(list(x)), dtype=np.float64)


def softmax64(logits: np.ndarray) -> np.ndarray:
    """Softmax in float64 through log-softmax (no overflow for any logit scale)."""
    t = torch.as_tensor(logits, dtype=torch.float64)
    return torch.log_softmax(t, dim=-1).exp().numpy()
