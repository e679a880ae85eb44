"""Argument checks, one signature for all: ``check_<what>(name, value, ...)`` returns the checked (and where
stated, converted) value, or raises a ``ValueError``/``TypeError`` whose message starts with ``name`` and says
what was expected and what was given. Every public function calls them before any expensive work.

Tensors are checked without importing torch unless the caller passed one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "check_choice",
    "check_int",
    "check_float",
    "check_probability",
    "check_bool",
    "check_seed",
    "check_device",
    "SEED_MAX",
    "check_texts",
    "check_labels",
    "check_images",
    "check_same_length",
    "check_same_setting",
    "check_finite_array",
]


def _is_tensor(value: Any) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "detach")


def check_choice(name: str, value: Any, allowed: Sequence[Any]) -> Any:
    """``value`` if it is one of ``allowed``, else ``ValueError`` listing them."""
    try:
        ok = value in allowed
    except TypeError:  # unhashable value against a set
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}")
    return value


def check_int(name: str, value: Any, *, ge: int | None = None, le: int | None = None) -> int:
    """An integer (not a bool, not a float) within ``[ge, le]``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    v = int(value)
    if ge is not None and v < ge:
        raise ValueError(f"{name} must be >= {ge}, got {v}")
    if le is not None and v > le:
        raise ValueError(f"{name} must be <= {le}, got {v}")
    return v


def check_float(name: str, value: Any, *, gt: float | None = None, ge: float | None = None,
                lt: float | None = None, le: float | None = None, finite: bool = True) -> float:
    """A real number (int or float, not a bool) within the given bounds; NaN always refused, infinity refused
    unless ``finite=False``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        t: Any = value  # a one-element floating tensor is a number too
        if _is_tensor(t) and t.numel() == 1 and t.dtype.is_floating_point:
            value = float(t.item())
        else:
            raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    v = float(value)
    if math.isnan(v) or (finite and math.isinf(v)):
        raise ValueError(f"{name} must be a finite number, got {v}")
    for bound, ok, word in ((gt, lambda b: v > b, ">"), (ge, lambda b: v >= b, ">="),
                            (lt, lambda b: v < b, "<"), (le, lambda b: v <= b, "<=")):
        if bound is not None and not ok(bound):
            raise ValueError(f"{name} must be {word} {bound}, got {v}")
    return v


def check_probability(name: str, value: Any, *, open_interval: bool = True) -> float:
    """A number in (0, 1) (or [0, 1] with ``open_interval=False``), e.g. a significance level."""
    if open_interval:
        return check_float(name, value, gt=0.0, lt=1.0)
    return check_float(name, value, ge=0.0, le=1.0)


def check_bool(name: str, value: Any) -> bool:
    """A bool (numpy bools accepted), not an int standing for one."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")
    return bool(value)


SEED_MAX = 2**63 - 1  # torch.Generator.manual_seed overflows above it; numpy's SeedSequence takes it


def check_seed(name: str, value: Any) -> int:
    """An integer seed in ``[0, 2**63 - 1]`` (what both ``numpy`` and ``torch`` generators take)."""
    return check_int(name, value, ge=0, le=SEED_MAX)


def check_device(name: str, value: Any) -> Any:
    """A ``torch.device`` this machine has: a device string or object; ``"cuda"`` (or ``"cuda:i"``, ``"mps"``)
    refused with the devices available when there is none, before any work (not the driver's message later)."""
    import torch

    try:
        dev = torch.device(value)
    except (TypeError, RuntimeError, ValueError):
        raise ValueError(f"{name} must be a device such as 'cpu' or 'cuda', got {value!r}") from None
    have = ["cpu"]
    if torch.cuda.is_available():
        have += ["cuda"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        have.append("mps")
    if dev.type not in ("cpu", "meta") and str(dev) not in have:
        raise ValueError(f"{name}={str(dev)!r} is not available on this machine; devices here: {have}")
    return dev


def check_texts(name: str, texts: Any, *, allow_empty: bool = False) -> list[str]:
    """A list of strings. A bare ``str`` is refused (it would be read as one text per character), and so is a text
    that is not valid Unicode (lone surrogates, which no tokenizer or UTF-8 writer takes)."""
    if isinstance(texts, str | bytes):
        raise TypeError(f"{name} must be a list of strings, got a single {type(texts).__name__}: wrap it in a "
                        f"list ([{texts[:30]!r}...])")
    try:
        out = list(texts)
    except TypeError:
        raise TypeError(f"{name} must be a list of strings, got {type(texts).__name__}") from None
    bad = next((i for i, t in enumerate(out) if not isinstance(t, str)), None)
    if bad is not None:
        raise TypeError(f"{name} must hold strings only, got {type(out[bad]).__name__} at position {bad}")
    if not out and not allow_empty:
        raise ValueError(f"{name} must hold at least one text, got an empty list")
    for i, t in enumerate(out):
        if not t.isascii():
            try:
                t.encode("utf-8")
            except UnicodeEncodeError as e:  # lone surrogates (a bad decode upstream): no tokenizer takes them
                raise ValueError(f"{name}[{i}] is not valid Unicode text: a lone surrogate {t[e.start]!r} at position "
                                 f"{e.start} (decode the source with errors='replace', or drop that text)") from None
    return out


def check_labels(name: str, y: Any, *, n_classes: int | None = None, length: int | None = None) -> np.ndarray:
    """Integer class labels as a 1-D int64 numpy array, each in ``[0, n_classes)`` and ``length`` long.

    Float labels are refused even when integral (they usually mean probabilities or one-hot rows were passed).
    Accepts lists, numpy arrays and tensors; the caller converts back with ``torch.as_tensor`` if needed.
    """
    arr = y.detach().cpu().numpy() if _is_tensor(y) else np.asarray(y)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or arr.size == 0):
        raise TypeError(f"{name} must hold integer class labels, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-dimensional (one label per input), got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have one label per input ({length}), got {arr.shape[0]}")
    arr = arr.astype(np.int64, copy=False)
    if arr.size and arr.min() < 0:
        raise ValueError(f"{name} must be class indices >= 0, got {int(arr.min())}")
    if n_classes is not None and arr.size and arr.max() >= n_classes:
        raise ValueError(f"{name} must be class indices < the model's {n_classes} classes, got {int(arr.max())}")
    return arr


