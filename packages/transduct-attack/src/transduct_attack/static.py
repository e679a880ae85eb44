"""The degenerate Γ: no transduction (the classic inductive threat model, §4 "modeling capacity")."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from robustsuite_common.checks import check_images

from ._validate import logits_model
from .threat_model import Adaptation, TransductiveDefense

__all__ = ["StaticDefense"]


class StaticDefense(TransductiveDefense):
    """Γ(U') = F: the referee scores the fixed base model; transfer attacks become white-box attacks."""

    name = "static"

    def __init__(self, model: nn.Module) -> None:
        self._base = logits_model("model", model)

    def adapt(self, x: torch.Tensor, *, state: Any, generator: torch.Generator) -> Adaptation:
        check_images("x", x)
        return Adaptation(model=self._base)
