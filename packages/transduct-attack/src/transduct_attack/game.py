"""The game runner: plays an attack against a transductive defense under a threat model (§4).

Round r (one batch of the test stream):
1. the attacker receives the clean batch V_r and its view of Γ's state — the defender's real state
   when the threat model leaks state, otherwise its own simulated state — and returns U'_r;
2. the referee checks that U'_r respects the agreed perturbation (L∞ ball of radius eps, [0, 1]);
3. only now is the defender's private generator for the round created, from a seed stream the
   attacker never receives, and Γ adapts: F*_r = Γ(state_r, U'_r);
4. the referee scores F*_r on (U'_r, y_r) (plus Eq. 1 for a rejecting Γ); a stateful Γ keeps its state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from robustsuite_common.checks import check_images, check_int, check_same_setting, check_seed

from ._validate import as_input, check_eps, check_labels
from .attacks import Attack
from .referee import RoundScore, score_round
from .threat_model import Adaptation, ThreatModel, TransductiveDefense

__all__ = ["GameResult", "RoundRecord", "play_game", "merge_games"]

_TOL = 1e-5


@dataclass(frozen=True)
class GameResult:
    """Per-round referee scores and their pooled values (weighted by batch size)."""

    attack: str
    defense: str
    eps: float
    threat_model: dict[str, Any]
    rounds: tuple[RoundScore, ...]
    accuracy: float
    error_accepted: float | None
    rejection_rate: float | None
    selected_rounds: tuple[int | None, ...]
    #: index into the test stream of each scored point, in the order the rounds were played
    order: tuple[int, ...] = ()

    @property
    def n(self) -> int:
        return sum(r.n for r in self.rounds)

    @property
    def correct(self) -> np.ndarray:
        """Per-sample correctness F*(x'_i) = y_i, indexed like the test stream (boolean array of length n)."""
        played = np.array([c for r in self.rounds for c in r.correct], dtype=bool)
        out = np.zeros(len(played), dtype=bool)
        out[np.asarray(self.order, dtype=np.int64)] = played
        return out

    @property
    def predictions(self) -> np.ndarray:
        """Per-sample prediction F*(x'_i) of the adapted model, indexed like the test stream (int64, length n)."""
        played = np.array([c for r in self.rounds for c in r.predictions], dtype=np.int64)
        out = np.zeros(len(played), dtype=np.int64)
        out[np.asarray(self.order, dtype=np.int64)] = played
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"attack": self.attack, "defense": self.defense, "eps": self.eps,
                "threat_model": dict(self.threat_model), "n": self.n, "accuracy": self.accuracy,
                "error_accepted": self.error_accepted, "rejection_rate": self.rejection_rate,
                "selected_rounds": list(self.selected_rounds), "order": list(self.order),
                "rounds": [r.to_dict() for r in self.rounds]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GameResult:
        """The inverse of :meth:`to_dict` (e.g. to resume from a checkpointed game)."""
        return cls(attack=d["attack"], defense=d["defense"], eps=float(d["eps"]),
                   threat_model=dict(d["threat_model"]), rounds=tuple(RoundScore.from_dict(r) for r in d["rounds"]),
                   accuracy=float(d["accuracy"]), error_accepted=d["error_accepted"],
                   rejection_rate=d["rejection_rate"], selected_rounds=tuple(d["selected_rounds"]),
                   order=tuple(int(i) for i in d["order"]))


@dataclass(frozen=True, eq=False)
class RoundRecord:
    """What happened in one round: the clean batch U, the attacker's U' (exactly what Γ received), the labels,
    the indices into the test stream, and Γ's adaptation."""

    round: int
    indices: torch.Tensor
    x_clean: torch.Tensor
    x_adv: torch.Tensor
    y: torch.Tensor
    adaptation: Adaptation


def _generator(seq: np.random.SeedSequence, device: torch.device) -> torch.Generator:
    g = torch.Generator(device=device if device.type == "cuda" else "cpu")
    g.manual_seed(int(seq.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1)))
    return g


def _pooled(values: Sequence[float | None], weights: list[int]) -> float | None:
    if any(v is None for v in values) or not values:
        return None
    return float(np.average(np.asarray(values, dtype=np.float64), weights=np.asarray(weights, dtype=np.float64)))


def _pooled_accuracy(values: list[float], weights: list[int]) -> float:
    """The accuracy over rounds (each round has one), weighted by their points."""
    pooled = _pooled(values, weights)
    if pooled is None:
        raise ValueError("no rounds to pool")
    return pooled


