"""merge_games pools games of one setting only (issue 36): games at two budgets are not one game."""

from __future__ import annotations

import dataclasses

import pytest
import torch

from transduct_attack import NoAttack, StaticDefense, merge_games, play_game
from transduct_attack.networks import MLP, build


@pytest.fixture(scope="module")
def game():
    g = torch.Generator().manual_seed(0)
    x = torch.rand(8, 1, 8, 8, generator=g)
    y = torch.randint(0, 10, (8,), generator=g)
    return play_game(NoAttack(), StaticDefense(build(lambda: MLP(hidden=8), g)), x, y, eps=0.05, batch_size=4)


@pytest.mark.parametrize(("field", "value"), [("eps", 0.3), ("attack", "pgd"), ("defense", "rmc")])
def test_games_of_different_settings_are_not_merged(game, field, value):
    other = dataclasses.replace(game, **{field: value})
    with pytest.raises(ValueError, match=rf"^games\[1\] has {field}=.* but games\[0\] has {field}="):
        merge_games([game, other])


def test_games_of_one_setting_merge(game):
    merged = merge_games([game, game])
    assert merged.n == 2 * game.n and merged.eps == game.eps
    assert merged.accuracy == pytest.approx(game.accuracy)
