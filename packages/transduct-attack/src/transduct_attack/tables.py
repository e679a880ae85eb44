"""The table protocol every evaluation table of the paper shares: a defense against a set of attacks, static rows
beside it, on the same test points, with the referee's per-sample records and the intervals the paper's orderings
are read from.

:func:`defense_table` is that protocol (Tables 1-4 and 6 of Chen et al., ICLR 2022, §5 and appendix A): for each
seed, the static model (no transduction) under the static attacks in one batch and Γ under every attack in rounds
of ``batch_size``, on ``n`` points drawn from the seed (Tables 1, 2, 6: "random runs") or on the first ``n`` points
(Tables 3, 4: one batch). Each defense's recipe (appendix A.2-A.6) lives beside its part of the experiment:
:func:`~transduct_attack.experiment.rmc.rmc_table`, :func:`~transduct_attack.experiment.retraining.dann_table`,
:func:`~transduct_attack.experiment.retraining.tadv_table`, :func:`~transduct_attack.experiment.dent.dent_table`
and :func:`~transduct_attack.experiment.urejectron.urejectron_figure`.

``cells`` (a mutable mapping, e.g. a ``dict``) memoises the games by ``"{static|defense}-{attack}-s{seed}"``:
share one mapping between two calls on the same defense and points (Table 1 is the run-seed game of Table 6) and
each game is played once; a mapping backed by files makes a run resumable.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_images, check_int
from robustsuite_common.intervals import paired_difference, proportion, seed_interval

from ._validate import as_input, check_eps, check_labels, logits_model, n_classes
from .attacks import Attack, TransferAutoAttack
from .game import GameResult, merge_games, play_game
from .repeats import draw_points
from .static import StaticDefense
from .threat_model import ThreatModel, TransductiveDefense

__all__ = ["TableCell", "SeedSummary", "Comparison", "DefenseTable", "defense_table", "game_keys", "paired_comparison",
           "MODEL_SPACE_ATTACKS", "TABLE_ATTACKS"]

#: the attacks that use their knowledge of Γ (the paper's FPA and GMSA), compared against transfer PGD
MODEL_SPACE_ATTACKS = ("fpa", "gmsa-avg", "gmsa-min")
_ROLES = ("static", "defense")


@dataclass(frozen=True)
class TableCell:
    """One game of a table: ``role`` "static" (the model without transduction) or "defense" (Γ), the attack's
    table key, the seed, the referee's :class:`GameResult` and the test-split index of each game position."""

    role: str
    attack: str
    seed: int
    game: GameResult
    indices: tuple[int, ...]

    @property
    def accuracy(self) -> float:
        return float(self.game.accuracy)

    @property
    def k(self) -> int:
        """Correctly classified points (the count behind the accuracy and its interval)."""
        return int(self.game.correct.sum())

    @property
    def n(self) -> int:
        return int(self.game.n)

    @property
    def ci(self) -> tuple[float, float]:
        """95 % Clopper-Pearson interval of the accuracy."""
        return proportion(self.k, self.n).ci

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "attack": self.attack, "seed": self.seed, "accuracy": self.accuracy,
                "k": self.k, "n": self.n, "indices": list(self.indices), "game": self.game.to_dict()}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TableCell:
        return cls(role=d["role"], attack=d["attack"], seed=int(d["seed"]), game=GameResult.from_dict(d["game"]),
                   indices=tuple(int(i) for i in d["indices"]))


@dataclass(frozen=True)
class SeedSummary:
    """One row over seeds (Table 6): the mean accuracy with its Student-t interval over seeds (``None`` with
    fewer than three seeds), the standard deviation over seeds (ddof 1; 0 for one seed), and the pooled accuracy
    of all the seeds' points with its Clopper-Pearson interval."""

    seeds: tuple[int, ...]
    accuracies: tuple[float, ...]
    mean: float
    mean_ci_low: float | None
    mean_ci_high: float | None
    std: float
    k: int
    n: int
    pooled: float
    pooled_ci_low: float
    pooled_ci_high: float

    def to_dict(self) -> dict[str, Any]:
        return {"seeds": list(self.seeds), "accuracies": list(self.accuracies), "mean": self.mean,
                "mean_ci_low": self.mean_ci_low, "mean_ci_high": self.mean_ci_high, "std": self.std, "k": self.k,
                "n": self.n, "pooled": self.pooled, "pooled_ci_low": self.pooled_ci_low,
                "pooled_ci_high": self.pooled_ci_high}


