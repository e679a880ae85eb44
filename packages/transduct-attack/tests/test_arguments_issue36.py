"""Unchecked arguments of issue 36: test-point draws, seeds, single-output models, the class count read from
the model's output (not from the last ``nn.Linear`` registered)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from transduct_attack import NoAttack, StaticDefense, play_game
from transduct_attack.networks import MLP, build
from transduct_attack.repeats import draw_points


@pytest.fixture()
def tiny():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(8, 1, 8, 8, generator=g)
    y = torch.randint(0, 10, (8,), generator=g)
    return x, y, StaticDefense(build(lambda: MLP(hidden=8), g))


@pytest.mark.parametrize(("args", "name"), [((5, 10, 0), r"\bn\b.*<= 5"), ((10, -2, 0), r"\bn\b.*>= 1"),
                                            ((0, 0, 0), "n_total"), ((10, 2, -1), "seed"),
                                            ((10, 2, 2**64), "seed"), ((10, 2, 1.5), "seed")])
def test_draw_points_refuses_impossible_draws(args, name):
    with pytest.raises((ValueError, TypeError), match=name):
        draw_points(args[0], n=args[1], seed=args[2])


def test_draw_points_refuses_a_device_this_machine_lacks():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError, match=r"device='cuda' is not available.*\['cpu'"):
        draw_points(10, n=2, seed=0, device="cuda")
    assert draw_points(10, n=10, seed=3).sort().values.tolist() == list(range(10))


@pytest.mark.parametrize(("kw", "name"), [({"seed": -1}, "seed"), ({"defender_seed": 1.5}, "defender_seed"),
                                          ({"seed": 2**64}, "seed")])
def test_play_game_refuses_bad_seeds_by_name(tiny, kw, name):
    x, y, d = tiny
    with pytest.raises((ValueError, TypeError), match=rf"^{name}\b"):
        play_game(NoAttack(), d, x, y, eps=0.1, batch_size=4, **kw)


class _OneOutput(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(64, 1)

    def forward(self, x):
        return self.lin(x.flatten(1))


def test_single_output_model_is_refused_not_scored(tiny):
    x, y, _ = tiny
    with pytest.raises(ValueError, match="at least 2 classes, got 1"):
        play_game(NoAttack(), StaticDefense(_OneOutput()), x, y * 0, eps=0.1, batch_size=4)


class _HeadFirst(nn.Module):
    """Its output layer is registered before a wider hidden layer: the last ``nn.Linear`` is not the output."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(16, 3)
        self.body = nn.Linear(64, 16)

    def forward(self, x):
        return self.head(torch.relu(self.body(x.flatten(1))))


def test_class_count_is_read_from_the_output(tiny):
    x, _, _ = tiny
    with pytest.raises(ValueError, match=r"\by\b.*< the model's 3 classes, got 5"):
        play_game(NoAttack(), StaticDefense(_HeadFirst()), x, torch.full((8,), 5), eps=0.1, batch_size=4)
    res = play_game(NoAttack(), StaticDefense(_HeadFirst()), x, torch.full((8,), 2), eps=0.1, batch_size=4)
    assert 0.0 <= res.accuracy <= 1.0
