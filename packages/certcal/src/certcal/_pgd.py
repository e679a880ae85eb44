"""Shared PGD helper: steepest-ascent directions for L-inf and L2 balls (the projection is
``robustsuite_common.projection.project``)."""

from __future__ import annotations

import torch

from robustsuite_common.projection import flat_norm


def ascent_direction(grad: torch.Tensor, norm: str) -> torch.Tensor:
    if norm == "linf":
        return grad.sign()
    return grad / flat_norm(grad)
