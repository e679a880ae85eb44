"""Cheap stand-ins used to test the game's rules without training anything."""

from __future__ import annotations

import torch
from torch import nn

from transduct_attack import Adaptation, Attack, AttackResult, TransductiveDefense


class Offset(nn.Module):
    """Logits = linear map of the flattened input plus a fixed bias (a deterministic tiny model)."""

    def __init__(self, bias: torch.Tensor, in_features: int = 64, n_classes: int = 10) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(123)
        self.weight = nn.Parameter(torch.randn(n_classes, in_features, generator=g))
        self.bias = nn.Parameter(bias.clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.flatten(1) @ self.weight.T + self.bias


class RandomDefense(TransductiveDefense):
    """Γ whose adapted model has a bias drawn from the private generator; logs every call."""

    name = "random"

    def __init__(self, log: list, stateful: bool = False) -> None:
        self.log = log
        self.stateful = stateful
        self._base = Offset(torch.zeros(10))

    @property
    def base_model(self):
        return self._base

    def initial_state(self):
        return 0 if self.stateful else None

    def model_of(self, state):
        return self._base

    def adapt(self, x, *, state, generator):
        draw = torch.randn(10, generator=generator)
        self.log.append(("defend", x.clone(), state, draw))
        return Adaptation(model=Offset(draw), state=(state + 1) if self.stateful else None)


class SpyAttack(Attack):
    """Records its inputs and perturbs with noise from its own generator."""

    name = "spy"

    def __init__(self, log: list) -> None:
        self.log = log

    def _attack(self, x, y, *, eps, defense, generator, state):
        noise = (torch.rand(x.shape, generator=generator) * 2 - 1) * eps
        x_adv = (x + noise).clamp(0, 1)
        self.log.append(("attack", x.clone(), state, generator))
        return AttackResult(x_adv=x_adv, attack=self.name)


class CheatingAttack(Attack):
    """Leaves the eps-ball: the referee must refuse it."""

    name = "cheat"

    def _attack(self, x, y, *, eps, defense, generator, state):
        return AttackResult(x_adv=(x + 2 * eps + 0.01).clamp(0, 1) * 0 + 1.0, attack=self.name)
