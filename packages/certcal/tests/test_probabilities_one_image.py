"""A softmax model is refused on a single image as on a batch (issue 36): the check needs no second row."""

from __future__ import annotations

import pytest
import torch

import certcal
from robustsuite_common.models import ModelOutputError


class _Softmax(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(16, 3)

    def forward(self, x):
        return torch.softmax(self.lin(x.flatten(1)) * 5, 1)


@pytest.mark.parametrize("n", [1, 3])
def test_beta_ace_refuses_a_softmax_model_at_any_batch_size(n):
    torch.manual_seed(0)
    x = torch.rand(n, 1, 4, 4)
    with pytest.raises(ModelOutputError, match="probabilities"):
        certcal.BetaACE(steps=1)(_Softmax(), x, torch.zeros(n, dtype=torch.long), 0.1)
