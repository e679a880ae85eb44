"""The model contract, written once (ARCHITECTURE.md, "Models and numbers").

- **Outputs.** A model may return a tensor ``(N, K)``, a tuple or list (its first element), a mapping with
  ``"logits"``, or a Hugging Face ``ModelOutput`` (``.logits``). :func:`logits_from` turns any of them into
  logits. Outputs that look like probabilities (rows in [0, 1] summing to 1) are refused unless the caller
  says so with ``outputs="probabilities"`` (then ``log p`` is used as logits, which gives the same softmax).
  :func:`as_logits_model` does the same for a whole model declared to output probabilities.
- **A caller's model comes back as it was.** :func:`evaluating` puts a model in eval mode for the duration of
  a call and restores every module's ``training`` flag, every parameter's ``requires_grad`` and the values of
  every buffer (BatchNorm running statistics) afterwards, also when the call raises.
- **Inputs follow the model.** :func:`as_model_input` moves a batch to the model's device and casts a floating
  batch of another dtype (float64, half) to the model's dtype.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

__all__ = [
    "OUTPUT_FORMS",
    "ModelOutputError",
    "logits_from",
    "looks_like_probabilities",
    "refuse_probabilities",
    "text_logits",
    "evaluating",
    "model_device",
    "model_dtype",
    "as_model_input",
    "forward_logits",
    "check_model",
    "output_classes",
    "as_logits_model",
    "LogProbabilities",
    "normalized",
]  # and LogProbabilityModule, defined on first use (module __getattr__)

OUTPUT_FORMS = ("logits", "probabilities", "log_probabilities")


class ModelOutputError(ValueError):
    """A model returned something that is not logits of the expected shape."""


def looks_like_probabilities(t: Any, *, atol: float = 1e-4) -> bool:
    """Whether the rows of a 2-D tensor or numpy array with at least 2 columns all lie in [0, 1] and sum to 1
    (within ``atol``): softmax outputs. Decided on any number of rows, one included (a method that sees one input
    at a time must refuse probabilities as one that sees many); logits of a trained model essentially never do."""
    if isinstance(t, np.ndarray):  # numpy (text classifiers' outputs, logits as data): torch is not imported
        if t.dtype.kind not in "fiu" or t.ndim != 2 or t.shape[1] < 2 or t.shape[0] == 0:
            return False
        v = t.astype(np.float64, copy=False)
        return bool(((v >= -atol) & (v <= 1 + atol)).all() and (np.abs(v.sum(1) - 1) <= atol * t.shape[1]).all())
    import torch

    if not isinstance(t, torch.Tensor) or t.ndim != 2 or t.shape[1] < 2 or t.shape[0] == 0:
        return False
    with torch.no_grad():
        v = t.detach().double()
        return bool(((v >= -atol) & (v <= 1 + atol)).all() and ((v.sum(1) - 1).abs() <= atol * t.shape[1]).all())


def refuse_probabilities(name: str, values: Any) -> Any:
    """``values`` (an (N, K) tensor or array of logits), else :class:`ModelOutputError` naming ``name`` when
    they look like probabilities (:func:`looks_like_probabilities`, at any N). The one probabilities check:
    :func:`logits_from`, :func:`text_logits` and functions taking logits as data all go through it."""
    if looks_like_probabilities(values):
        raise ModelOutputError(
            f"{name} look like probabilities (every row in [0, 1] and summing to 1), not logits; scoring them as "
            "logits gives wrong confidences. Pass logits (or log-probabilities, e.g. numpy.log(p)), or declare the "
            "model's outputs with outputs='probabilities'")
    return values


def logits_from(output: Any, *, outputs: str = "logits", n: int | None = None) -> Any:
    """The ``(N, K)`` logits in a model's ``output`` (tensor, tuple/list, mapping with ``"logits"``, or
    ``ModelOutput``), for ``outputs`` one of :data:`OUTPUT_FORMS`. ``n`` checks the batch size."""
    import torch

    if outputs not in OUTPUT_FORMS:
        raise ValueError(f"outputs must be one of {list(OUTPUT_FORMS)}, got {outputs!r}")
    out = output
    if isinstance(out, tuple | list):
        if not out:
            raise ModelOutputError("model returned an empty tuple; expected logits (N, K) as its first element")
        out = out[0]
    elif not isinstance(out, torch.Tensor):
        if isinstance(out, Mapping) and "logits" in out:
            out = out["logits"]
        elif isinstance(logits := getattr(out, "logits", None), torch.Tensor):
            out = logits
        else:
            raise ModelOutputError("model must return logits: a tensor (N, K), a tuple whose first element is one, "
                                   f"a dict with 'logits' or a Hugging Face ModelOutput; got {type(output).__name__}")
    if not isinstance(out, torch.Tensor) or out.ndim != 2:
        shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
        raise ModelOutputError(f"model must return logits of shape (N, K), got {shape}")
    if n is not None and out.shape[0] != n:
        raise ModelOutputError(f"model returned {out.shape[0]} rows of logits for a batch of {n} inputs")
    if outputs == "logits":
        return refuse_probabilities("model outputs", out)
    if outputs == "probabilities":
        return torch.log(out.clamp_min(torch.finfo(out.dtype).tiny))
    return out  # log-probabilities are logits (softmax is invariant to the row's constant)


def check_model(name: str, model: Any) -> Any:
    """A ``torch.nn.Module`` (vision contract), else ``TypeError`` naming ``name``."""
    import torch

    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"{name} must be a torch.nn.Module taking (N, C, H, W) inputs in [0, 1] and returning "
                        f"logits (N, K), got {type(model).__name__}")
    return model


def model_device(model: Any) -> Any:
    """The device of the model's first parameter (or buffer); CPU for a model without tensors."""
    import torch

    for t in model.parameters():
        return t.device
    for t in model.buffers():
        return t.device
    return torch.device("cpu")