def play_game(attack: Attack, defense: TransductiveDefense, x: torch.Tensor, y: torch.Tensor, *,
              eps: float, batch_size: int, threat_model: ThreatModel | None = None, seed: int = 0,
              defender_seed: int | None = None, progress: bool = False,
              observer: Callable[[RoundRecord], None] | None = None) -> GameResult:
    """Play ``attack`` against ``defense`` on the test stream (x, y), ``batch_size`` points per round.

    ``seed`` drives the attacker's generator; the defender's private generators come from
    ``defender_seed`` (default: an independent child of ``seed``) and are created after each attack
    returns, so the attacker's output can never depend on them. Inputs are not mutated. ``observer`` (if
    given) receives a :class:`RoundRecord` after each round (e.g. for threshold sweeps of a rejecting Γ).

    Paper: the attacker-defender game of §4 (threat models for transductive defenses).
    """
    if not isinstance(attack, Attack):
        raise TypeError(f"attack must be a transduct_attack Attack, got {type(attack).__name__}")
    if not isinstance(defense, TransductiveDefense):
        raise TypeError(f"defense must be a TransductiveDefense, got {type(defense).__name__}")
    check_images("x", x)
    y = check_labels("y", y, x.shape[0], device=x.device, model=defense.base_model, x=x)
    eps = check_eps(eps)
    batch_size = check_int("batch_size", batch_size, ge=1)
    x = as_input(defense.base_model, x)
    y = y.to(x.device)
    threat_model = ThreatModel() if threat_model is None else threat_model
    if not isinstance(threat_model, ThreatModel):
        raise TypeError("threat_model must be a ThreatModel")
    seed = check_seed("seed", seed)
    defender_seed = None if defender_seed is None else check_seed("defender_seed", defender_seed)

    device = x.device
    attacker_seeds, derived_defender = np.random.SeedSequence(seed).spawn(2)
    defender_seeds = (np.random.SeedSequence(defender_seed) if defender_seed is not None else derived_defender)
    defender_state = defense.initial_state()
    attacker_state = defense.initial_state()  # public: the pretrained model is known to the attacker

    # The rounds, as index tensors into (x, y). Adversarial order (A.7): the attacker pools ``pool_size`` clean
    # points and chooses their order (``orderer``) before the stream starts; each round it then perturbs one
    # batch of that order, and the defender receives exactly the batch the attacker returned.
    n = x.shape[0]
    if threat_model.order == "adversarial":
        rounds: list[torch.Tensor] = []
        for start in range(0, n, threat_model.pool_size):
            pool_idx = torch.arange(start, min(start + threat_model.pool_size, n), device=device)
            perm = threat_model.orderer(x[pool_idx], y[pool_idx]).to(device)
            if sorted(perm.tolist()) != list(range(pool_idx.shape[0])):
                raise ValueError("orderer must return a permutation of the pooled batch")
            ordered = pool_idx[perm]
            rounds += [ordered[i:i + batch_size] for i in range(0, ordered.shape[0], batch_size)]
    else:
        rounds = [torch.arange(i, min(i + batch_size, n), device=device) for i in range(0, n, batch_size)]

    scores: list[RoundScore] = []
    selected: list[int | None] = []
    iterator = rounds
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(rounds, desc=f"{attack.name} vs {defense.name}")
    for round_index, idx in enumerate(iterator):
        xb, yb = x[idx], y[idx]
        view = defender_state if threat_model.leak_state else attacker_state
        attacker_generator = _generator(attacker_seeds.spawn(1)[0], device)
        result = attack(xb, yb, eps=eps, defense=defense, generator=attacker_generator, state=view)
        x_adv = result.x_adv.detach()
        if x_adv.shape != xb.shape:
            raise ValueError(f"attack returned shape {tuple(x_adv.shape)}, expected {tuple(xb.shape)}")
        if float((x_adv - xb).abs().max()) > eps + _TOL or float(x_adv.min()) < -_TOL or float(x_adv.max()) > 1 + _TOL:
            raise ValueError(f"attack {attack.name!r} left the agreed L∞ ball of radius {eps} or [0, 1]")
        if defense.stateful and not threat_model.leak_state and result.adaptation is not None:
            # the attacker's own simulation of Γ (RMC: calibrated with the attacker's randomness)
            attacker_state = defense.next_state(result.adaptation, generator=attacker_generator)
        # private randomness: created only after the attacker has committed to U'
        private = _generator(defender_seeds.spawn(1)[0], device)
        adaptation = defense.adapt(x_adv, state=defender_state, generator=private)
        if defense.stateful:
            defender_state = defense.next_state(adaptation, generator=private)
        scores.append(score_round(adaptation, x_adv, yb, x_clean=xb, rejects=defense.rejects, round_index=round_index))
        if observer is not None:
            observer(RoundRecord(round=round_index, indices=idx, x_clean=xb, x_adv=x_adv, y=yb,
                                 adaptation=adaptation))
        selected.append(result.selected_round)

    weights = [s.n for s in scores]
    return GameResult(
        attack=attack.name, defense=defense.name, eps=eps, threat_model=threat_model.to_dict(),
        rounds=tuple(scores), accuracy=_pooled_accuracy([s.accuracy for s in scores], weights),
        error_accepted=_pooled([s.error_accepted for s in scores], weights),
        rejection_rate=_pooled([s.rejection_rate for s in scores], weights),
        selected_rounds=tuple(selected), order=tuple(int(i) for r in rounds for i in r.tolist()),
    )


def merge_games(games: list[GameResult]) -> GameResult:
    """Independent games on consecutive parts of one test stream, as one :class:`GameResult` over the whole
    stream (rounds renumbered in play order, per-sample records in stream order, pooled values by batch size)."""
    if not games:
        raise ValueError("games must hold at least one GameResult")
    if not all(isinstance(g, GameResult) for g in games):
        raise TypeError("games must hold GameResult objects only")
    check_same_setting({f"games[{i}]": g for i, g in enumerate(games)}, ("eps", "attack", "defense", "threat_model"))
    if len(games) == 1:
        return games[0]
    rounds, order, selected, offset = [], [], [], 0
    for g in games:
        for r in g.rounds:
            rounds.append(RoundScore.from_dict({**r.to_dict(), "round": len(rounds)}))
        order += [offset + i for i in g.order]
        selected += list(g.selected_rounds)
        offset += g.n
    weights = [r.n for r in rounds]
    first = games[0]
    return GameResult(attack=first.attack, defense=first.defense, eps=first.eps, threat_model=first.threat_model,
                      rounds=tuple(rounds), accuracy=_pooled_accuracy([r.accuracy for r in rounds], weights),
                      error_accepted=_pooled([r.error_accepted for r in rounds], weights),
                      rejection_rate=_pooled([r.rejection_rate for r in rounds], weights),
                      selected_rounds=tuple(selected), order=tuple(order))
