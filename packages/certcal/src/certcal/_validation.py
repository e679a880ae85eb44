"""certcal's own argument checks (raised before any expensive work), on top of the shared ones.

The generic checks (``check_choice``, ``check_int``, ``check_float``, ``check_probability``, ``check_images``,
``check_labels``, ``check_finite_array``) and the model contract (``logits_from``, ``evaluating``,
``as_model_input``, ``model_device``) are robustsuite_common's (``robustsuite_common.checks`` and
``robustsuite_common.models``, imported from there). What is certcal's own: confidences in [0, 1], 0/1 correctness vectors, certificate
bounds, labelled image batches for a vision model, seeded generators, and the number of classes a model
returns (read from one input, before any work).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from robustsuite_common.checks import (
    check_choice,
    check_finite_array,
    check_labels,
    check_seed,
)
from robustsuite_common.checks import check_images as _check_images
from robustsuite_common.models import (
    OUTPUT_FORMS,
    logits_from,
    output_classes,
)

__all__ = ["as_binary", "as_float64", "as_unit_interval", "check_bounds", "check_images",
           "check_label_range", "check_labelled_images", "check_model", "check_outputs", "make_generator",
           "model_logits", "num_classes"]


def as_float64(name: str, value: Any, *, ndim: int | None = 1) -> np.ndarray:
    """``value`` (array-like or tensor) as a float64 numpy array of finite values with ``ndim`` dimensions."""
    return check_finite_array(name, value, ndim=ndim)


def as_unit_interval(name: str, value: Any, *, ndim: int | None = 1) -> np.ndarray:
    arr = as_float64(name, value, ndim=ndim)
    if arr.size and (arr.min() < 0.0 or arr.max() > 1.0):
        raise ValueError(f"{name} must lie in [0, 1], got range [{arr.min():.4g}, {arr.max():.4g}]")
    return arr


def as_binary(name: str, value: Any, n: int | None = None) -> np.ndarray:
    """0/1 (or bool) vector -> float64 array of 0.0/1.0."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    arr = np.asarray(value)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional, got shape {arr.shape}")
    if arr.dtype == bool:
        out = arr.astype(np.float64)
    else:
        try:
            out = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name} must be a boolean or 0/1 array") from exc
        if not np.all((out == 0.0) | (out == 1.0)):
            raise ValueError(f"{name} must contain only 0/1 (or booleans)")
    if n is not None and out.shape[0] != n:
        raise ValueError(f"{name} must have length {n}, got {out.shape[0]}")
    return out


def check_bounds(lower: Any, upper: Any, correct: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate certificate bounds ``0 <= lower <= upper <= 1`` and 0/1 ``correct`` of one length."""
    lo = as_unit_interval("lower", lower)
    up = as_unit_interval("upper", upper)
    if lo.shape != up.shape:
        raise ValueError(f"lower and upper must have the same shape, got {lo.shape} and {up.shape}")
    if np.any(lo > up):
        raise ValueError("lower must be <= upper elementwise")
    c = as_binary("correct", correct, lo.shape[0])
    return lo, up, c


def check_model(model: Any, name: str = "model") -> torch.nn.Module:
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"{name} must be a torch.nn.Module taking (N, C, H, W) images in [0, 1] and returning "
                        f"logits (N, K), got {type(model).__name__}")
    return model


def check_images(name: str, x: Any) -> torch.Tensor:
    """A non-empty floating (N, C, H, W) tensor of finite values in [0, 1] (the models' input box): images in
    [0, 255], a single image without batch dimension, NaN or integer pixels are refused with what was seen."""
    return _check_images(name, x, low=0.0, high=1.0)


def check_outputs(outputs: Any) -> str:
    """What the model returns: ``"logits"`` (default), ``"probabilities"`` or ``"log_probabilities"``."""
    return check_choice("outputs", outputs, OUTPUT_FORMS)


def model_logits(out: Any, n: int, outputs: str = "logits", *, first: bool = True) -> torch.Tensor:
    """The (n, K) logits in a model's output (tensor, tuple, dict with ``"logits"``, ``ModelOutput``).

    ``first=False`` (every batch after the first of one call) skips the probability check, which would cost
    a device-to-host synchronisation per batch; structure and shape are always checked."""
    if not first and outputs == "logits":
        return logits_from(out, outputs="log_probabilities", n=n)  # log-probabilities pass through unchanged
    return logits_from(out, outputs=outputs, n=n)


def num_classes(model: torch.nn.Module, x: torch.Tensor, outputs: str = "logits") -> int:
    """The number of classes ``model`` returns, read from one forward pass on ``x[:2]``
    (:func:`robustsuite_common.models.output_classes`). Refuses fewer than two classes (a smoothed classifier and
    its certified radius need a runner-up class), non-finite logits and (with two inputs) outputs that look like
    probabilities when ``outputs="logits"``."""
    return output_classes(model, x, outputs=outputs, rows=2)


def check_labelled_images(model: Any, x: Any, y: Any, *, x_name: str = "x", y_name: str = "y") -> torch.Tensor:
    """Check a vision model, its input batch and integer labels ``y`` of shape (N,); return ``y`` as int64.

    Labels out of the model's class range are checked by :func:`check_label_range` once the number of classes
    is known (one forward pass on one input)."""
    check_model(model)
    check_images(x_name, x)
    arr = check_labels(y_name, y, length=int(x.shape[0]))
    return torch.as_tensor(arr, dtype=torch.int64)


def check_label_range(name: str, y: torch.Tensor, k: int) -> None:
    if y.numel() and int(y.max()) >= k:
        raise ValueError(f"{name} must be class indices < the model's {k} classes, got {int(y.max())}")


def make_generator(seed: int | None, generator: torch.Generator | None, device: torch.device) -> torch.Generator:
    """An explicit generator on ``device``: the caller's, or a fresh one seeded with ``seed``."""
    if generator is not None:
        if not isinstance(generator, torch.Generator):
            raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
        return generator
    if seed is None:
        raise ValueError("seed must be an int when no generator is given")
    seed = check_seed("seed", seed)
    g = torch.Generator(device=device)
    g.manual_seed(seed)
    return g
