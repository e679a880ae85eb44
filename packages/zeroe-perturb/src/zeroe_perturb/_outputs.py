"""The one adapter from a text model's output to logits (ARCHITECTURE.md, "Models and numbers").

A text classifier is a callable ``list[str] -> (N, K)`` (the TextAttack ``ModelWrapper`` contract); what it
returns may be a numpy array, a list of rows, a torch tensor, a tuple or list whose first element is the logits
(``return_dict=False`` models), a mapping with ``"logits"`` or a Hugging Face ``ModelOutput``. Outputs that look
like probabilities (every row in [0, 1] and summing to 1) are refused unless the caller says
``outputs="probabilities"`` (then ``log p`` is used, which has the same argmax, softmax and ranking).
torch is never imported here: a tensor is recognised by its methods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from robustsuite_common.models import looks_like_probabilities  # the one check, at any number of rows

OUTPUT_FORMS = ("logits", "probabilities", "log_probabilities")


def _is_tensor(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "detach")


def _two_dimensional(x: Any) -> bool:
    return (isinstance(x, np.ndarray) or _is_tensor(x)) and getattr(x, "ndim", 0) == 2


def check_outputs(outputs: str) -> str:
    if outputs not in OUTPUT_FORMS:
        raise ValueError(f"outputs must be one of {list(OUTPUT_FORMS)}, got {outputs!r}")
    return outputs


def as_logits(output: Any, n: int, what: str = "classifier", *, outputs: str = "logits",
              first_text: Any = None, multilabel: bool = False) -> np.ndarray:
    """``output`` as a float64 ``(n, K)`` array of finite logits, else ``ValueError``/``TypeError`` naming ``what``.
    ``multilabel``: one independent score per label (sigmoid outputs are fine, no probability check)."""
    out = output
    if isinstance(out, tuple) or (isinstance(out, list) and out and _two_dimensional(out[0])):
        if not out:
            raise ValueError(f"{what} returned an empty tuple; expected logits (N, K) as its first element")
        out = out[0]
    elif isinstance(out, Mapping):
        if "logits" not in out:
            raise TypeError(f"{what} returned a mapping without 'logits' (keys {sorted(map(str, out))}); return "
                            "logits (N, K), a tuple whose first element they are, a dict with 'logits' or a ModelOutput")
        out = out["logits"]
    elif not isinstance(out, np.ndarray | list) and not _is_tensor(out) and hasattr(out, "logits"):
        out = out.logits
    if _is_tensor(out):
        tensor: Any = out
        out = tensor.detach().cpu().double().numpy()
    try:
        z = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must return logits (N, K) as an array, tensor, tuple, dict with 'logits' or "
                        f"ModelOutput; got {type(output).__name__}") from None
    if z.ndim != 2 or z.shape[0] != n:
        raise ValueError(f"{what} must return logits of shape (N, K) = ({n}, K); got {z.shape}")
    if not np.isfinite(z).all():
        bad = int(np.flatnonzero(~np.isfinite(z).all(axis=1))[0])
        where = f", first for item {bad}" + (f": {first_text(bad)!r}" if first_text is not None else "")
        raise ValueError(f"{what} returned non-finite logits (NaN or inf){where}")
    if z.shape[1] < 2 and not multilabel:
        raise ValueError(f"{what} must return logits for at least 2 classes, got {z.shape[1]}: a single-output "
                         "scorer s can be passed as two logits, np.stack([np.zeros_like(s), s], 1)")
    if outputs == "logits" or multilabel:
        if not multilabel and looks_like_probabilities(z):
            raise ValueError(f"{what} outputs look like probabilities (every row in [0, 1] and summing to 1), not "
                             "logits; pass outputs='probabilities' (log p is then used) or return logits")
        return z
    if outputs == "probabilities":
        if (z < -1e-6).any() or (z > 1 + 1e-6).any():
            raise ValueError(f"{what} outputs were declared probabilities but leave [0, 1] "
                             f"(range [{z.min():.4g}, {z.max():.4g}])")
        return np.log(np.clip(z, np.finfo(np.float64).tiny, None))
    return z  # log-probabilities are logits


def softmax_confidence(z: np.ndarray) -> np.ndarray:
    """Max softmax probability per row (the record's ``confidence``), computed stably."""
    z = z - z.max(axis=1, keepdims=True)
    return 1.0 / np.exp(z).sum(axis=1)


def _is_module(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] != "builtins" and hasattr(obj, "training") and \
        callable(getattr(obj, "modules", None)) and callable(getattr(obj, "buffers", None))


def call_model(model: Any, batch: Any) -> Any:
    """``model(batch)``; a torch module (or a wrapper whose ``.model`` is one, e.g. a TextAttack
    ``HuggingFaceModelWrapper``) is run in eval mode without gradients and handed back exactly as it came (mode,
    buffers, ``requires_grad``: ``robustsuite_common.models.evaluating``)."""
    module = model if _is_module(model) else getattr(model, "model", None)
    if module is None or not _is_module(module):
        return model(batch)
    import torch

    from robustsuite_common.models import evaluating

    with evaluating(module), torch.no_grad():
        return model(batch)
