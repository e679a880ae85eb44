import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import iortemp

TEMPS = [1e-3, 5e-3, 1e-1, 1.0, 10.0, 2e6, 1e7]


class FixedText:
    """A text classifier returning fixed float32 logits per text (by index in the string)."""

    def __init__(self, logits):
        self.logits = np.asarray(logits, dtype=np.float32)

    def __call__(self, texts):
        return self.logits[[int(t) for t in texts]]


@settings(max_examples=40, deadline=None)
@given(arrays(np.float32, (5, 3), elements=st.floats(-50, 50, width=32)), st.sampled_from(TEMPS))
def test_text_wrapper_finite_and_argmax_preserved(logits, temp):
    clf = FixedText(logits)
    w = iortemp.TemperatureScaled(clf, temperature=temp)
    texts = [str(i) for i in range(5)]
    served = w(texts)
    rep = w.logits64(texts)
    assert served.dtype == np.float32 and rep.dtype == np.float64
    assert np.all(np.isfinite(served)) and np.all(np.isfinite(rep))
    lp = torch.log_softmax(torch.as_tensor(served), 1)
    assert torch.isfinite(lp).all()
    conf = iortemp.confidence_stats(rep)
    assert np.isfinite(conf.mean)
    # argmax unchanged wherever the base logits have a unique maximum
    unique = (np.sort(logits, 1)[:, -1] > np.sort(logits, 1)[:, -2])
    np.testing.assert_array_equal(rep.argmax(1)[unique], logits.argmax(1)[unique])


@pytest.mark.parametrize("temp", TEMPS)
def test_module_wrapper_finite(temp):
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(4, 3))
    x = torch.rand(6, 1, 2, 2)
    x0 = x.clone()
    w = iortemp.TemperatureScaled(net, temperature=temp)
    assert isinstance(w, torch.nn.Module)
    out = w(x)
    assert out.dtype == torch.float32 and torch.isfinite(torch.log_softmax(out, 1)).all()
    assert torch.equal(out.argmax(1), net(x).argmax(1))
    assert torch.isfinite(w.logits64(x)).all() and w.logits64(x).dtype == torch.float64
    assert torch.equal(x, x0)


def test_served_float32_saturates_but_reporting_does_not():
    clf = FixedText([[2.0, 1.5]])  # margin 0.5
    up = iortemp.TemperatureScaled(clf, temperature=0.005)
    p32 = torch.softmax(torch.as_tensor(up(["0"])), 1)
    assert p32[0, 0].item() == 1.0  # what TextAttack sees: saturated, goal score 1 - p = 0 exactly
    from scipy.special import softmax

    p64 = softmax(iortemp.logits64(up, ["0"]), axis=1)
    assert p64[0, 1] == pytest.approx(np.exp(-100.0), rel=1e-9)  # float64 keeps the runner-up alive
    # the adversary can undo T_d from the logits: reporting logits compose temperatures exactly
    back = iortemp.TemperatureScaled(up, temperature=1 / 0.005)
    np.testing.assert_allclose(back.logits64(["0"]), [[2.0, 1.5]], rtol=1e-12)


def test_underconfident_reports_table1_value():
    # Table 1: T_d = 2e6 gives 50.00007 % confidence, not 50 % or NaN
    clf = FixedText([[0.0, 5.6]])
    down = iortemp.TemperatureScaled(clf, temperature=2e6)
    conf = iortemp.confidence_stats(iortemp.logits64(down, ["0"])).mean
    expected = 1 / (1 + np.exp(-np.float64(np.float32(5.6)) / 2e6))
    assert conf == pytest.approx(expected, rel=1e-12)
    assert 0.5 < conf < 0.500001
    assert f"{100 * conf:.5f}" == "50.00007"


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf")])
def test_bad_temperature_value(bad):
    with pytest.raises(ValueError, match="temperature"):
        iortemp.TemperatureScaled(FixedText([[0.0, 1.0]]), temperature=bad)


def test_bad_temperature_type_and_model():
    with pytest.raises(TypeError, match="temperature"):
        iortemp.TemperatureScaled(FixedText([[0.0, 1.0]]), temperature="1")
    with pytest.raises(TypeError, match="model"):
        iortemp.TemperatureScaled(42, temperature=1.0)
