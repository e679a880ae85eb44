"""FPA (Algorithm 1) and GMSA-AVG / GMSA-MIN (Algorithm 2): attacks on the model space of Γ.

Both iterate i = 0..T: attack a set of models to get V^(i) (Eq. 5 / Eq. 7), then run Γ on U^(i) —
with the attacker's *own* randomness, since Γ's private randomness is unknown — to get F^(i+1); and
return U^(k) with k = argmax_i L(F^(i+1), V^(i)) (line 5), L being the 0-1 error (on accepted points
for a rejecting Γ). FPA attacks only the last model F^(i); GMSA attacks all of F^(0..i).
"""

from __future__ import annotations

from typing import Any

import torch

from robustsuite_common.checks import check_choice, check_int

from . import losses as _losses
from .attacks import Attack, Solver
from .pgd import PGD, PGDEnsemble
from .referee import attack_error
from .threat_model import AttackResult

__all__ = ["FPA", "GMSA", "attack_suite"]


def _progress(iterable, enabled: bool, desc: str):
    if not enabled:
        return iterable
    from tqdm.auto import tqdm  # optional; only imported when asked for

    return tqdm(iterable, desc=desc)


class _ModelSpaceAttack(Attack):
    _mode = "fpa"

    def __init__(self, *, T: int = 9, solver: Solver | None = None, progress: bool = False) -> None:
        self.T = check_int("T", T, ge=0)
        if solver is not None and not isinstance(solver, (PGD, PGDEnsemble)):
            raise TypeError("solver must be a PGD or PGDEnsemble")
        self.solver = solver if solver is not None else PGD()
        self.progress = bool(progress)

    def _ensemble(self, models: list, i: int) -> tuple[list, str, int]:
        return [models[-1]], "avg", 1

    def _attack(self, x, y, *, eps, defense, generator, state: Any) -> AttackResult:
        models = [defense.model_of(state)]  # F^(0): the attacker's view of the current model
        candidates: list[torch.Tensor] = []
        adaptations = []
        errors: list[float] = []
        tiebreak: list[float] = []
        for i in _progress(range(self.T + 1), self.progress, self.name):
            ensemble, aggregate, scale = self._ensemble(models, i)
            x_i = self.solver.run(ensemble, x, y, eps=eps, generator=generator, aggregate=aggregate,
                                  steps_scale=scale)
            adaptation = defense.adapt(x_i, state=state, generator=generator)
            # one forward of F^(i+1) on V^(i) gives both the line-5 error and the tie-break
            with torch.no_grad():
                logits = adaptation.model(x_i)
            errors.append(attack_error(adaptation, x_i, y, rejects=defense.rejects, logits=logits))
            # Departure (tie-break only): among rounds with equal 0-1 error, prefer the larger mean
            # cross-entropy of F^(i+1) on V^(i); with small batches ties are common.
            tiebreak.append(float(_losses.cross_entropy(logits, y).mean()))
            candidates.append(x_i)
            adaptations.append(adaptation)
            models.append(adaptation.model)
        k = max(range(len(errors)), key=lambda j: (errors[j], tiebreak[j]))
        return AttackResult(x_adv=candidates[k], attack=self.name, selected_round=k,
                            round_errors=tuple(errors), adaptation=adaptations[k])


class FPA(_ModelSpaceAttack):
    """Fixed Point Attack (Algorithm 1): attack F^(i), the model Γ produced in the last iteration.

    ``T`` iterations after the first (T = 0 is the transfer attack on F^(0)); ``solver`` solves Eq. 5.
    """

    name = "fpa"

    def __repr__(self) -> str:
        return f"FPA(T={self.T}, solver={self.solver!r})"


class GMSA(_ModelSpaceAttack):
    """Greedy Model Space Attack (Algorithm 2) with ``mode="avg"`` (GMSA-AVG) or ``"min"`` (GMSA-MIN).

    At iteration i the solver attacks the whole history {F^(j)}_{j<=i} with the average or the
    per-sample minimum of the attack loss, accumulating gradients model by model (flat memory).
    For ``"min"`` the number of PGD steps is multiplied by (i + 1) when ``scale_min_steps`` (A.1.3).
    """

    def __init__(self, *, mode: str = "avg", T: int = 9, solver: Solver | None = None,
                 scale_min_steps: bool = True, progress: bool = False) -> None:
        super().__init__(T=T, solver=solver, progress=progress)
        self.mode = check_choice("mode", mode, ("avg", "min"))
        self.scale_min_steps = bool(scale_min_steps)
        self.name = f"gmsa-{self.mode}"

    def __repr__(self) -> str:
        return f"GMSA(mode={self.mode!r}, T={self.T}, solver={self.solver!r})"

    def _ensemble(self, models: list, i: int) -> tuple[list, str, int]:
        scale = i + 1 if (self.mode == "min" and self.scale_min_steps) else 1
        return list(models), self.mode, scale


def attack_suite(*, steps: int = 100, T: int = 9, solver: Solver | None = None) -> dict[str, Attack]:
    """The attacks of the paper's tables, by their table names: no attack, transfer PGD, FPA, GMSA-AVG, GMSA-MIN,
    sharing one solver (default ``PGD(steps=steps)``; the paper: 100 steps, T = 9)."""
    from .attacks import NoAttack, TransferPGD

    solver = PGD(steps=check_int("steps", steps, ge=1)) if solver is None else solver
    return {"none": NoAttack(), "pgd": TransferPGD(solver=solver), "fpa": FPA(T=T, solver=solver),
            "gmsa-avg": GMSA(mode="avg", T=T, solver=solver), "gmsa-min": GMSA(mode="min", T=T, solver=solver)}
