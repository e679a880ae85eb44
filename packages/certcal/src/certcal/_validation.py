"""Argument checks shared by the public functions (raised before any expensive work)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch


def as_float64(name: str, value: Any, *, ndim: int | None = 1) -> np.ndarray:
    """Convert ``value`` (array-like or tensor) to a float64 numpy array, checking finiteness."""
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array, got {type(value).__name__}") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values")
    return arr


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


def check_choice(name: str, value: Any, allowed: Sequence[Any]) -> Any:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")
    return value


def check_positive_int(name: str, value: Any, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_positive_float(name: str, value: Any, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    v = float(value)
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be finite and {bound}, got {value}")
    return v


def check_probability(name: str, value: Any) -> float:
    v = check_positive_float(name, value)
    if not v < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {value}")
    return v


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


def model_device(model: torch.nn.Module) -> torch.device:
    for p in model.parameters():
        return p.device
    for b in model.buffers():
        return b.device
    return torch.device("cpu")


def check_images(name: str, x: Any) -> torch.Tensor:
    """A non-empty floating (N, C, H, W) tensor of finite values (one reduction, before any work)."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor of shape (N, C, H, W), got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"{name} must have shape (N, C, H, W), got {tuple(x.shape)}")
    if not torch.is_floating_point(x):
        raise TypeError(f"{name} must be a floating tensor in [0, 1], got dtype {x.dtype}")
    if x.shape[0] == 0:
        raise ValueError(f"{name} must hold at least one input, got an empty batch of shape {tuple(x.shape)}")
    with torch.no_grad():
        finite = bool(torch.isfinite(x).all())
    if not finite:
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return x


def as_logits(out: Any, n: int | None = None) -> torch.Tensor:
    """The (N, K) logits of a model's output: a tensor, a dict with ``"logits"`` or a Hugging Face
    ``ModelOutput`` (which is both a mapping and has a ``.logits`` attribute)."""
    if not isinstance(out, torch.Tensor):
        if isinstance(out, Mapping) and "logits" in out:
            out = out["logits"]
        elif hasattr(out, "logits") and isinstance(out.logits, torch.Tensor):
            out = out.logits
        else:
            raise TypeError("model must return logits: a tensor (N, K), a dict with 'logits' or a Hugging Face "
                            f"ModelOutput, got {type(out).__name__}")
    if not isinstance(out, torch.Tensor) or out.ndim != 2 or (n is not None and out.shape[0] != n):
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise ValueError(f"model must return logits of shape (N, K) with N = {n}, got {shape}")
    return out


def check_finite_logits(logits: torch.Tensor) -> None:
    """Raise if a model produced NaN/inf logits (one host sync: call once per batch of work, not per step)."""
    if not bool(torch.isfinite(logits).all()):
        raise ValueError("model returned non-finite logits (NaN or inf): nothing can be certified from them")


def check_model(model: Any) -> torch.nn.Module:
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module returning logits, got {type(model).__name__}")
    return model


def check_labelled_images(model: Any, x: Any, y: Any) -> torch.Tensor:
    """Check a vision model, its input batch and integer labels ``y`` of shape (N,); return ``y`` as int64."""
    check_model(model)
    check_images("x", x)
    if isinstance(y, torch.Tensor) and torch.is_floating_point(y):
        raise TypeError(f"y must hold integer class labels, got dtype {y.dtype}")
    yt = torch.as_tensor(y, dtype=torch.int64)
    if yt.shape != (x.shape[0],):
        raise ValueError(f"y must have shape ({x.shape[0]},), got {tuple(yt.shape)}")
    return yt


def make_generator(seed: int | None, generator: torch.Generator | None, device: torch.device) -> torch.Generator:
    """An explicit generator on ``device``: the caller's, or a fresh one seeded with ``seed``."""
    if generator is not None:
        if not isinstance(generator, torch.Generator):
            raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
        return generator
    if seed is None:
        raise ValueError("seed must be an int when no generator is given")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"seed must be an int, got {type(seed).__name__}")
    g = torch.Generator(device=device)
    g.manual_seed(int(seed))
    return g
