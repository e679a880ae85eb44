"""Attacks in the transductive game: no attack, transfer PGD / AutoAttack from the static base model.

Every attack follows one convention: hyper-parameters are keyword-only constructor arguments; the call
``attack(x, y, *, eps, defense, generator, state=None)`` gets the clean batch V = (x, y), the L∞
budget, the defense mechanism Γ (public knowledge), the attacker's own generator and the attacker's
view of Γ's state, and returns an :class:`~transduct_attack.AttackResult`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import torch
from torch import nn

from robustsuite_common.checks import check_choice, check_images, check_int
from robustsuite_common.extras import optional_import

from ._validate import as_input, check_eps, check_generator, check_labels
from .pgd import PGD, PGDEnsemble
from .threat_model import AttackResult, TransductiveDefense

__all__ = ["Attack", "NoAttack", "TransferPGD", "TransferAutoAttack", "AdaptiveAutoAttack"]

Solver = PGD | PGDEnsemble


class Attack(ABC):
    """Base class of the attacker algorithms A of Definition 1."""

    name: str = "attack"

    def __call__(self, x: torch.Tensor, y: torch.Tensor, *, eps: float, defense: TransductiveDefense,
                 generator: torch.Generator, state: Any = None) -> AttackResult:
        """Perturb V = (x, y) into U' inside the L∞ ball of radius ``eps``; ``x`` is not mutated."""
        if not isinstance(defense, TransductiveDefense):
            raise TypeError(f"defense must be a TransductiveDefense, got {type(defense).__name__}")
        check_images("x", x)
        y = check_labels("y", y, x.shape[0], device=x.device, model=defense.base_model, x=x)
        eps = check_eps(eps)
        check_generator(generator)
        if state is None and defense.stateful:
            state = defense.initial_state()
        x = as_input(defense.base_model, x.detach())
        return self._attack(x, y.to(x.device), eps=eps, defense=defense, generator=generator, state=state)

    @abstractmethod
    def _attack(self, x: torch.Tensor, y: torch.Tensor, *, eps: float, defense: TransductiveDefense,
                generator: torch.Generator, state: Any) -> AttackResult: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class NoAttack(Attack):
    """Send the clean batch: the referee then measures Γ's (clean) accuracy."""

    name = "none"

    def _attack(self, x, y, *, eps, defense, generator, state) -> AttackResult:
        return AttackResult(x_adv=x.clone(), attack=self.name)


class TransferPGD(Attack):
    """PGD on the static base model F, transferred to Γ (§6 "PGD"; FPA with T = 0 when Γ is stateless).

    ``solver`` is a :class:`PGD` (default: 100 steps, cross-entropy) or the A.3 :class:`PGDEnsemble`.
    With ``attack_state_model=True`` the attacker targets the model of its view of the state instead
    of the base model (RMC's "PGD-skip" attack in a state-leaking game).
    """

    name = "pgd"

    def __init__(self, *, solver: Solver | None = None, attack_state_model: bool = False) -> None:
        if solver is not None and not isinstance(solver, (PGD, PGDEnsemble)):
            raise TypeError("solver must be a PGD or PGDEnsemble")
        self.solver = solver if solver is not None else PGD()
        self.attack_state_model = bool(attack_state_model)

    def __repr__(self) -> str:
        return f"TransferPGD(solver={self.solver!r}, attack_state_model={self.attack_state_model})"

    def _attack(self, x, y, *, eps, defense, generator, state) -> AttackResult:
        model = defense.model_of(state) if self.attack_state_model else defense.base_model
        x_adv = self.solver.run([model], x, y, eps=eps, generator=generator)
        return AttackResult(x_adv=x_adv, attack=self.name)


