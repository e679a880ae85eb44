"""Probabilities passed as logits are refused at any batch size and on the text path (issue 36): a softmax
model attacked on one image, a text classifier returning probabilities, probabilities given to the metrics."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import iortemp
from robustsuite_common.models import ModelOutputError


class _Softmax(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.lin = torch.nn.Linear(16, 3)
        with torch.no_grad():
            self.lin.weight.copy_(torch.randn(3, 16, generator=g) * 3)

    def forward(self, x):
        return torch.softmax(self.lin(x.flatten(1)), 1)


def _text_probabilities(texts):
    """A text classifier returning probabilities: rows differ by the text's length."""
    z = np.array([[len(t) % 5, 1.0, -1.0] for t in texts], dtype=np.float64)
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def test_vision_softmax_model_refused_on_one_image():
    x = torch.rand(1, 1, 4, 4, generator=torch.Generator().manual_seed(1))
    with pytest.raises(ModelOutputError, match="probabilities"):
        iortemp.evaluate_attack(_Softmax(), x, torch.tensor([0]), iortemp.PGDLinf(eps=0.1, steps=1))


def test_text_probabilities_refused_by_evaluate_attack_and_logits64():
    texts, labels = ["good film", "bad plot here"], [0, 1]
    with pytest.raises(ModelOutputError, match="probabilities"):
        iortemp.evaluate_attack(_text_probabilities, texts, labels, lambda v, x, y: None)
    with pytest.raises(ModelOutputError, match="probabilities"):
        iortemp.logits64(_text_probabilities, texts)
    with pytest.raises(ModelOutputError, match="probabilities"):  # a one-text batch too
        iortemp.logits64(_text_probabilities, texts[:1])
    # declared, the log of the probabilities are logits with the same softmax
    z = iortemp.logits64(lambda t: np.log(_text_probabilities(t)), texts)
    np.testing.assert_allclose(np.exp(z), _text_probabilities(texts))


def test_text_classifier_changing_its_column_count_is_refused():
    def clf(texts):
        return np.zeros((len(texts), 2 + len(texts[0]) % 2)) + np.arange(len(texts))[:, None] * 3.0

    with pytest.raises(ModelOutputError, match="columns"):
        iortemp.logits64(clf, ["ab", "abc"], batch_size=1)


def test_metrics_refuse_probabilities_and_accept_their_log():
    z = np.random.default_rng(0).normal(size=(40, 3)) * 2
    y = z.argmax(1)
    p = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    with pytest.raises(ModelOutputError, match="logits look like probabilities"):
        iortemp.calibration_error(p, y)
    with pytest.raises(ModelOutputError, match="logits look like probabilities"):
        iortemp.confidence_stats(p[:1])
    assert iortemp.calibration_error(np.log(p), y).ece == pytest.approx(iortemp.calibration_error(z, y).ece)


@pytest.mark.parametrize("fn", ["confidence_stats", "calibration_error"])
def test_a_temperature_that_overflows_the_logits_is_refused_by_name(fn):
    z = np.array([[2.0, -1.0, 0.5], [0.1, 0.3, -2.0]])
    args = (z,) if fn == "confidence_stats" else (z, [0, 1])
    with pytest.raises(ValueError, match=r"^temperature .*1e-320"):
        getattr(iortemp, fn)(*args, temperature=1e-320)
    out = getattr(iortemp, fn)(*args, temperature=1e-3)  # the tested range's end: finite, confidence 1
    assert out.mean_confidence == 1.0 if fn == "calibration_error" else out.mean == 1.0
