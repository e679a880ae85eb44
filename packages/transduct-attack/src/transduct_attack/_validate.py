"""Argument checks of the public API (raise before any expensive work): robustsuite_common's checks, one
signature (name first), plus what only this package needs: the L∞ budget, generators, the model adapter that
reads any output form as logits and runs the caller's model in eval mode without changing it."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from robustsuite_common.checks import (
    check_float,
)
from robustsuite_common.checks import check_labels as _check_labels
from robustsuite_common.models import check_model, logits_from, model_device, model_dtype, output_classes

__all__ = ["check_eps", "check_labels", "check_generator", "check_positive", "LogitsModel", "logits_model",
           "n_classes", "as_input"]


def check_eps(eps: Any, name: str = "eps") -> float:
    """An L∞ budget for inputs in [0, 1]: a finite number in [0, 1]."""
    return check_float(name, eps, ge=0.0, le=1.0)


def check_positive(name: str, value: Any, *, allow_zero: bool = False) -> float:
    return check_float(name, value, ge=0.0) if allow_zero else check_float(name, value, gt=0.0)


def check_labels(name: str, y: Any, n: int, *, device: Any = None, n_classes: int | None = None,
                 model: nn.Module | None = None, x: torch.Tensor | None = None) -> torch.Tensor:
    """Integer labels, one per input, each in ``[0, n_classes)``, as an int64 tensor on ``device``. With ``model``
    (and its inputs ``x``) the class count is read from the model's output (:func:`n_classes`), after the checks
    that need no forward pass."""
    arr = _check_labels(name, y, n_classes=n_classes, length=n)
    if model is not None:
        if x is None:
            raise TypeError(f"{name}: the model's inputs x are needed to read its classes")
        arr = _check_labels(name, arr, n_classes=n_classes_of(model, x), length=n)
    return torch.as_tensor(arr, dtype=torch.int64, device=device)


def check_generator(generator: Any) -> torch.Generator:
    if not isinstance(generator, torch.Generator):
        raise TypeError(f"generator must be a torch.Generator, got {type(generator).__name__}")
    return generator


class LogitsModel(nn.Module):
    """The caller's model as this package calls it: any output form (tensor, tuple, dict with ``logits``,
    ``ModelOutput``) read as logits (probabilities refused), and, with ``eval_mode``, every forward run in eval
    mode with the caller's train/eval flags put back afterwards (BatchNorm statistics never move). Its
    parameters are the caller's (no copy); a defense that fine-tunes deep-copies it and sets ``eval_mode=False``."""

    def __init__(self, model: nn.Module, *, eval_mode: bool = True) -> None:
        super().__init__()
        self.inner = model
        self.eval_mode = eval_mode
        self._checked = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = model_dtype(self.inner)
        if x.is_floating_point() and x.dtype != dtype:  # float64 and half inputs are cast, not refused
            x = x.to(dtype)
        if self.eval_mode:
            modes = [(m, m.training) for m in self.inner.modules()]
            for m, _ in modes:
                m.training = False
            try:
                out = self.inner(x)
            finally:
                for m, mode in modes:
                    m.training = mode
        else:
            out = self.inner(x)
        if isinstance(out, torch.Tensor) and self._checked:
            return out
        logits = logits_from(out, n=x.shape[0])
        self._checked = True
        return logits


def logits_model(name: str, model: Any) -> LogitsModel:
    """``model`` checked (a ``torch.nn.Module``) and wrapped in :class:`LogitsModel` (once)."""
    if isinstance(model, LogitsModel):
        return model
    wrapped = LogitsModel(check_model(name, model))
    # DENT's per-sample models (see pgd); torch's stub types a module's attributes as Tensor | Module
    wrapped.position_aware = getattr(model, "position_aware", False)  # pyright: ignore[reportArgumentType]
    return wrapped


def n_classes(model: nn.Module, x: torch.Tensor) -> int:
    """The classes a classifier actually outputs, read from one forward pass on ``x[:1]`` (the whole ``x`` for a
    position-aware model such as DENT's per-sample affines), in eval mode with the model given back as it came.
    Refuses single-output models, non-finite outputs and probabilities
    (:func:`robustsuite_common.models.output_classes`)."""
    position_aware = getattr(model, "position_aware", False)
    while isinstance(model, LogitsModel):
        model = model.inner
    return output_classes(model, x, rows=x.shape[0] if position_aware else 1)


n_classes_of = n_classes  # check_labels' keyword ``n_classes`` shadows the function there


def as_input(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``x`` on the model's device, floating inputs cast to the model's dtype (float64 and half accepted)."""
    dtype = model_dtype(model)
    if x.is_floating_point() and x.dtype != dtype:
        x = x.to(dtype)
    return x.to(model_device(model))
