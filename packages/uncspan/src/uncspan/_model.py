"""The model contract of every public uncspan function that takes a model (robustsuite_common.models, written
once): the model is evaluated in eval mode and given back exactly as it came (mode, ``requires_grad``, buffers
such as BatchNorm statistics); its output may be logits, a tuple (first element), a dict with ``"logits"`` or a
``ModelOutput``; floating inputs of another dtype (float64, half) are cast to the model's dtype."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from torch import nn

from robustsuite_common.checks import check_choice
from robustsuite_common.models import OUTPUT_FORMS, as_model_input, evaluating, logits_from
from robustsuite_common.models import check_model as _check_model

__all__ = ["Logits", "check_model", "check_outputs", "using", "n_classes"]


def check_model(name: str, model: object) -> nn.Module:
    return _check_model(name, model)


def check_outputs(outputs: object) -> str:
    return str(check_choice("outputs", outputs, OUTPUT_FORMS))


class Logits(nn.Module):
    """``model`` seen as a plain logits model: inputs cast to its device and dtype, its output turned into
    ``(N, K)`` logits by :func:`robustsuite_common.models.logits_from`."""

    def __init__(self, model: nn.Module, outputs: str = "logits") -> None:
        super().__init__()
        self.inner = model
        self.outputs = outputs

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return logits_from(self.inner(as_model_input(self.inner, x)), outputs=self.outputs, n=x.shape[0])


@contextmanager
def using(model: nn.Module, outputs: str = "logits") -> Iterator[nn.Module]:
    """The model in eval mode with frozen parameters (attacks need input gradients only), as a :class:`Logits`
    adapter; mode, ``requires_grad`` and buffers restored afterwards, also on error."""
    with evaluating(model, freeze_parameters=True):
        yield model if isinstance(model, Logits) else Logits(model, outputs)


def n_classes(model: nn.Module, x: torch.Tensor) -> int:
    """The number of classes of an adapted model, from one forward pass on ``x[:1]`` (to check labels against it
    before any attack runs)."""
    with torch.no_grad():
        return int(model(x[:1]).shape[-1])
