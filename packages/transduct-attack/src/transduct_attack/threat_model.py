"""The threat models of §4: transductive learners Γ, their adaptations, and the game's rules.

Vocabulary (paper §4):
- *defender* = (T, Γ): an optional base model F = T(D) trained at training time, and a transductive
  learner Γ that receives the perturbed test features U' and returns a model F* = Γ(F, D, U');
- *stateful* Γ (RMC) carries a state (its current model) from round to round; *stateless* Γ (DENT,
  DANN, TADV, URejectron) always starts from the training-time artefacts;
- *private randomness*: Γ's randomness is drawn after the attacker's move from a generator the
  attacker never sees (here: :func:`transduct_attack.play_game` creates it after the attack returns);
- *state leaking*: whether the attacker sees the defender's real intermediate state or must rely on
  its own simulation of Γ;
- *naturally / adversarially ordered*: whether batches reach Γ in the order the data arrived or in an
  order the attacker chooses after pooling many test points (A.7).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from torch import nn

from robustsuite_common.checks import check_choice, check_int

__all__ = ["Adaptation", "TransductiveDefense", "ThreatModel", "AttackResult", "Order", "label_order"]

Order = Literal["natural", "adversarial"]


@dataclass(frozen=True, eq=False)
class Adaptation:
    """What Γ returns for one batch: the adapted model F*, the next state, an optional acceptance set S.

    ``model`` maps the batch it was adapted on to logits (DENT's model is position-aware and only
    accepts a batch of that size). ``acceptor`` (URejectron) maps inputs to a boolean mask of points
    inside S; ``None`` means every point is accepted.
    """

    model: nn.Module
    state: Any = None
    acceptor: Callable[[torch.Tensor], torch.Tensor] | None = None
    #: a rejecting Γ's score behind ``acceptor`` (URejectron: log P(test | x); accepted iff score < log τ)
    scorer: Callable[[torch.Tensor], torch.Tensor] | None = None

    def __post_init__(self) -> None:
        from robustsuite_common.models import check_model

        from ._validate import LogitsModel

        check_model("model", self.model)
        if not isinstance(self.model, LogitsModel):  # any output form read as logits
            wrapped = LogitsModel(self.model)
            wrapped.position_aware = getattr(self.model, "position_aware", False)  # pyright: ignore[reportArgumentType]
            object.__setattr__(self, "model", wrapped)

    def predict(self, x: torch.Tensor) -> torch.Tensor:
        """Labels F*(x)."""
        with torch.no_grad():
            return self.model(x).argmax(dim=1)

    def accepts(self, x: torch.Tensor) -> torch.Tensor:
        """Boolean mask of points of ``x`` inside S (all True without rejection)."""
        if self.acceptor is None:
            return torch.ones(x.shape[0], dtype=torch.bool, device=x.device)
        with torch.no_grad():
            return self.acceptor(x).bool()


class TransductiveDefense(ABC):
    """A transductive learner Γ over a base model (Definition 1).

    Subclasses implement :meth:`adapt`, which must not mutate its inputs or ``state`` and must draw all
    of its randomness from ``generator`` (the private randomness of the round). The attacker knows the
    mechanism, the training data and the initial state (the pretrained model), never the generator.
    """

    #: a stateful Γ adapts from the state left by the previous round (RMC)
    stateful: bool = False
    #: a rejecting Γ returns an acceptance set S (URejectron); the referee then scores Eq. 1
    rejects: bool = False
    #: short name used in tables
    name: str = "Γ"

    #: the base model; a subclass sets it in ``__init__`` (or overrides :attr:`base_model`)
    _base: nn.Module

    @property
    def base_model(self) -> nn.Module:
        """The static base model F = T(D), known to the attacker (target of transfer attacks)."""
        try:
            return self._base
        except AttributeError:
            raise NotImplementedError(f"{type(self).__name__} must set self._base in __init__ or override "
                                      "base_model") from None

    def initial_state(self) -> Any:
        """State before the first round (for stateful Γ: the pretrained model); public knowledge."""
        return None

    def model_of(self, state: Any) -> nn.Module:
        """The model a state stands for: F^(0) of the attacks (base model for a stateless Γ)."""
        if self.stateful and state is not None:
            return state
        return self.base_model

    @abstractmethod
    def adapt(self, x: torch.Tensor, *, state: Any, generator: torch.Generator) -> Adaptation:
        """Run Γ on the unlabeled batch ``x`` (U') from ``state`` with randomness ``generator``."""

    def next_state(self, adaptation: Adaptation, *, generator: torch.Generator) -> Any:
        """The state a stateful Γ carries into the next round after ``adaptation`` (default: its ``state``;
        RMC calibrates it). The game calls it once per round, for the defender with its private generator and
        for a non-leaking attacker's own simulation with the attacker's."""
        return adaptation.state

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def label_order(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """A.7's worst-case order: sort the pooled test points by label, lowest first (stable)."""
    from robustsuite_common.checks import check_images

    from ._validate import check_labels

    check_images("x", x)
    y = check_labels("y", y, x.shape[0], device=x.device)
    return torch.sort(y, stable=True).indices


@dataclass(frozen=True)
class ThreatModel:
    """Rules of a (multi-round) game, §4.

    - ``leak_state``: the attacker sees the defender's real state at each round (state leaking) or only
      its own simulated state (non-leaking; the paper's setting, more favourable to the defender);
    - ``order``: ``"natural"`` sends batches in arrival order; ``"adversarial"`` lets the attacker pool
      ``pool_size`` clean test points and order them with ``orderer(x, y)`` (default :func:`label_order`,
      A.7); each round the attacker then perturbs the next batch of that order and the defender receives
      exactly that perturbed batch.
    """

    leak_state: bool = False
    order: Order = "natural"
    pool_size: int = 256
    orderer: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = field(default=label_order, compare=False)

    def __post_init__(self) -> None:
        check_choice("order", self.order, ("natural", "adversarial"))
        check_int("pool_size", self.pool_size, ge=1)
        if not isinstance(self.leak_state, bool):
            raise TypeError(f"leak_state must be a bool, got {type(self.leak_state).__name__}")
        if not callable(self.orderer):
            raise TypeError("orderer must be callable (x, y) -> permutation")

    def to_dict(self) -> dict[str, Any]:
        return {"leak_state": self.leak_state, "order": self.order, "pool_size": self.pool_size,
                "orderer": getattr(self.orderer, "__name__", type(self.orderer).__name__)}


@dataclass(frozen=True, eq=False)
class AttackResult:
    """What an attack returns for one clean batch V.

    ``x_adv`` is U' (same shape as the clean batch, inside the eps-ball). For FPA/GMSA,
    ``round_errors[i]`` is the error of F^(i+1) = Γ(U^(i)) on V^(i) in the attacker's own simulation,
    ``selected_round`` is k of line 5, and ``adaptation`` is the simulated Γ(U^(k)) — the attacker's
    own state in a non-leaking multi-round game.
    """

    x_adv: torch.Tensor
    attack: str
    selected_round: int | None = None
    round_errors: tuple[float, ...] = ()
    adaptation: Adaptation | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"attack": self.attack, "n": int(self.x_adv.shape[0]), "selected_round": self.selected_round,
                "round_errors": [float(e) for e in self.round_errors]}