def check_images(name: str, x: Any, *, low: float | None = 0.0, high: float | None = 1.0,
                 allow_empty: bool = False, tolerance: float = 1e-6) -> Any:
    """A floating ``(N, C, H, W)`` tensor of finite values within ``[low, high]`` (the inputs' box; ``None``
    skips a side). Refuses a single image without batch dimension, a channels-last batch (N, H, W, C) with C in
    {1, 3} and H >= 8, integer pixels and images in [0, 255]
    with the observed range in the message. One reduction each, no copy."""
    if not _is_tensor(x):
        raise TypeError(f"{name} must be a torch.Tensor of shape (N, C, H, W), got {type(x).__name__}")
    import torch

    if x.ndim == 3:
        raise ValueError(f"{name} must have shape (N, C, H, W), got {tuple(x.shape)}: a single image needs a batch "
                         f"dimension ({name}.unsqueeze(0))")
    if x.ndim != 4:
        raise ValueError(f"{name} must have shape (N, C, H, W), got {tuple(x.shape)}")
    if x.shape[-1] in (1, 3) and x.shape[1] >= 8:  # (N, H, W, C): a 28x28 grey or 32x32 RGB batch, channels last
        raise ValueError(f"{name} must have shape (N, C, H, W) (channels first), got {tuple(x.shape)}, which looks "
                         f"like channels last (N, H, W, C): pass {name}.permute(0, 3, 1, 2)")
    if not torch.is_floating_point(x):
        raise TypeError(f"{name} must be a floating tensor with values in [{low}, {high}], got dtype {x.dtype}")
    if x.shape[0] == 0:
        if allow_empty:
            return x
        raise ValueError(f"{name} must hold at least one input, got an empty batch of shape {tuple(x.shape)}")
    with torch.no_grad():
        finite = bool(torch.isfinite(x).all())
        if not finite:
            raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
        lo, hi = float(x.min()), float(x.max())
    if (low is not None and lo < low - tolerance) or (high is not None and hi > high + tolerance):
        raise ValueError(f"{name} must lie in [{low}, {high}] (the model's input range), got values in "
                         f"[{lo:.4g}, {hi:.4g}]" + ("; divide by 255?" if hi > 1.5 and high == 1.0 else ""))
    return x


def check_same_length(**arrays: Any) -> int:
    """The common length of the named sequences, else ``ValueError`` naming each length."""
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError("must have the same length: " + ", ".join(f"{k} has {n}" for k, n in lengths.items()))
    return next(iter(lengths.values()), 0)


def check_same_setting(items: dict[str, Any], fields: Sequence[str]) -> None:
    """Results one function combines (a paired difference, a merge) must share ``fields`` (the budget, the model,
    the data): ``ValueError`` naming the first field that differs and the two arguments, e.g.
    ``"games[1] has eps=0.3 but games[0] has eps=0.05: results at different ... cannot be combined"``."""
    named = list(items.items())
    for field in fields:
        first_name, first = named[0]
        ref = getattr(first, field)
        for name, item in named[1:]:
            value = getattr(item, field)
            if value != ref:
                raise ValueError(f"{name} has {field}={value!r} but {first_name} has {field}={ref!r}: results with "
                                 f"a different {field} cannot be combined")


def check_finite_array(name: str, value: Any, *, ndim: int | None = None, dtype: Any = np.float64) -> np.ndarray:
    """A numeric numpy array (tensors converted) of finite values, ``ndim`` dimensions when given."""
    if _is_tensor(value):
        value = value.detach().cpu().numpy()
    try:
        arr = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a numeric array, got {type(value).__name__}") from None
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if arr.size and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must contain only finite values (found NaN or inf)")
    return arr
