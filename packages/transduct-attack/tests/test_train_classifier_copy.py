"""train_classifier returns a trained copy (issue 36): the caller's model, its mode and its .grad are untouched;
``in_place=True`` trains the model itself and leaves no .grad behind."""

from __future__ import annotations

import pytest
import torch

import transduct_attack as ta
from robustsuite_common.testing import snapshot
from transduct_attack.networks import MLP, build


def _data():
    g = torch.Generator().manual_seed(0)
    return torch.rand(16, 1, 8, 8, generator=g), torch.randint(0, 10, (16,), generator=g)


def test_default_returns_a_trained_copy_and_leaves_the_model_as_it_came():
    x, y = _data()
    model = build(lambda: MLP(hidden=8), torch.Generator().manual_seed(1)).train()
    before = snapshot(model)
    trained = ta.train_classifier(model, x, y, epochs=2, generator=torch.Generator().manual_seed(2))
    assert trained is not model
    before.assert_same(model)
    assert all(p.grad is None for p in model.parameters())
    assert any(not torch.equal(a, b) for a, b in zip(trained.parameters(), model.parameters(), strict=True))
    assert not trained.training and all(p.grad is None for p in trained.parameters())


def test_in_place_trains_the_model_itself():
    x, y = _data()
    model = build(lambda: MLP(hidden=8), torch.Generator().manual_seed(1))
    w0 = [p.detach().clone() for p in model.parameters()]
    out = ta.train_classifier(model, x, y, epochs=2, generator=torch.Generator().manual_seed(2), in_place=True)
    assert out is model
    assert any(not torch.equal(a, b) for a, b in zip(w0, model.parameters(), strict=True))
    assert all(p.grad is None for p in model.parameters())
    with pytest.raises(TypeError, match="^in_place"):
        ta.train_classifier(model, x, y, epochs=1, generator=torch.Generator(), in_place=1)
