"""Robust accuracy of a vision model, as the field measures it: standard AutoAttack unless another attack is
named (issue 27). PGD stays available by name — the paper's point is that a temperature fools it."""

from __future__ import annotations

from dataclasses import dataclass

from robustsuite_common.checks import check_choice, check_float, check_int
from robustsuite_common.intervals import Interval, proportion_of

from .attacks import AutoAttackLinf, PGDLinf
from .protocol import evaluate_attack

__all__ = ["ROBUST_ATTACKS", "RobustAccuracy", "robust_accuracy"]

ROBUST_ATTACKS = ("autoattack", "pgd")


@dataclass(frozen=True)
class RobustAccuracy:
    """The share of inputs the model classifies correctly both clean and under ``attack`` (its name, e.g.
    ``"AutoAttack (standard, L∞ 0.1)"``), with its Clopper-Pearson ``interval`` and the per-input outcomes
    ``robust`` / ``clean_correct`` (for paired comparisons with another attack on the same inputs)."""

    attack: str
    robust: tuple[bool, ...]
    clean_correct: tuple[bool, ...]
    interval: Interval

    @property
    def value(self) -> float:
        return float(self.interval.estimate)

    def to_dict(self) -> dict:
        return {"attack": self.attack, "value": self.value, "interval": self.interval.to_dict(),
                "robust": list(self.robust), "clean_correct": list(self.clean_correct)}


def robust_accuracy(model, x, y, *, attack="autoattack", eps: float = 0.1, steps: int = 20, seed: int = 0,
                    progress: bool = False) -> RobustAccuracy:
    """Robust accuracy of ``model`` on ``(x, y)`` at L∞ radius ``eps``.

    ``attack``: ``"autoattack"`` (default: standard AutoAttack, :class:`~iortemp.AutoAttackLinf`, the number
    RobustBench reports), ``"pgd"`` (:class:`~iortemp.PGDLinf` with ``steps`` steps and a random start: weaker,
    and fooled by an extreme temperature), or any attack object of this package's protocol (its ``name``
    attribute, if any, names it). The model runs in eval mode and comes back unchanged.
    """
    if isinstance(attack, str):
        check_choice("attack", attack, ROBUST_ATTACKS)
        eps = check_float("eps", eps, gt=0.0, le=1.0)
        atk = AutoAttackLinf(eps=eps) if attack == "autoattack" else PGDLinf(eps=eps, steps=check_int("steps", steps,
                                                                                                        ge=1))
    elif callable(attack):
        atk = attack
    else:
        raise TypeError(f"attack must be one of {list(ROBUST_ATTACKS)} or an attack object, got "
                        f"{type(attack).__name__}")
    ev = evaluate_attack(model, x, y, atk, seed=seed, progress=progress)
    name = str(getattr(atk, "name", type(atk).__name__))
    return RobustAccuracy(name, ev.correct_adversarial, ev.correct_clean, proportion_of(ev.correct_adversarial))