def model_dtype(model: Any) -> Any:
    """The floating dtype of the model's first floating parameter (float32 for a model without one)."""
    import torch

    for t in model.parameters():
        if t.is_floating_point():
            return t.dtype
    return torch.float32


def as_model_input(model: Any, x: Any) -> Any:
    """``x`` on the model's device and, when floating, in the model's dtype (float64 or half inputs are cast,
    not refused). Non-contiguous tensors are fine (torch handles strides)."""
    dev, dtype = model_device(model), model_dtype(model)
    if x.is_floating_point() and x.dtype != dtype:
        x = x.to(dtype)
    return x.to(dev)


@contextmanager
def evaluating(model: Any, *, freeze_parameters: bool = False) -> Iterator[Any]:
    """Run a block with ``model`` in eval mode and give it back exactly as it came.

    Restores afterwards (also on error): each module's ``training`` flag, each parameter's ``requires_grad``,
    and the values of all buffers (BatchNorm running statistics, counters). ``freeze_parameters=True`` turns
    ``requires_grad`` off inside the block (input gradients only, cheaper for attacks).
    A block that must train a copy should ``copy.deepcopy`` the model inside; the caller's object is not it.
    """
    import torch

    modes = [(m, m.training) for m in model.modules()]
    grads = [(p, p.requires_grad) for p in model.parameters()]
    with torch.no_grad():
        buffers = [(b, b.detach().clone()) for b in model.buffers()]
    model.eval()
    if freeze_parameters:
        for p, _ in grads:
            p.requires_grad_(False)
    try:
        yield model
    finally:
        for m, mode in modes:
            m.training = mode
        for p, flag in grads:
            p.requires_grad_(flag)
        with torch.no_grad():
            for b, saved in buffers:
                if b.shape == saved.shape and not torch.equal(b, saved):
                    b.copy_(saved)


def forward_logits(model: Callable[[Any], Any], x: Any, *, outputs: str = "logits", batch_size: int = 256,
                   dtype: Any = None) -> Any:
    """Logits of ``model`` on ``x`` in batches, without gradients, in eval mode (the model's mode restored),
    returned on the model's device (``dtype``: cast the result, e.g. ``torch.float64`` for metrics)."""
    import torch

    from .checks import check_int

    check_int("batch_size", batch_size, ge=1)
    chunks = []
    with evaluating(model), torch.no_grad():
        for i in range(0, x.shape[0], batch_size):
            xb = as_model_input(model, x[i : i + batch_size])
            chunks.append(logits_from(model(xb), outputs=outputs, n=xb.shape[0]))
    out = torch.cat(chunks) if chunks else torch.empty(0, 0)
    return out if dtype is None else out.to(dtype)


def text_logits(model: Callable[[list[str]], Any], texts: list[str], *, outputs: str = "logits",
                batch_size: int | None = None) -> np.ndarray:
    """Float64 ``(N, K)`` logits of a text classifier (``list[str] -> (N, K)``) on ``texts``, every batch checked
    as :func:`logits_from` checks a vision model's output (shape, one row per text, probabilities refused unless
    ``outputs`` declares them) and the column count the same in every batch."""
    import torch

    if outputs not in OUTPUT_FORMS:
        raise ValueError(f"outputs must be one of {list(OUTPUT_FORMS)}, got {outputs!r}")
    step = len(texts) if batch_size is None else batch_size
    chunks: list[np.ndarray] = []
    for i in range(0, len(texts), max(step, 1)):
        items = list(texts[i : i + max(step, 1)])
        raw = model(items)
        if not isinstance(raw, torch.Tensor):
            try:
                raw = torch.as_tensor(np.asarray(raw, dtype=np.float64))
            except (TypeError, ValueError):
                raise ModelOutputError("text classifier must return an (N, K) array of logits, got "
                                       f"{type(raw).__name__}") from None
        z = logits_from(raw.detach().cpu().double(), outputs=outputs, n=len(items))
        if chunks and z.shape[1] != chunks[0].shape[1]:
            raise ModelOutputError(f"text classifier returned {chunks[0].shape[1]} columns for one batch and "
                                   f"{z.shape[1]} for another: the class count must not change between calls")
        chunks.append(z.numpy())
    return np.concatenate(chunks, axis=0) if chunks else np.zeros((0, 0))


