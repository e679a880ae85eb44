"""The paper's evaluation tables as functions: a defense against a set of attacks, static rows beside it, on the
same test points, with the referee's per-sample records and the intervals the paper's orderings are read from.

:func:`defense_table` is the protocol every table shares (Tables 1-4 and 6 of Chen et al., ICLR 2022, §5 and
appendix A): for each seed, the static model (no transduction) under the static attacks in one batch and Γ under
every attack in rounds of ``batch_size``, on ``n`` points drawn from the seed (Tables 1, 2, 6: "random runs") or
on the first ``n`` points (Tables 3, 4: one batch). :func:`rmc_table`, :func:`dann_table`, :func:`tadv_table` and
:func:`dent_table` build each defense with the paper's recipe (appendix A.2-A.5; every value a keyword, the
defaults the paper's MNIST ones) and play it; :func:`dent_adaptation` measures how far DENT adapts on the clean
stream of Table 2, :func:`urejectron_figure` is Figure 1 (URejectron against the threshold τ).

``cells`` (a mutable mapping, e.g. a ``dict``) memoises the games by ``"{static|defense}-{attack}-s{seed}"``:
share one mapping between two calls on the same defense and points (Table 1 is the run-seed game of Table 6) and
each game is played once; a mapping backed by files makes a run resumable.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_choice, check_images, check_int
from robustsuite_common.intervals import paired_difference, proportion, seed_interval

from ._validate import as_input, check_eps, check_labels, logits_model, n_classes
from .attacks import AdaptiveAutoAttack, Attack, TransferAutoAttack, TransferPGD
from .dann import DANN
from .dent import DENT
from .game import GameResult, merge_games, play_game
from .model_space import GMSA, attack_suite
from .networks import BNCNN, MLP, DomainAdversarialNet, SmallCNN, build
from .pgd import PGD, PGDEnsemble
from .repeats import draw_points
from .rmc import RMC
from .static import StaticDefense
from .tadv import TADV
from .threat_model import ThreatModel, TransductiveDefense
from .training import train_classifier
from .urejectron import RejectionCurve, URejectron, rejection_curve

__all__ = ["TableCell", "SeedSummary", "Comparison", "DefenseTable", "defense_table", "rmc_table",
           "dann_table", "tadv_table", "dent_base_model", "dent_table", "DentAdaptation", "dent_adaptation",
           "URejectronFigure", "urejectron_figure", "MODEL_SPACE_ATTACKS"]

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


def _check_data(model: nn.Module | None, **named: torch.Tensor) -> None:
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
                  only: Collection[str] | None = None, progress: bool = False,
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
    one cell: the units of work a sharded run distributes. ``only`` (a collection of memo keys, see
    :func:`game_keys`) plays just those games and returns the cells that are available (a partial table)."""
    check_images("x", x)
    reference = static_model if static_model is not None else (
        defense.base_model if isinstance(defense, TransductiveDefense) else None)
    y = check_labels("y", y, x.shape[0], device=x.device,
                     model=reference, x=x)
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
    out, name = [], ""
    static = StaticDefense(static_model) if static_model is not None else None

    def play(key: str, role: str, a: str, s: int, idx: torch.Tensor, b: int, game_seed: int) -> TableCell | None:
        if key not in cells:
            if only is not None and key not in only:
                return None
            d = static if role == "static" else gamma(s)
            g = play_game(attacks[a], d, x[idx], y[idx], eps=eps, batch_size=b, seed=game_seed,
                          threat_model=threat_model, progress=progress)
            cells[key] = TableCell(role=role, attack=a, seed=s, game=g, indices=tuple(int(i) for i in idx.tolist()))
        return cells[key]

    for s in seeds:
        idx = draw_points(x.shape[0], n, s, x.device) if draw else torch.arange(n, device=x.device)
        plays = [("static", a, n) for a in static_attacks] if static is not None else []
        for role, a, b in [*plays, *(("defense", a, batch_size) for a in played)]:
            key = f"{role}-{a}-s{s}"
            if role == "static" or chunk >= n:
                cell = play(key, role, a, s, idx, b, s)
            elif key in cells:
                cell = cells[key]
            else:
                parts = [play(f"{key}-g{j}", role, a, s, idx[start:start + chunk], b, s * 100003 + j)
                         for j, start in enumerate(range(0, n, chunk))]
                cell = None if any(p is None for p in parts) else TableCell(
                    role=role, attack=a, seed=s, game=merge_games([p.game for p in parts]),
                    indices=tuple(i for p in parts for i in p.indices))
            if cell is None:
                continue
            out.append(cell)
            if role == "defense":
                name = cell.game.defense
    return DefenseTable(defense=name, eps=eps, n=n, batch_size=batch_size, seeds=seeds, cells=tuple(out),
                        static_model=static_model)