class TransferAutoAttack(Attack):
    """AutoAttack (Croce & Hein, 2020) on the static base model, transferred to Γ (§6 "AA"); on a
    :class:`~transduct_attack.StaticDefense` it is white-box AutoAttack, the field's robust accuracy.

    Runs :func:`robustsuite_common.autoattack.autoattack` (the ``autoattack`` extra: ``pyautoattack``), seeded
    from the attacker's ``generator``; the caller's global RNG and model are left as they were.
    ``version="standard"`` (default) runs APGD-CE, APGD-T, FAB-T and Square; ``version="custom"`` with
    ``attacks=[...]`` a subset. ``n_iter`` / ``n_restarts`` override AutoAttack's budgets (a departure from
    standard AutoAttack that a report must name: see :attr:`description`).
    """

    name = "aa"

    def __init__(self, *, version: str = "standard", attacks: list[str] | None = None,
                 batch_size: int = 500, n_iter: int | None = None, n_restarts: int | None = None) -> None:
        from robustsuite_common.autoattack import AUTOATTACK_VERSIONS

        self.version = check_choice("version", version, AUTOATTACK_VERSIONS)
        if version == "custom" and not attacks:
            raise ValueError("version='custom' needs attacks=[...] (e.g. ['apgd-ce', 'apgd-t'])")
        self.attacks = list(attacks) if attacks else None
        self.batch_size = check_int("batch_size", batch_size, ge=1)
        self.n_iter = None if n_iter is None else check_int("n_iter", n_iter, ge=1)
        self.n_restarts = None if n_restarts is None else check_int("n_restarts", n_restarts, ge=1)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(version={self.version!r}, attacks={self.attacks}, n_iter={self.n_iter}, "
                f"n_restarts={self.n_restarts})")

    @property
    def description(self) -> str:
        """What runs, e.g. "standard AutoAttack" or "AutoAttack ['apgd-ce'], 20 iterations, 1 restart"."""
        if self.version == "standard" and self.n_iter is None and self.n_restarts is None:
            return "standard AutoAttack"
        what = f"AutoAttack {self.attacks}" if self.version == "custom" else f"AutoAttack ({self.version})"
        if self.n_iter is not None:
            what += f", {self.n_iter} iterations"
        if self.n_restarts is not None:
            what += f", {self.n_restarts} restart(s)"
        return what

    def _target(self, defense: TransductiveDefense, state: Any, generator: torch.Generator) -> nn.Module:
        return defense.base_model

    def _attack(self, x, y, *, eps, defense, generator, state) -> AttackResult:
        from robustsuite_common.autoattack import autoattack

        # pyautoattack, which the shared autoattack runs, is this package's `autoattack` extra: name it up front
        optional_import("pyautoattack", extra="transduct-attack[autoattack]", feature="TransferAutoAttack")
        model = self._target(defense, state, generator)
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator, device=generator.device))
        res = autoattack(model, x, y, eps=eps, version=self.version, seed=seed, batch_size=self.batch_size,
                         attacks=self.attacks, n_iter=self.n_iter, n_restarts=self.n_restarts)
        x_adv = torch.minimum(torch.maximum(res.x_adv.to(x.device), x - eps), x + eps).clamp(0, 1)
        return AttackResult(x_adv=x_adv.detach(), attack=self.name)


class _AdaptedForward(nn.Module):
    """x -> F_x(x) with F_x = Γ(x).model: Γ adapts on every batch it is called with (a dynamic model); gradients
    flow through the adapted model, not through the adaptation (as AutoAttack sees a test-time defense)."""

    def __init__(self, defense: TransductiveDefense, state: Any, seed: int) -> None:
        super().__init__()
        self.defense, self.state, self.seed = defense, state, seed
        self.anchor = nn.Parameter(torch.zeros(()), requires_grad=False)  # AutoAttack reads a parameter device

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        gen = torch.Generator(device=x.device).manual_seed(self.seed)
        with torch.enable_grad():
            adaptation = self.defense.adapt(x.detach(), state=self.state, generator=gen)
        return adaptation.model(x)


class AdaptiveAutoAttack(TransferAutoAttack):
    """AutoAttack run on Γ's adapted forward x -> Γ(x).model(x): the DENT authors' "DENT-AA" evaluation (paper
    Table 2's DENT-AA column), which treats the test-time defense as a dynamic model and attacks it end to end.

    Each forward of AutoAttack re-adapts Γ on the batch it is called with (no gradient through the adaptation),
    with a seed drawn from the attacker's ``generator``; a stateful Γ is adapted from the attacker's view of the
    state. Costly: every AutoAttack step runs Γ's adaptation (use ``version="custom"``, ``["apgd-ce"]`` on CPU).
    """

    name = "aa-adaptive"

    def _target(self, defense: TransductiveDefense, state: Any, generator: torch.Generator) -> nn.Module:
        seed = int(torch.randint(0, 2**31 - 1, (1,), generator=generator, device=generator.device))
        device = next(defense.base_model.parameters()).device
        return _AdaptedForward(defense, state, seed).to(device)
