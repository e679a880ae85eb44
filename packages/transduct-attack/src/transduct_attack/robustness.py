"""A static model's own robustness, as the field measures it (issue 27): standard AutoAttack by default, or the
named weaker attack (white-box PGD), with per-point outcomes and the interval of the robust accuracy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_images, check_int, check_seed

from ._validate import as_input, check_eps, check_labels, logits_model
from .attacks import Attack, TransferAutoAttack, TransferPGD
from .pgd import PGD

__all__ = ["RobustAccuracy", "robust_accuracy", "ROBUST_ATTACKS"]

#: the attacks :func:`robust_accuracy` names by string
ROBUST_ATTACKS = ("autoattack", "pgd")


@dataclass(frozen=True)
class RobustAccuracy:
    """Per point: ``clean_correct`` (the model answers ``y`` on ``x``) and ``robust`` (also on the attack's
    ``x_adv``, inside the L∞ ball); ``attack`` names what ran (e.g. "standard AutoAttack (pyautoattack 0.2.0),
    seed 0")."""

    robust: np.ndarray
    clean_correct: np.ndarray
    attack: str
    eps: float

    @property
    def n(self) -> int:
        return int(self.robust.size)

    @property
    def accuracy(self) -> float:
        """Robust accuracy: the share of points the model still classifies correctly under the attack."""
        return float(self.robust.mean())

    @property
    def clean_accuracy(self) -> float:
        return float(self.clean_correct.mean())

    def interval(self, level: float = 0.95):
        """Clopper-Pearson interval of :attr:`accuracy` (a :class:`robustsuite_common.intervals.Interval`)."""
        from robustsuite_common.intervals import proportion

        return proportion(int(self.robust.sum()), self.n, level=level)

    def to_dict(self) -> dict[str, Any]:
        return {"attack": self.attack, "eps": self.eps, "n": self.n, "accuracy": self.accuracy,
                "clean_accuracy": self.clean_accuracy, "robust": self.robust.tolist(),
                "clean_correct": self.clean_correct.tolist()}


def robust_accuracy(model: nn.Module, x: torch.Tensor, y: Any, *, eps: float, attack: str | Attack = "autoattack",
                    seed: int = 0, pgd_steps: int = 100, batch_size: int = 250) -> RobustAccuracy:
    """The robust accuracy of ``model`` on ``(x, y)`` at L∞ ``eps``.

    ``attack="autoattack"`` (default): standard AutoAttack (APGD-CE, APGD-T, FAB-T, Square; the ``autoattack``
    extra), seeded with ``seed``: the number RobustBench reports. ``"pgd"``: white-box PGD with ``pgd_steps``
    steps (step 2.5·eps/steps, random start; a weaker attack, name it so). An :class:`Attack` object is played
    against the static model (a one-round game). The model comes back as it was; x is not modified.
    """
    model = logits_model("model", model)
    check_images("x", x)
    yt = check_labels("y", y, x.shape[0], device=x.device, model=model, x=x)
    eps = check_eps(eps)
    check_seed("seed", seed)
    check_int("pgd_steps", pgd_steps, ge=1)
    check_int("batch_size", batch_size, ge=1)
    if isinstance(attack, str):
        if attack not in ROBUST_ATTACKS:
            raise ValueError(f"attack must be one of {list(ROBUST_ATTACKS)} or an Attack, got {attack!r}")
    elif not isinstance(attack, Attack):
        raise TypeError(f"attack must be one of {list(ROBUST_ATTACKS)} or an Attack, got {type(attack).__name__}")
    x = as_input(model, x)
    yt = yt.to(x.device)
    from robustsuite_common.models import forward_logits

    clean = (forward_logits(model, x, batch_size=batch_size).argmax(1) == yt).cpu().numpy()
    if attack == "autoattack":
        from robustsuite_common.autoattack import autoattack

        res = autoattack(model, x, yt, eps=eps, seed=seed, batch_size=batch_size)
        return RobustAccuracy(robust=res.robust.numpy().astype(bool), clean_correct=clean,
                              attack=f"standard AutoAttack ({res.attack})", eps=eps)
    from .game import play_game
    from .static import StaticDefense

    obj = TransferPGD(solver=PGD(steps=pgd_steps)) if attack == "pgd" else attack
    game = play_game(obj, StaticDefense(model), x, yt, eps=eps, batch_size=x.shape[0], seed=seed)
    name = f"white-box PGD, {pgd_steps} steps, seed {seed}" if attack == "pgd" else f"{obj!r}, seed {seed}"
    if isinstance(obj, TransferAutoAttack):
        name = f"{obj.description} (seed drawn from {seed})"
    return RobustAccuracy(robust=game.correct & clean, clean_correct=clean, attack=name, eps=eps)