def game_keys(*, seeds: Sequence[int], n: int, static_attacks: Sequence[str] = ("none", "pgd"),
              defense_attacks: Sequence[str] = ("none", "pgd", *MODEL_SPACE_ATTACKS),
              points_per_game: int | None = None) -> list[str]:
    """The memo keys of the games :func:`defense_table` plays (static rows, then Γ's games, per seed), e.g. to
    share them out between shards (``only=``)."""
    chunk = n if points_per_game is None else min(int(points_per_game), n)
    keys = []
    for s in seeds:
        keys += [f"static-{a}-s{s}" for a in static_attacks]
        for a in defense_attacks:
            keys += ([f"defense-{a}-s{s}"] if chunk >= n else
                     [f"defense-{a}-s{s}-g{j}" for j in range(len(range(0, n, chunk)))])
    return keys


def _select(suite: Mapping[str, Attack], keys: Sequence[str]) -> None:
    unknown = [k for k in keys if k not in suite]
    if unknown or not keys:
        raise ValueError(f"attacks: unknown {unknown} or none; choose from {list(suite)}")


_TABLE_ATTACKS = ("none", "pgd", *MODEL_SPACE_ATTACKS)


def _with_static(suite: dict[str, Attack], static_attacks: Sequence[str]) -> dict[str, Attack]:
    """``suite`` plus standard AutoAttack under the key "autoattack" when a static row asks for it."""
    if "autoattack" in static_attacks and "autoattack" not in suite:
        suite = {**suite, "autoattack": TransferAutoAttack()}
    return suite


