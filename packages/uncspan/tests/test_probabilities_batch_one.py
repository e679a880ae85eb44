"""A softmax model is refused with ``batch_size=1`` as with larger batches (issue 36)."""

from __future__ import annotations

import pytest
import torch

import uncspan
from robustsuite_common.models import ModelOutputError


class _Softmax(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(16, 4)

    def forward(self, x):
        return torch.softmax(self.lin(x.flatten(1)) * 5, 1)


@pytest.mark.parametrize("batch_size", [1, 4])
def test_uncertainty_span_refuses_a_softmax_model_at_any_batch_size(batch_size):
    torch.manual_seed(0)
    x = torch.rand(4, 1, 4, 4)
    with pytest.raises(ModelOutputError, match="probabilities"):
        uncspan.uncertainty_span(_Softmax(), x, eps=0.01, steps=1, batch_size=batch_size)