def output_classes(model: Callable[[Any], Any], x: Any, *, outputs: str = "logits", rows: int = 1) -> int:
    """The number of classes ``model`` actually returns, read from one forward pass on ``x[:rows]`` (eval mode,
    the model given back as it came; ``rows=None`` for the whole batch). Refuses fewer than two classes (a
    single-output scorer would make every prediction class 0 and every label-0 input "correct"), non-finite
    logits and, with ``outputs="logits"``, probabilities. Cheap enough to run before any expensive work."""
    import torch

    z = forward_logits(model, x if rows is None else x[:rows], outputs=outputs)
    k = int(z.shape[1])
    if k < 2:
        raise ModelOutputError(f"model must return logits for at least 2 classes, got {k}: a single-output scorer "
                               "s can be passed as two logits, torch.cat([torch.zeros_like(s), s], 1)")
    if not bool(torch.isfinite(z).all()):
        raise ModelOutputError("model returned non-finite logits (NaN or inf): nothing can be computed from them")
    return k


class LogProbabilities:
    """A callable (a text classifier) declared to return probabilities, seen through ``log``: logits with the same
    softmax. Its other attributes are the wrapped model's."""

    def __init__(self, inner: Callable[[Any], Any]) -> None:
        self.inner = inner

    def __call__(self, x: Any) -> np.ndarray:
        import torch

        p = torch.as_tensor(np.asarray(self.inner(x), dtype=np.float32))
        return logits_from(p, outputs="probabilities").numpy()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.__dict__["inner"], name)


@functools.cache
def _log_probability_module() -> type:
    """``LogProbabilityModule``, defined on first use: it subclasses ``torch.nn.Module``, and importing this module
    does not import torch (as :mod:`robustsuite_common.autoattack`'s adapter)."""
    import torch

    class LogProbabilityModule(torch.nn.Module):
        """A vision module declared to return probabilities, returning their logarithm (logits, the same softmax)."""

        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return logits_from(self.inner(x), outputs="probabilities")

    LogProbabilityModule.__qualname__ = "LogProbabilityModule"  # pickle finds it through this module's __getattr__
    return LogProbabilityModule


def __getattr__(name: str) -> Any:
    if name == "LogProbabilityModule":
        return _log_probability_module()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def as_logits_model(model: Any) -> Any:
    """``model`` declared to output probabilities (robustsuite's ``?outputs=probabilities``), seen through ``log``
    so every method gets logits with the same softmax: a ``torch.nn.Module`` stays one (``LogProbabilityModule``),
    any other callable becomes a :class:`LogProbabilities`."""
    import torch

    return _log_probability_module()(model) if isinstance(model, torch.nn.Module) else LogProbabilities(model)


def normalized(model: Any, mean: Sequence[float], std: Sequence[float]) -> Any:
    """``model``, which expects inputs normalised as ``(x - mean) / std`` per channel, as a model of [0, 1] images
    (the contract): ε and every attack then stay in pixel space. One value for all channels, or one per channel."""
    import torch

    class Normalized(torch.nn.Module):
        if TYPE_CHECKING:  # buffers, typed for the checker only (TorchScript reads __annotations__)
            mean: torch.Tensor
            std: torch.Tensor

        def __init__(self) -> None:
            super().__init__()
            self.model = model
            self.register_buffer("mean", torch.tensor(tuple(mean), dtype=torch.float32).view(1, -1, 1, 1))
            self.register_buffer("std", torch.tensor(tuple(std), dtype=torch.float32).view(1, -1, 1, 1))

        def forward(self, x: torch.Tensor) -> Any:
            c = self.mean.shape[1]
            if c != 1 and (x.ndim != 4 or x.shape[1] != c):
                raise ValueError(f"mean and std declare {c} channels, but the images have shape {tuple(x.shape)} "
                                 "(N, C, H, W): give one value per channel")
            return self.model((x - self.mean.to(x.dtype)) / self.std.to(x.dtype))

    if len(mean) != len(std) or not len(mean) or min(std) <= 0:
        raise ValueError(f"mean and std must have the same length (one value per channel) and std > 0, got {mean} "
                         f"and {std}")
    return Normalized()
