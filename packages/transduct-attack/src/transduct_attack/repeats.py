"""Repeated games over seeds (the paper's Table 6 protocol: "mean and standard deviation ... over five random
runs"): each seed draws its own test sequence, its own defense (e.g. RMC's D') and its own game randomness."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from robustsuite_common.checks import check_device, check_images, check_int, check_seed

from ._validate import check_eps, check_labels
from .attacks import Attack
from .game import GameResult, play_game
from .threat_model import ThreatModel, TransductiveDefense

__all__ = ["SeededResult", "repeat_game", "draw_points"]


def draw_points(n_total: int, *, n: int, seed: int, device: torch.device | str = "cpu") -> torch.Tensor:
    """The ``n`` test indices a seeded run plays (a permutation of ``n_total`` from ``seed``, its first ``n``):
    the draw of :func:`repeat_game` and of the seeded tables (Table 6: each run its own test sequence).
    ``1 <= n <= n_total``, ``seed`` in ``[0, 2**63 - 1]`` and a ``device`` this machine has, else ``ValueError``."""
    n_total = check_int("n_total", n_total, ge=1)
    n = check_int("n", n, ge=1, le=n_total)
    seed = check_seed("seed", seed)
    device = check_device("device", device)
    return torch.randperm(n_total, generator=torch.Generator().manual_seed(seed))[:n].to(device)


@dataclass(frozen=True)
class SeededResult:
    """Referee accuracy per seed, their mean and standard deviation, and the Student-t 95 % interval of the mean
    over seeds (``None`` with fewer than three seeds: two values say nothing about the spread);
    ``games`` holds each seed's :class:`GameResult` (per-sample records) and ``indices`` the test points it drew."""

    attack: str
    defense: str
    seeds: tuple[int, ...]
    accuracies: tuple[float, ...]
    mean: float
    std: float
    ci_low: float | None
    ci_high: float | None
    games: tuple[GameResult, ...] = ()
    indices: tuple[tuple[int, ...], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"attack": self.attack, "defense": self.defense, "seeds": list(self.seeds),
                "accuracies": list(self.accuracies), "mean": self.mean, "std": self.std, "ci_low": self.ci_low,
                "ci_high": self.ci_high, "games": [g.to_dict() for g in self.games],
                "indices": [list(i) for i in self.indices]}


def repeat_game(attack: Attack, make_defense: Callable[[int], TransductiveDefense], x: torch.Tensor,
                y: torch.Tensor, *, eps: float, n: int, batch_size: int, seeds: Sequence[int],
                threat_model: ThreatModel | None = None) -> SeededResult:
    """Play ``attack`` against ``make_defense(seed)`` on ``n`` points drawn (without replacement, from ``seed``) from
    (x, y), once per seed; returns the spread over seeds (std with ddof=1, as a "± std" over runs).

    Paper: the RMC evaluation over seeds of Table 6.
    """
    check_images("x", x)
    y = check_labels("y", y, x.shape[0], device=x.device)
    eps = check_eps(eps)
    n = check_int("n", n, ge=1)
    if n > x.shape[0]:
        raise ValueError(f"n must be at most the number of test points ({x.shape[0]}), got {n}")
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds must be a non-empty sequence of ints")
    accs, name, games, drawn = [], "", [], []
    for s in seeds:
        idx = draw_points(x.shape[0], n=n, seed=s, device=x.device)
        defense = make_defense(s)
        res = play_game(attack, defense, x[idx], y[idx], eps=eps, batch_size=batch_size, seed=s,
                        threat_model=threat_model)
        accs.append(res.accuracy)
        games.append(res)
        drawn.append(tuple(int(i) for i in idx.tolist()))
        name = defense.name
    from robustsuite_common.intervals import seed_interval

    iv = seed_interval(np.asarray(accs), bounds=(0.0, 1.0))
    mean = float(np.mean(accs))
    lo, hi = (None, None) if iv is None else iv.ci
    std = float(np.std(accs, ddof=1)) if len(accs) > 1 else 0.0
    return SeededResult(attack=attack.name, defense=name, seeds=tuple(seeds), accuracies=tuple(accs), mean=mean,
                        std=std, ci_low=lo, ci_high=hi, games=tuple(games), indices=tuple(drawn))