@dataclass(frozen=True)
class Comparison:
    """The ordering the paper reports, read from the numbers: ``attack`` (the strongest of those compared)
    against ``reference`` on the same points. ``difference`` = value(reference) − value(attack) with its 95 %
    paired bootstrap interval (BCa, points resampled with their two outcomes); ``verdict`` "below" (the
    interval lies above 0), "above" (below 0) or "not separable from" (it contains 0)."""

    attack: str
    accuracy: float
    reference: str
    reference_accuracy: float
    verdict: str
    difference: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"attack": self.attack, "accuracy": self.accuracy, "reference": self.reference,
                "reference_accuracy": self.reference_accuracy, "verdict": self.verdict,
                "difference": self.difference, "ci_low": self.ci_low, "ci_high": self.ci_high}


def paired_comparison(attack: str, a: np.ndarray, reference: str, r: np.ndarray, *, seed: int = 0) -> Comparison:
    """:class:`Comparison` of the per-point outcomes ``a`` (under ``attack``) and ``r`` (under ``reference``) of the
    same points: the paired bootstrap interval of mean(r) − mean(a)."""
    a, r = np.asarray(a, dtype=np.float64), np.asarray(r, dtype=np.float64)
    iv = paired_difference(r, a, seed=seed, bounds=(-1.0, 1.0))
    verdict = "below" if iv.low > 0 else ("above" if iv.high < 0 else "not separable from")
    return Comparison(attack=attack, accuracy=float(a.mean()), reference=reference, reference_accuracy=float(r.mean()),
                      verdict=verdict, difference=float(iv.estimate), ci_low=float(iv.low), ci_high=float(iv.high))


