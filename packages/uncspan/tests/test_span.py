import json

import numpy as np
import pytest
import torch

from uncspan import SpanStatistic, msus, mus, uncertainty_span


def test_mus_msus_hand_values():
    under = np.array([1.0, 2.0, 3.0])
    over = np.array([0.0, 1.0, 1.0])
    m = mus(under, over)  # spans 1, 1, 2
    assert m.mean == pytest.approx(4 / 3)
    assert m.std == pytest.approx(np.sqrt(((1 - 4 / 3) ** 2 * 2 + (2 - 4 / 3) ** 2) / 3))
    assert m.n == 3 and float(m) == pytest.approx(4 / 3)
    s = msus(torch.tensor(under), torch.tensor(over))  # squares 1, 1, 4
    assert s.mean == pytest.approx(2.0)
    assert s.std == pytest.approx(np.sqrt((1 + 1 + 4) / 3))
    assert isinstance(s, SpanStatistic) and s.to_dict() == {"mean": s.mean, "std": s.std, "n": 3}


@pytest.mark.parametrize("under, over, exc", [([1.0, 2.0], [0.0], ValueError), ([], [], ValueError),
                                               ([np.nan], [0.0], ValueError), ([[1.0]], [[0.0]], ValueError),
                                               ("ab", "cd", TypeError)])
def test_mus_bad_inputs(under, over, exc):
    with pytest.raises(exc):
        mus(under, over)


def test_uncertainty_span_properties_and_determinism(std_model, digits):
    _, _, xte, _ = digits
    x = xte[:40].clone()
    x0 = x.clone()
    a = uncertainty_span(std_model, x, eps=0.1, steps=10, seed=3, random_start=True)
    b = uncertainty_span(std_model, x, eps=0.1, steps=10, seed=3, random_start=True)
    assert torch.equal(x, x0)
    np.testing.assert_array_equal(a.entropy_under, b.entropy_under)
    np.testing.assert_array_equal(a.entropy_over, b.entropy_over)
    assert (a.entropy_over <= a.entropy_clean + 1e-9).all()
    assert (a.entropy_under >= a.entropy_clean - 1e-9).all()
    assert (a.span >= 0).all() and a.mus.mean > 0
    assert a.mus.mean == pytest.approx(float(np.mean(a.entropy_under - a.entropy_over)))
    d = json.loads(json.dumps(a.to_dict()))
    assert d["norm"] == "Linf" and len(d["entropy_clean"]) == 40
    # a larger budget gives a wider span (monotone in eps on average)
    wide = uncertainty_span(std_model, x, eps=0.2, steps=10)
    assert wide.mus.mean > uncertainty_span(std_model, x, eps=0.05, steps=10).mus.mean


def test_uncertainty_span_bad_inputs(std_model, digits):
    _, _, xte, _ = digits
    with pytest.raises(TypeError, match="scalar"):
        uncertainty_span(std_model, xte[:2], eps=[0.1, 0.1])
    with pytest.raises(ValueError, match="norm"):
        uncertainty_span(std_model, xte[:2], eps=0.1, norm="linf")
    with pytest.raises(ValueError, match="steps"):
        uncertainty_span(std_model, xte[:2], eps=0.1, steps=-3)
    with pytest.raises(ValueError, match="objective"):
        uncertainty_span(std_model, xte[:2], eps=0.1, under_objective="mse")


def test_span_round_trips_through_dict(std_model, digits):
    _, _, xte, _ = digits
    sp = uncertainty_span(std_model, xte[:10], eps=0.1, steps=3)
    back = type(sp).from_dict(json.loads(json.dumps(sp.to_dict())))
    np.testing.assert_array_equal(back.entropy_under, sp.entropy_under)
    np.testing.assert_array_equal(back.pred_over, sp.pred_over)
    assert back.mus == sp.mus
