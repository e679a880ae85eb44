"""The audit's temperature-illusion check on the shipped Fashion-MNIST CNNs (the method packages test it on their
own tiny models; the shipped weights live in the umbrella): the honest adversarially trained CNN is not flagged,
the same CNN with its logits scaled ×1000 (extreme confidence that hides PGD's gradient) is."""

from __future__ import annotations

import pytest
import torch

import iortemp
from robustsuite import load_model
from robustsuite.data.builtin import fashion_mnist
from robustsuite_common.verdict import apply_fdr


class Scaled(torch.nn.Module):
    def __init__(self, model, factor):
        super().__init__()
        self.model, self.factor = model, factor

    def forward(self, x):
        return self.model(x) * self.factor


@pytest.fixture(scope="module")
def shipped():
    model = load_model("builtin:fashion-cnn-at")
    model = getattr(model, "model", model)
    test = fashion_mnist(full=False).test.head(60)
    return model, test.x, torch.as_tensor(test.y)


def test_shipped_at_cnn_passes_and_its_x1000_copy_is_flagged(shipped):
    model, x, y = shipped
    honest = iortemp.temperature_illusion_check(model, x, y, eps=0.1, steps=5, max_evaluations=2)
    scaled = iortemp.temperature_illusion_check(Scaled(model, 1000.0), x, y, eps=0.1, steps=5, max_evaluations=2)
    honest, scaled = apply_fdr([honest, scaled])
    assert honest.status == "pass" and honest.interval[0] <= 0
    assert scaled.status == "fail" and scaled.interval[0] > 0.05