@dataclass(frozen=True)
class DefenseTable:
    """A defense × attack table (:func:`defense_table`): every game as a :class:`TableCell`, in play order;
    ``static_model`` is the model of the static rows (e.g. the AT baseline :func:`tadv_table` trains; not
    serialised)."""

    defense: str
    eps: float
    n: int
    batch_size: int
    seeds: tuple[int, ...]
    cells: tuple[TableCell, ...]
    static_model: nn.Module | None = field(default=None, repr=False, compare=False)

    def cell(self, role: str, attack: str, seed: int | None = None) -> TableCell:
        """The game of ``role`` ("static" or "defense") under ``attack``, for ``seed`` (default: the first)."""
        s = self.seeds[0] if seed is None else int(seed)
        for c in self.cells:
            if (c.role, c.attack, c.seed) == (role, attack, s):
                return c
        raise KeyError(f"no {role!r} cell for attack {attack!r} and seed {s}")

    def attacks(self, role: str = "defense") -> tuple[str, ...]:
        """The attack keys of ``role``'s rows, in table order."""
        out: list[str] = []
        for c in self.cells:
            if c.role == role and c.attack not in out:
                out.append(c.attack)
        return tuple(out)

    def seeded(self, role: str, attack: str, *, seeds: Sequence[int] | None = None,
               boot_seed: int = 0) -> SeedSummary:
        """The row over ``seeds`` (default: all of the table's) of Table 6: mean, Student-t interval, std, pooled."""
        ss = tuple(self.seeds if seeds is None else (int(s) for s in seeds))
        cells = [self.cell(role, attack, s) for s in ss]
        accs = np.array([c.accuracy for c in cells], dtype=np.float64)
        iv = seed_interval(accs, bounds=(0.0, 1.0))
        mean, (lo, hi) = float(accs.mean()), ((None, None) if iv is None else iv.ci)
        sd = float(np.std(accs, ddof=1)) if len(accs) > 1 else 0.0
        k, n = sum(c.k for c in cells), sum(c.n for c in cells)
        plo, phi = proportion(k, n).ci
        return SeedSummary(seeds=ss, accuracies=tuple(float(a) for a in accs), mean=mean, mean_ci_low=lo,
                           mean_ci_high=hi, std=sd, k=k, n=n, pooled=k / n, pooled_ci_low=plo, pooled_ci_high=phi)

    def strongest(self, attacks: Sequence[str] = MODEL_SPACE_ATTACKS, seed: int | None = None) -> str:
        """The attack of ``attacks`` with the lowest accuracy of Γ (the first on ties)."""
        return min(attacks, key=lambda a: self.cell("defense", a, seed).accuracy)

    def compare(self, attacks: Sequence[str] = MODEL_SPACE_ATTACKS, reference: str = "pgd", *,
                seed: int | None = None, boot_seed: int = 0) -> Comparison:
        """The paper's claim "the model-space attacks break Γ where transfer PGD does not" (Tables 1, 3; §5):
        the strongest of ``attacks`` against ``reference`` on the same points, paired bootstrap of the
        per-sample records (below: the interval of acc(reference) − acc(attack) lies above 0)."""
        worst = self.strongest(attacks, seed)
        ref, low = self.cell("defense", reference, seed), self.cell("defense", worst, seed)
        return paired_comparison(worst, low.game.correct, reference, ref.game.correct, seed=boot_seed)

    def compare_pooled(self, attacks: Sequence[str] = ("gmsa-avg", "gmsa-min"), reference: str = "none", *,
                       seeds: Sequence[int] | None = None, boot_seed: int = 0) -> Comparison:
        """Table 6's reading: the attack of ``attacks`` with the lowest pooled accuracy over ``seeds`` against
        ``reference`` (Γ's clean accuracy) on the same points, paired bootstrap over all the seeds' points."""
        ss = tuple(self.seeds if seeds is None else (int(s) for s in seeds))

        def pooled(a: str) -> np.ndarray:
            return np.concatenate([self.cell("defense", a, s).game.correct for s in ss])

        worst = min(attacks, key=lambda a: float(pooled(a).mean()))
        return paired_comparison(worst, pooled(worst), reference, pooled(reference), seed=boot_seed)

    def compare_cells(self, attack: str, reference: str, *, role: str = "defense", reference_role: str = "defense",
                      seed: int | None = None, boot_seed: int = 0) -> Comparison:
        """Two cells on the same points (e.g. DENT-AA against the strongest PGD attack, Table 2; white-box PGD
        against AutoAttack on a static model), paired bootstrap of their per-point outcomes."""
        a, r = self.cell(role, attack, seed), self.cell(reference_role, reference, seed)
        if a.indices != r.indices:
            raise ValueError(f"cells {attack!r} and {reference!r} were played on different points")
        return paired_comparison(attack, a.game.correct, reference, r.game.correct, seed=boot_seed)

    def to_dict(self) -> dict[str, Any]:
        return {"defense": self.defense, "eps": self.eps, "n": self.n, "batch_size": self.batch_size,
                "seeds": list(self.seeds), "cells": [c.to_dict() for c in self.cells]}


def check_data(model: nn.Module | None, **named: torch.Tensor) -> None:
    """Images and labels named as the caller's arguments (``x_train=..., y_train=...``), labels against the
    model's classes; before any work."""
    if model is not None:
        model = logits_model("model", model)
    xs = {name: v for name, v in named.items() if name.startswith("x")}
    for name, v in xs.items():
        check_images(name, v)
    ys = {}
    for name, v in named.items():
        if name.startswith("y"):
            x = xs.get("x" + name[1:])
            ys[name] = check_labels(name, v, x.shape[0] if x is not None else len(v))
    if model is not None and xs and ys:
        k = n_classes(model, next(iter(xs.values())))  # one forward pass, after the checks that need none
        for name, v in ys.items():
            check_labels(name, v, len(v), n_classes=k)


def _check_seeds(seeds: Sequence[int]) -> tuple[int, ...]:
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Sequence) or not seeds:
        raise ValueError(f"seeds must be a non-empty sequence of ints, got {seeds!r}")
    if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) for s in seeds):
        raise TypeError(f"seeds must be ints, got {seeds!r}")
    return tuple(int(s) for s in seeds)


