"""A softmax model is refused on a single image as on a batch (issue 36): the check needs no second row."""

from __future__ import annotations

import pytest
import torch

import certcal
from robustsuite_common.testing import assert_refuses_probabilities


@pytest.mark.parametrize("n", [1, 3])
def test_beta_ace_refuses_a_softmax_model_at_any_batch_size(n):
    assert_refuses_probabilities(lambda m, x: certcal.BetaACE(steps=1)(m, x, torch.zeros(n, dtype=torch.long), 0.1),
                                 n_inputs=n, n_classes=3)


class _Logits(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(28 * 28, 3)

    def forward(self, x):
        return self.lin(x.flatten(1))


def test_channels_last_images_are_refused_before_the_model_sees_them():
    calls = []
    model = _Logits()
    model.register_forward_pre_hook(lambda *a: calls.append(1))
    x = torch.rand(2, 28, 28, 1)
    with pytest.raises(ValueError, match=r"channels last.*x\.permute\(0, 3, 1, 2\)"):
        certcal.BetaACE(steps=1)(model, x, torch.zeros(2, dtype=torch.long), 0.1)
    with pytest.raises(ValueError, match="channels last"):
        certcal.certify(model, x, sigma=0.25, n0=2, n=4)
    assert calls == []


def test_certify_refuses_a_seed_numpy_and_torch_cannot_take():
    x = torch.rand(2, 1, 28, 28)
    with pytest.raises(ValueError, match=r"^seed must be <= 9223372036854775807, got 18446744073709551616"):
        certcal.certify(_Logits(), x, sigma=0.25, n0=2, n=4, seed=2**64)


def test_admm_on_a_device_this_machine_lacks_is_refused_by_name():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    lo, up = [0.2, 0.5, 0.7], [0.4, 0.8, 0.9]
    with pytest.raises(ValueError, match=r"^device='cuda' is not available on this machine"):
        certcal.certified_calibration_error(lo, up, [1, 0, 1], n_bins=2, method="admm", device="cuda")