def rmc_table(model: nn.Module, x_train: torch.Tensor, y_train: torch.Tensor, x_test: torch.Tensor,
              y_test: torch.Tensor, *, eps: float = 0.3, n: int = 1000, batch_size: int = 1, k: int = 1024,
              lr: float = 2e-4, epochs: int = 100, patience: int = 5, aug_step_size: float | None = None,
              aug_steps: int | None = None, adv_copies: int = 1, calibration_points: int = 0, T: int = 9,
              pgd_steps: int = 100, seeds: Sequence[int] = (0,), attacks: Sequence[str] = _TABLE_ATTACKS,
              static_attacks: Sequence[str] = ("none", "pgd"), points_per_game: int | None = None,
              rmc_options: Mapping[str, Any] | None = None, prepare: Callable[[RMC, int], None] | None = None,
              only: Collection[str] | None = None,
              progress: bool = False, cells: MutableMapping[str, TableCell] | None = None) -> DefenseTable:
    """Tables 1 and 6: RMC (A.2) over ``model`` with D = (x_train, y_train) and D' = D ∪ PGD(D) (PGD
    ``pgd_steps`` steps at ``eps``, ``aug_step_size`` None: 2.5·eps/steps, the paper 0.01), fine-tuned with
    Adam at ``lr`` for at most ``epochs`` epochs (``patience``) on the K = ``k`` nearest neighbours, built once
    per seed; ``n`` points drawn per seed in rounds of ``batch_size`` (the paper: 1), the stateful non-leaking
    game, FPA/GMSA with ``T`` iterations; Γ's rows: ``attacks`` (Table 6: none, GMSA-AVG, GMSA-MIN).
    ``calibration_points`` > 0 first warms RMC up on that many clean points that follow the seed's draw in its
    permutation (never scored, :meth:`RMC.warm_up`). ``rmc_options`` go to :class:`RMC` (the authors' recipe:
    ``{"val_split": "nearest", "stop_rule": "authors", "train_batchnorm": True, "calibration_k": 1024}``).
    ``prepare(rmc, seed)`` runs on each RMC built (e.g. to load a checkpointed D' with :meth:`RMC.set_augmented`).
    ``points_per_game`` splits each seed's points into independent games of that many points (each from the
    initial state; a unit of work each). Static rows: ``model`` under ``static_attacks`` ("pgd": white-box PGD,
    "autoattack": standard AutoAttack). Defaults: the paper's MNIST values (eps 0.3, K 1024, lr 2e-4, 100
    epochs, patience 5, T 9, PGD 100 steps)."""
    _check_data(model, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    n = check_int("n", n, ge=1)
    calibration_points = check_int("calibration_points", calibration_points, ge=0)
    if n + calibration_points > x_test.shape[0]:
        raise ValueError(f"n + calibration_points must be at most {x_test.shape[0]}, got {n + calibration_points}")
    suite = _with_static(attack_suite(steps=pgd_steps, T=T), static_attacks)
    _select(suite, attacks)
    options = dict(rmc_options or {})

    def make(s: int) -> RMC:
        rmc = RMC(model, x_train, y_train, k=k, aug_eps=eps, aug_steps=pgd_steps if aug_steps is None else aug_steps,
                  aug_step_size=aug_step_size, adv_copies=adv_copies, lr=lr, max_epochs=epochs, patience=patience,
                  seed=s, **options)
        if prepare is not None:
            prepare(rmc, s)
        if calibration_points > 0:  # clean points outside the seed's draw (same permutation), never scored
            perm = torch.randperm(x_test.shape[0], generator=torch.Generator().manual_seed(s))
            rmc.warm_up(x_test[perm[n:n + calibration_points].to(x_test.device)], batch_size=batch_size, seed=s)
        return rmc

    return defense_table(make, suite, x_test, y_test, eps=eps, n=n, batch_size=batch_size, seeds=seeds, draw=True,
                         static_model=model, static_attacks=static_attacks, defense_attacks=attacks,
                         points_per_game=points_per_game, only=only, progress=progress, cells=cells)


def dann_table(base_model: nn.Module, x_train: torch.Tensor, y_train: torch.Tensor, x_test: torch.Tensor,
               y_test: torch.Tensor, *, eps: float = 0.3, n: int = 10_000, epochs: int = 100, lr: float = 1e-3,
               alpha_max: float = 0.1, width: int = 16, T: int = 9, pgd_steps: int = 100, seed: int = 0,
               static_attacks: Sequence[str] = ("none", "pgd"), progress: bool = False,
               cells: MutableMapping[str, TableCell] | None = None) -> DefenseTable:
    """Table 3: DANN (A.4) trained from scratch on D = (x_train, y_train) and the perturbed batch, a
    :class:`~transduct_attack.networks.DomainAdversarialNet` of ``width`` (Adam ``lr``, ``epochs``, α_max),
    ``base_model`` the standard model (transfer target, F^(0)); the first ``n`` test points in one batch;
    static rows: ``base_model``. Defaults: the paper's MNIST values (10,000 points, 100 epochs, α_max 0.1)."""
    _check_data(base_model, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    c, hw, kk = x_train.shape[1], tuple(x_train.shape[-2:]), int(y_train.max()) + 1
    dann = DANN(x_train, y_train, base_model=base_model, epochs=epochs, lr=lr, alpha_max=alpha_max,
                make_network=lambda g: build(lambda: DomainAdversarialNet(
                    in_channels=c, n_classes=kk, image_size=hw, width=width), g, device=x_train.device))
    return defense_table(dann, _with_static(attack_suite(steps=pgd_steps, T=T), static_attacks), x_test, y_test,
                         eps=eps, n=n, batch_size=n, seeds=(seed,), draw=False, static_model=base_model,
                         static_attacks=static_attacks, defense_attacks=_TABLE_ATTACKS, progress=progress,
                         cells=cells)


def tadv_table(x_train: torch.Tensor, y_train: torch.Tensor, x_test: torch.Tensor, y_test: torch.Tensor, *,
               eps: float = 0.3, n: int = 10_000, epochs: int = 100, adv_steps: int = 40, hidden: int = 64,
               T: int = 9, pgd_steps: int = 100, seed: int = 0, static_attacks: Sequence[str] = ("none", "pgd"),
               progress: bool = False, cells: MutableMapping[str, TableCell] | None = None) -> DefenseTable:
    """Table 4: TADV (A.5) against static adversarial training of the same architecture, an
    :class:`~transduct_attack.networks.MLP` of ``hidden`` units: the static baseline is trained on D with TADV's
    own recipe (``epochs``, PGD ``adv_steps`` at ``eps``, 50 % clean) from ``seed``, TADV retrains it from scratch
    on each batch; the first ``n`` test points in one batch. Defaults: the paper's MNIST values (eps 0.3, 100
    epochs, PGD 40 steps, T 9)."""
    _check_data(None, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    hidden, kk = check_int("hidden", hidden, ge=1), int(y_train.max()) + 1
    features = int(x_train[0].numel())

    def make_mlp(g: torch.Generator) -> nn.Module:
        return build(lambda: MLP(in_features=features, n_classes=kk, hidden=hidden), g, device=x_train.device)

    gen = torch.Generator().manual_seed(int(seed))
    static_at = train_classifier(make_mlp(gen), x_train, y_train, epochs=epochs, generator=gen,
                                 adversarial_eps=eps, adv_steps=adv_steps)
    tadv = TADV(x_train, y_train, base_model=static_at, eps=eps, epochs=epochs, adv_steps=adv_steps,
                make_model=make_mlp)
    return defense_table(tadv, _with_static(attack_suite(steps=pgd_steps, T=T), static_attacks), x_test, y_test,
                         eps=eps, n=n, batch_size=n, seeds=(seed,), draw=False, static_model=static_at,
                         static_attacks=static_attacks, defense_attacks=_TABLE_ATTACKS, progress=progress,
                         cells=cells)


def dent_base_model(x_train: torch.Tensor, y_train: torch.Tensor, *, eps: float, epochs: int, adv_steps: int = 40,
                    seed: int = 0, architecture: str = "small-cnn", width: int = 16) -> nn.Module:
    """The adversarially trained BatchNorm CNN that DENT adapts in the Table 2 analogue (the paper uses
    RobustBench's CIFAR-10 AT models): ``architecture="small-cnn"`` (a
    :class:`~transduct_attack.networks.SmallCNN`, BatchNorm after its two convolutions) or ``"bn-every-conv"``
    (a :class:`~transduct_attack.networks.BNCNN`: six convolutions, BatchNorm after each), trained from ``seed`` on
    (x_train, y_train) with 50 % clean / 50 % PGD (``adv_steps`` steps at ``eps``)."""
    _check_data(None, x_train=x_train, y_train=y_train)
    check_choice("architecture", architecture, ("small-cnn", "bn-every-conv"))
    gen = torch.Generator().manual_seed(int(seed))
    c, k = x_train.shape[1], int(y_train.max()) + 1
    if architecture == "bn-every-conv":
        net = build(lambda: BNCNN(in_channels=c, n_classes=k, width=check_int("width", width, ge=1)), gen,
                    device=x_train.device)
    else:
        net = build(lambda: SmallCNN(in_channels=c, n_classes=k, image_size=tuple(x_train.shape[-2:])), gen,
                    device=x_train.device)
    return train_classifier(net, x_train, y_train, epochs=epochs, generator=gen, adversarial_eps=eps,
                            adv_steps=adv_steps)


def dent_table(base_model: nn.Module, x_test: torch.Tensor, y_test: torch.Tensor, *, eps: float = 8 / 255,
               n: int = 1000, batch_size: int = 128, T: int = 9, pgd_steps: int = 100, n_untargeted: int = 5,
               n_targeted: int | None = None, aa_attacks: Sequence[str] | None = None, aa_iterations: int | None = None,
               aa_restarts: int | None = None, static_autoattack: bool = False, seed: int = 0,
               progress: bool = False, cells: MutableMapping[str, TableCell] | None = None) -> DefenseTable:
    """Table 2: DENT (A.3; the authors' AdaMod settings, :class:`DENT`'s defaults) over ``base_model``, ``n``
    points drawn from ``seed`` in batches of ``batch_size``; transfer PGD, FPA and GMSA solved by A.3's
    :class:`PGDEnsemble` (``n_untargeted`` untargeted + ``n_targeted`` targeted CW runs of ``pgd_steps``;
    None: every other class). ``aa_attacks`` (e.g. ``["apgd-ce"]``, or ``[]`` for standard AutoAttack; extra
    ``autoattack``) adds the AA rows:
    static white-box AA, transfer AA and DENT-AA (:class:`AdaptiveAutoAttack`), with ``aa_iterations`` /
    ``aa_restarts`` (None: AutoAttack's own). ``static_autoattack`` adds the static model under standard
    AutoAttack (its robust accuracy as the field reports it). Defaults: the paper's CIFAR-10 values (8/255, 1000
    points, batches of 128, 5 + 9 subroutines, T 9)."""
    _check_data(base_model, x_test=x_test, y_test=y_test)
    solver = PGDEnsemble(steps=pgd_steps, n_untargeted=n_untargeted, n_targeted=n_targeted)
    attacks = attack_suite(T=T, solver=solver)
    static = ["none", "pgd"]
    if aa_attacks is not None:
        budget = {"n_iter": aa_iterations, "n_restarts": aa_restarts}
        kind = {"version": "custom", "attacks": list(aa_attacks)} if aa_attacks else {"version": "standard"}
        attacks["aa"] = TransferAutoAttack(**kind, **budget)
        attacks["dent-aa"] = AdaptiveAutoAttack(**kind, **budget)
        static.append("aa")
    if static_autoattack:
        static.append("autoattack")
        attacks = _with_static(attacks, static)
    played = [a for a in attacks if a != "autoattack"]
    return defense_table(DENT(base_model), attacks, x_test, y_test, eps=eps, n=n, batch_size=batch_size,
                         seeds=(seed,), draw=True, static_model=base_model, static_attacks=static,
                         defense_attacks=played, progress=progress, cells=cells)


@dataclass(frozen=True)
class DentAdaptation:
    """How far DENT adapts on the clean stream of a :func:`dent_table`, per batch: mean \\|Δγ\\|, \\|Δβ\\| of the
    per-sample BatchNorm affines against the base model's (:meth:`DENT.affine_change`), clean accuracy of the
    static model and of DENT, and the clean predictions DENT changes (``changed`` of ``n``, Clopper-Pearson)."""

    batch_size: int
    gamma_change: tuple[float, ...]
    beta_change: tuple[float, ...]
    static_accuracy: tuple[float, ...]
    dent_accuracy: tuple[float, ...]
    changed: tuple[int, ...]
    sizes: tuple[int, ...]

    @property
    def mean_gamma_change(self) -> float:
        return float(np.mean(self.gamma_change))

    @property
    def mean_beta_change(self) -> float:
        return float(np.mean(self.beta_change))

    @property
    def n_changed(self) -> int:
        return int(sum(self.changed))

    @property
    def n(self) -> int:
        return int(sum(self.sizes))

    @property
    def changed_ci(self) -> tuple[float, float]:
        return proportion(self.n_changed, self.n).ci

    def to_dict(self) -> dict[str, Any]:
        return {"batch_size": self.batch_size, "gamma_change": list(self.gamma_change),
                "beta_change": list(self.beta_change), "static_accuracy": list(self.static_accuracy),
                "dent_accuracy": list(self.dent_accuracy), "changed": list(self.changed), "sizes": list(self.sizes),
                "mean_gamma_change": self.mean_gamma_change, "mean_beta_change": self.mean_beta_change,
                "n_changed": self.n_changed, "n": self.n, "changed_ci": list(self.changed_ci)}


def dent_adaptation(dent: DENT, table: DefenseTable, x_test: torch.Tensor, *, generator_seed: int = 0) -> DentAdaptation:
    """DENT adapts (Table 2's premise): on each clean batch of ``table``'s stream, the affine shift of
    :meth:`DENT.adapt` (its generator from ``generator_seed``; DENT's adaptation draws no randomness) and the
    clean predictions it changes against the static model (``table``'s "static"/"none" and "defense"/"none")."""
    if not isinstance(dent, DENT):
        raise TypeError(f"dent must be a DENT, got {type(dent).__name__}")
    if not isinstance(table, DefenseTable):
        raise TypeError(f"table must be a DefenseTable, got {type(table).__name__}")
    check_images("x_test", x_test)
    x_test = as_input(dent.base_model, x_test)
    static, adapted = table.cell("static", "none"), table.cell("defense", "none")
    changed = static.game.predictions != adapted.game.predictions
    ok_s, ok_d = static.game.correct, adapted.game.correct
    idx = torch.as_tensor(adapted.indices, dtype=torch.int64, device=x_test.device)
    cols: dict[str, list] = {k: [] for k in ("g", "b", "s", "d", "c", "m")}
    for start in range(0, table.n, table.batch_size):
        sl = slice(start, min(start + table.batch_size, table.n))
        g, b = dent.affine_change(dent.adapt(x_test[idx[sl]], state=None,
                                             generator=torch.Generator().manual_seed(int(generator_seed))))
        for key, v in zip("gbsdcm", (g, b, float(ok_s[sl].mean()), float(ok_d[sl].mean()), int(changed[sl].sum()),
                                     len(changed[sl])), strict=True):
            cols[key].append(v)
    return DentAdaptation(batch_size=table.batch_size, gamma_change=tuple(cols["g"]), beta_change=tuple(cols["b"]),
                          static_accuracy=tuple(cols["s"]), dent_accuracy=tuple(cols["d"]),
                          changed=tuple(cols["c"]), sizes=tuple(cols["m"]))


@dataclass(frozen=True)
class URejectronFigure:
    """Figure 1: one :class:`RejectionCurve` per attack ("pgd": transfer, "gmsa-avg"), and the readings at the
    threshold of ``thresholds`` nearest ``tau``."""

    tau: float
    curves: tuple[RejectionCurve, ...]
    names: tuple[str, ...]

    @property
    def tau_index(self) -> int:
        taus = list(self.curves[0].thresholds)
        return taus.index(min(taus, key=lambda t: abs(t - self.tau)))

    def curve(self, name: str) -> RejectionCurve:
        return self.curves[self.names.index(name)]

    def compare(self, attack: str = "gmsa-avg", reference: str = "pgd", *, boot_seed: int = 0) -> Comparison:
        """Error on accepted perturbed points at τ under ``attack`` against ``reference``, on the same points,
        read as the defended share 1 − error (a point counts as defended when it is classified correctly or
        rejected): paired bootstrap; "below" means ``attack`` leaves fewer points defended (a higher error)."""
        i, a, r = self.tau_index, self.curve(attack), self.curve(reference)
        tau = a.thresholds[i]
        return paired_comparison(attack, 1.0 - a.errors_at(tau), reference, 1.0 - r.errors_at(tau),
                                 seed=boot_seed)

    def to_dict(self) -> dict[str, Any]:
        return {"tau": self.tau, "tau_index": self.tau_index,
                "curves": {k: c.to_dict() for k, c in zip(self.names, self.curves, strict=True)}}


def urejectron_figure(classifier: nn.Module, x_train: torch.Tensor, x_test: torch.Tensor, y_test: torch.Tensor, *,
                      eps: float = 0.3, n: int = 1000, epochs: int = 10,
                      thresholds: Sequence[float] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95),
                      tau: float = 0.5, T: int = 9, pgd_steps: int = 100, seed: int = 0,
                      curves: MutableMapping[str, RejectionCurve] | None = None) -> URejectronFigure:
    """Figure 1: URejectron (A.6; discriminator trained ``epochs`` epochs between D = ``x_train`` and the
    perturbed batch, threshold ``tau``) over ``classifier``, the first ``n`` test points in one batch, under
    transfer PGD and GMSA-AVG (``T``, PGD ``pgd_steps``), swept over ``thresholds``
    (:func:`rejection_curve`). ``curves`` memoises the two curves by attack key."""
    _check_data(classifier, x_train=x_train, x_test=x_test, y_test=y_test)
    if not 0.0 < float(tau) < 1.0 or isinstance(tau, bool):
        raise ValueError(f"tau must be in (0, 1), got {tau!r}")
    n = check_int("n", n, ge=1)
    if n > x_test.shape[0]:
        raise ValueError(f"n must be at most the number of test points ({x_test.shape[0]}), got {n}")
    taus = [float(t) for t in thresholds]
    if not taus or not all(0.0 < t < 1.0 for t in taus):
        raise ValueError(f"thresholds must be a non-empty sequence of values in (0, 1), got {thresholds!r}")
    curves = {} if curves is None else curves
    urej = URejectron(classifier, x_train, epochs=epochs, threshold=float(tau))
    attacks = {"pgd": TransferPGD(solver=PGD(steps=pgd_steps)), "gmsa-avg": GMSA(mode="avg", T=T,
                                                                                 solver=PGD(steps=pgd_steps))}
    for name, attack in attacks.items():
        if name not in curves:
            curves[name] = rejection_curve(attack, urej, x_test[:n], y_test[:n], eps=eps, thresholds=taus, seed=seed)
    return URejectronFigure(tau=float(tau), curves=tuple(curves[k] for k in attacks), names=tuple(attacks))