def defense_table(defense: TransductiveDefense | Callable[[int], TransductiveDefense], attacks: Mapping[str, Attack],
                  x: torch.Tensor, y: torch.Tensor, *, eps: float, n: int, batch_size: int,
                  seeds: Sequence[int] = (0,), draw: bool = True, static_model: nn.Module | None = None,
                  static_attacks: Sequence[str] = ("none", "pgd"), defense_attacks: Sequence[str] | None = None,
                  threat_model: ThreatModel | None = None, points_per_game: int | None = None,
                  split_attacks: Collection[str] = (), only: Collection[str] | None = None, progress: bool = False,
                  cells: MutableMapping[str, TableCell] | None = None) -> DefenseTable:
    """Play every attack of ``attacks`` against Γ and, when ``static_model`` is given, the attacks named in
    ``static_attacks`` against the static model (one batch of ``n``: the "static" rows of Tables 1-4), once per
    seed; ``defense_attacks`` (default: all) restricts Γ's rows to those keys. ``defense`` is Γ or a factory
    ``seed -> Γ`` (called once per seed that has a game to play: RMC's D' is built from the seed). Points:
    ``draw=True`` plays the ``n`` points :func:`draw_points` draws from the seed (the seeded runs of Tables 1, 2,
    6), ``draw=False`` the first ``n`` of (x, y) (Tables 3, 4). The seed is also the game's ``seed`` (the
    attacker's stream; Γ's private stream is its independent child).

    ``points_per_game`` (< ``n``) plays Γ's rows as independent games of that many consecutive points, each from
    Γ's initial state (memo keys ``"defense-<attack>-s<seed>-g<j>"``, seeded ``seed * 100003 + j``), pooled into
    one cell: the units of work a sharded run distributes. ``split_attacks`` plays the named rows of Γ as
    independent games of one batch each (same keys and seeds), so a long cell resumes batch by batch from its
    memo: valid only where nothing carries over between rounds (AutoAttack against a stateless Γ such as DENT).
    ``only`` (memo keys, see :func:`game_keys`) plays just those games and returns the cells available."""
    check_images("x", x)
    reference = static_model if static_model is not None else (
        defense.base_model if isinstance(defense, TransductiveDefense) else None)
    y = check_labels("y", y, x.shape[0], device=x.device, model=reference, x=x)
    if reference is not None:
        x = as_input(reference, x)
        y = y.to(x.device)
    eps = check_eps(eps)
    n = check_int("n", n, ge=1)
    batch_size = check_int("batch_size", batch_size, ge=1)
    if n > x.shape[0]:
        raise ValueError(f"n must be at most the number of test points ({x.shape[0]}), got {n}")
    seeds = _check_seeds(seeds)
    if not attacks or not all(isinstance(a, Attack) for a in attacks.values()):
        raise TypeError("attacks must be a non-empty mapping of table keys to transduct_attack Attacks")
    played = list(attacks) if defense_attacks is None else list(defense_attacks)
    for name, keys in (("static_attacks", static_attacks if static_model is not None else ()),
                       ("defense_attacks", played)):
        missing = [a for a in keys if a not in attacks]
        if missing:
            raise ValueError(f"{name} {missing} are not keys of attacks {list(attacks)}")
    if not (isinstance(defense, TransductiveDefense) or callable(defense)):
        raise TypeError("defense must be a TransductiveDefense or a callable seed -> TransductiveDefense")
    cells = {} if cells is None else cells
    built: dict[int, TransductiveDefense] = {}

    def gamma(s: int) -> TransductiveDefense:
        if s not in built:
            d = defense if isinstance(defense, TransductiveDefense) else defense(s)
            if not isinstance(d, TransductiveDefense):
                raise TypeError(f"defense({s}) must return a TransductiveDefense, got {type(d).__name__}")
            built[s] = d
        return built[s]

    chunk = n if points_per_game is None else min(check_int("points_per_game", points_per_game, ge=1), n)
    if isinstance(split_attacks, str) or not set(split_attacks) <= set(played):
        raise ValueError(f"split_attacks must name rows of Γ {played}, got {split_attacks!r}")
    out, name = [], ""
    static = StaticDefense(static_model) if static_model is not None else None

    def play(key: str, role: str, a: str, s: int, idx: torch.Tensor, b: int, game_seed: int) -> TableCell | None:
        if key not in cells:
            if only is not None and key not in only:
                return None
            twin = next((k for t in static_attacks if role == "static" and attacks[t] is attacks[a]
                         and (k := f"static-{t}-s{s}") in cells), None)
            if twin is not None:  # the same attack object under two static keys: one game, two rows
                cells[key] = replace(cells[twin], attack=a)
                return cells[key]
            d = static if role == "static" and static is not None else gamma(s)
            g = play_game(attacks[a], d, x[idx], y[idx], eps=eps, batch_size=b, seed=game_seed,
                          threat_model=threat_model, progress=progress)
            cells[key] = TableCell(role=role, attack=a, seed=s, game=g, indices=tuple(int(i) for i in idx.tolist()))
        return cells[key]

    for s in seeds:
        idx = draw_points(x.shape[0], n=n, seed=s, device=x.device) if draw else torch.arange(n, device=x.device)
        plays = [("static", a, n) for a in static_attacks] if static is not None else []
        for role, a, b in [*plays, *(("defense", a, batch_size) for a in played)]:
            key = f"{role}-{a}-s{s}"
            size = min(chunk, batch_size) if a in split_attacks else chunk
            if role == "static" or size >= n:
                cell = play(key, role, a, s, idx, b, s)
            elif key in cells:
                cell = cells[key]
            else:
                parts = [play(f"{key}-g{j}", role, a, s, idx[start:start + size], b, s * 100003 + j)
                         for j, start in enumerate(range(0, n, size))]
                done = [p for p in parts if p is not None]
                cell = None if len(done) < len(parts) else TableCell(
                    role=role, attack=a, seed=s, game=merge_games([p.game for p in done]),
                    indices=tuple(i for p in done for i in p.indices))
            if cell is None:
                continue
            out.append(cell)
            if role == "defense":
                name = cell.game.defense
    return DefenseTable(defense=name, eps=eps, n=n, batch_size=batch_size, seeds=seeds, cells=tuple(out),
                        static_model=static_model)


