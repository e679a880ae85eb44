"""Per-sample attack losses L_a (paper §5, A.2–A.5 and A.3); larger means a stronger attack.

Each function maps logits (N, K) and labels (N,) to a (N,) tensor. Probabilities come from
``log_softmax`` so extreme logits never produce NaN/inf.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F

AttackLoss = Literal["ce", "cw", "cw-targeted"]
ATTACK_LOSSES: tuple[str, ...] = ("ce", "cw", "cw-targeted")

__all__ = ["AttackLoss", "ATTACK_LOSSES", "cross_entropy", "cw_untargeted", "cw_targeted",
           "max_wrong_probability", "attack_loss"]


def cross_entropy(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """-log f(x)_y (A.2: the loss of PGD, FPA and GMSA against RMC, DANN and TADV)."""
    return F.cross_entropy(logits, y, reduction="none")


def _max_other(values: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    masked = values.masked_fill(F.one_hot(y, values.shape[1]).bool(), float("-inf"))
    return masked.max(dim=1).values


def cw_untargeted(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """L_a^1 of A.3: -Z(x)_y + max_{k != y} Z(x)_k (Carlini & Wagner margin on logits)."""
    return _max_other(logits, y) - logits.gather(1, y[:, None])[:, 0]


def cw_targeted(logits: torch.Tensor, y: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """L_a^2 of A.3: -Z(x)_y + Z(x)_t for a target label t != y."""
    return logits.gather(1, target[:, None])[:, 0] - logits.gather(1, y[:, None])[:, 0]


def max_wrong_probability(logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """The selection loss of A.3: max_{k != y} f(x)_k, the confidence of the best wrong class."""
    return _max_other(F.log_softmax(logits, dim=1), y).exp()


def attack_loss(name: str, logits: torch.Tensor, y: torch.Tensor,
                target: torch.Tensor | None = None) -> torch.Tensor:
    """Dispatch by name (resolved once per attack call, not inside the PGD loop)."""
    if name == "ce":
        return cross_entropy(logits, y)
    if name == "cw":
        return cw_untargeted(logits, y)
    if name == "cw-targeted":
        if target is None:
            raise ValueError("loss 'cw-targeted' needs target labels")
        return cw_targeted(logits, y, target)
    raise ValueError(f"loss must be one of {ATTACK_LOSSES}, got {name!r}")
