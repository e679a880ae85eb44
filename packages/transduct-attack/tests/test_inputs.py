"""Bad inputs get clear errors; the default networks take any H×W (issue 17, defect 6)."""

from __future__ import annotations

import pytest
import torch

from transduct_attack import DANN, PGD, TADV, NoAttack, StaticDefense, TransferPGD, URejectron, play_game
from transduct_attack.networks import MLP, build


def _gen(seed):
    return torch.Generator().manual_seed(seed)


@pytest.fixture()
def tiny():
    g = _gen(0)
    x = torch.rand(12, 1, 8, 8, generator=g)
    y = torch.randint(0, 10, (12,), generator=g)
    return x, y, StaticDefense(build(lambda: MLP(hidden=8), g))


def test_nan_inputs_are_refused_by_name(tiny):
    x, y, d = tiny
    bad = x.clone()
    bad[3, 0, 2, 2] = float("nan")
    with pytest.raises(ValueError, match=r"\bx\b.*(NaN|finite)"):
        play_game(NoAttack(), d, bad, y, eps=0.1, batch_size=4)
    inf = x.clone()
    inf[0, 0, 0, 0] = float("inf")
    with pytest.raises(ValueError, match=r"\bx\b"):
        play_game(NoAttack(), d, inf, y, eps=0.1, batch_size=4)
    with pytest.raises(ValueError, match="train_x"):
        URejectron(d.base_model, bad)


def test_nan_and_negative_labels_are_refused_by_name(tiny):
    x, y, d = tiny
    yf = y.double()
    yf[1] = float("nan")
    with pytest.raises(TypeError, match=r"\by\b.*integer"):  # float labels (NaN among them) are refused
        play_game(NoAttack(), d, x, yf, eps=0.1, batch_size=4)
    neg = y.clone()
    neg[0] = -1
    with pytest.raises(ValueError, match=r"\by\b"):
        play_game(NoAttack(), d, x, neg, eps=0.1, batch_size=4)
    with pytest.raises(ValueError, match="train_y"):
        DANN(x, neg, base_model=d.base_model)


def test_default_networks_accept_non_square_images():
    g = _gen(1)
    x = torch.rand(40, 3, 10, 14, generator=g)
    y = torch.randint(0, 3, (40,), generator=g)
    base = build(lambda: MLP(in_features=3 * 10 * 14, n_classes=3, hidden=8), g).eval()
    xt = x[:6]
    for defense in (DANN(x, y, base_model=base, epochs=1, batch_size=16),
                    TADV(x, y, base_model=base, eps=0.05, epochs=1, batch_size=16, adv_steps=1),
                    URejectron(base, x, epochs=1, batch_size=16)):
        ad = defense.adapt(xt, state=None, generator=_gen(2))
        assert ad.predict(xt).shape == (6,)
        if defense.rejects:
            assert ad.accepts(xt).shape == (6,)
    res = play_game(TransferPGD(solver=PGD(steps=1)), TADV(x, y, base_model=base, eps=0.05, epochs=1,
                                                              batch_size=16, adv_steps=1), xt, y[:6], eps=0.05,
                    batch_size=6)
    assert res.n == 6