def game_keys(*, seeds: Sequence[int], n: int, static_attacks: Sequence[str] = ("none", "pgd"),
              defense_attacks: Sequence[str] = ("none", "pgd", *MODEL_SPACE_ATTACKS),
              points_per_game: int | None = None, split_attacks: Collection[str] = (),
              batch_size: int | None = None) -> list[str]:
    """The memo keys of the games :func:`defense_table` plays (static rows, then Γ's games, per seed), e.g. to
    share them out between shards (``only=``); ``split_attacks`` needs the table's ``batch_size``."""
    if split_attacks and batch_size is None:
        raise ValueError("split_attacks needs the table's batch_size")
    chunk = n if points_per_game is None else min(int(points_per_game), n)
    split = chunk if batch_size is None else min(chunk, int(batch_size))
    keys = []
    for s in seeds:
        keys += [f"static-{a}-s{s}" for a in static_attacks]
        for a in defense_attacks:
            size = split if a in split_attacks else chunk
            keys += ([f"defense-{a}-s{s}"] if size >= n else
                     [f"defense-{a}-s{s}-g{j}" for j in range(len(range(0, n, size)))])
    return keys


def check_selected(suite: Mapping[str, Attack], keys: Sequence[str]) -> None:
    unknown = [k for k in keys if k not in suite]
    if unknown or not keys:
        raise ValueError(f"attacks: unknown {unknown} or none; choose from {list(suite)}")


#: the rows of Γ in Tables 1, 3 and 4: clean, transfer PGD and the model-space attacks
TABLE_ATTACKS = ("none", "pgd", *MODEL_SPACE_ATTACKS)


def with_static(suite: dict[str, Attack], static_attacks: Sequence[str]) -> dict[str, Attack]:
    """``suite`` plus standard AutoAttack under the key "autoattack" when a static row asks for it: the suite's own
    standard AutoAttack object when it has one (then :func:`defense_table` plays that static game once for both
    rows), else a new one."""
    if "autoattack" in static_attacks and "autoattack" not in suite:
        standard = TransferAutoAttack()
        same = next((a for a in suite.values() if type(a) is TransferAutoAttack and vars(a) == vars(standard)), None)
        suite = {**suite, "autoattack": same or standard}
    return suite
