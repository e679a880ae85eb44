"""RMC (appendix A.2) in the paper's evaluation: the recipe (:class:`RMCTableConfig`, :func:`rmc_table`, Tables 1
and 6 on the caller's data) and the experiment's Tables 1 and 6 over the standard and the adversarially trained
base, with their checkpoints and shards."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Mapping, MutableMapping
from dataclasses import dataclass, fields, replace
from typing import Any

import torch
from torch import nn

from robustsuite_common.checks import check_int
from robustsuite_common.config import config_hash
from robustsuite_common.experiment import TORCH, Metric, cached
from robustsuite_common.intervals import Interval

from ..model_space import attack_suite
from ..rmc import RMC
from ..tables import (
    TABLE_ATTACKS,
    DefenseTable,
    TableCell,
    check_data,
    check_selected,
    defense_table,
    game_keys,
    with_static,
)
from ._common import (
    ATTACKS,
    COLUMNS,
    LABEL,
    STATIC_LABEL,
    Out,
    StoreCells,
    cells_of,
    cp_interval,
    paired_text,
    paper_of,
    row_labels,
    static_attacks,
    static_checks,
)

__all__ = ["RMCTableConfig", "rmc_table", "rmc_tables", "table_config", "rmc_games", "rmc_shard", "rmc_key"]


@dataclass(frozen=True)
class RMCTableConfig:
    """The recipe of Tables 1 and 6 (A.2; defaults: the paper's MNIST values): RMC fine-tuned with Adam at ``lr``
    for at most ``epochs`` epochs (``patience``) on the K = ``k`` nearest neighbours of D' = D ∪ PGD(D) (PGD
    ``aug_steps`` steps, None: ``pgd_steps``, of ``aug_step_size``, None: 2.5·eps/steps, the paper 0.01, at ``eps``;
    ``adv_copies`` PGD copies), built once per seed of ``seeds``; ``n`` points drawn per seed in rounds of
    ``batch_size`` (the paper: 1); FPA/GMSA with ``T`` iterations of PGD ``pgd_steps``; Γ's rows ``attacks``
    (Table 6: none, GMSA-AVG, GMSA-MIN), the static rows ``static_attacks`` ("pgd": white-box PGD, "autoattack":
    standard AutoAttack). ``calibration_points`` > 0 first warms RMC up on that many clean points that follow the
    seed's draw in its permutation (never scored, :meth:`RMC.warm_up`). ``points_per_game`` splits each seed's
    points into independent games of that many points (each from the initial state; a unit of work each).
    ``rmc_options`` go to :class:`RMC` (the authors' recipe: ``{"val_split": "nearest", "stop_rule": "authors",
    "train_batchnorm": True, "calibration_k": 1024}``)."""

    eps: float = 0.3
    n: int = 1000
    batch_size: int = 1
    k: int = 1024
    lr: float = 2e-4
    epochs: int = 100
    patience: int = 5
    aug_step_size: float | None = None
    aug_steps: int | None = None
    adv_copies: int = 1
    calibration_points: int = 0
    T: int = 9
    pgd_steps: int = 100
    seeds: tuple[int, ...] = (0,)
    attacks: tuple[str, ...] = TABLE_ATTACKS
    static_attacks: tuple[str, ...] = ("none", "pgd")
    points_per_game: int | None = None
    rmc_options: Mapping[str, Any] | None = None


_RECIPE_FIELDS = frozenset(f.name for f in fields(RMCTableConfig))


def _recipe_of(config: RMCTableConfig | None, options: dict[str, Any]) -> RMCTableConfig:
    """``config`` (default :class:`RMCTableConfig`) with the fields passed one by one (the signature before issue
    34, kept one release with a ``DeprecationWarning``)."""
    if config is not None and not isinstance(config, RMCTableConfig):
        raise TypeError(f"config must be an RMCTableConfig, got {type(config).__name__}")
    config = RMCTableConfig() if config is None else config
    if not options:
        return config
    unknown = sorted(set(options) - _RECIPE_FIELDS)
    if unknown:
        raise TypeError(f"rmc_table() got unexpected keyword arguments {unknown}")
    warnings.warn(f"rmc_table({', '.join(f'{k}=...' for k in options)}) is deprecated; pass "
                  "config=RMCTableConfig(...)", DeprecationWarning, stacklevel=3)
    return replace(config, **options)


def rmc_table(model: nn.Module, x_train: torch.Tensor, y_train: torch.Tensor, x_test: torch.Tensor,
              y_test: torch.Tensor, *, config: RMCTableConfig | None = None,
              prepare: Callable[[RMC, int], None] | None = None, only: Collection[str] | None = None,
              progress: bool = False, cells: MutableMapping[str, TableCell] | None = None,
              **options: Any) -> DefenseTable:
    """Tables 1 and 6: RMC (A.2) over ``model`` with D = (x_train, y_train), played on (x_test, y_test) with the
    recipe ``config`` (an :class:`RMCTableConfig`; default: the paper's MNIST values). ``prepare(rmc, seed)`` runs
    on each RMC built (e.g. to load a checkpointed D' with :meth:`RMC.set_augmented`); ``only``, ``progress`` and
    ``cells`` as in :func:`~transduct_attack.defense_table`. Static rows: ``model``. The recipe's fields passed one
    by one (``eps=0.3, n=1000, ...``) still work for one release, with a ``DeprecationWarning``."""
    c = _recipe_of(config, options)
    check_data(model, x_train=x_train, y_train=y_train, x_test=x_test, y_test=y_test)
    n = check_int("n", c.n, ge=1)
    calibration_points = check_int("calibration_points", c.calibration_points, ge=0)
    if n + calibration_points > x_test.shape[0]:
        raise ValueError(f"n + calibration_points must be at most {x_test.shape[0]}, got {n + calibration_points}")
    suite = with_static(attack_suite(steps=c.pgd_steps, T=c.T), c.static_attacks)
    check_selected(suite, c.attacks)
    rmc_options = dict(c.rmc_options or {})
    aug_steps = c.pgd_steps if c.aug_steps is None else c.aug_steps

    def make(s: int) -> RMC:
        rmc = RMC(model, x_train, y_train, k=c.k, aug_eps=c.eps, aug_steps=aug_steps, aug_step_size=c.aug_step_size,
                  adv_copies=c.adv_copies, lr=c.lr, max_epochs=c.epochs, patience=c.patience, seed=s, **rmc_options)
        if prepare is not None:
            prepare(rmc, s)
        if calibration_points > 0:  # clean points outside the seed's draw (same permutation), never scored
            perm = torch.randperm(x_test.shape[0], generator=torch.Generator().manual_seed(s))
            rmc.warm_up(x_test[perm[n:n + calibration_points].to(x_test.device)], batch_size=c.batch_size, seed=s)
        return rmc

    return defense_table(make, suite, x_test, y_test, eps=c.eps, n=n, batch_size=c.batch_size, seeds=c.seeds,
                         draw=True, static_model=model, static_attacks=c.static_attacks, defense_attacks=c.attacks,
                         points_per_game=c.points_per_game, only=only, progress=progress, cells=cells)


SEED_COLUMNS = ("defense", "attack", "mean", "mean_ci_low", "mean_ci_high", "std over seeds", "pooled",
                "pooled_ci_low", "pooled_ci_high", "paper")
SEED_UNITS = {c: "fraction" for c in SEED_COLUMNS[2:-1]}
SEED_BOUNDS = {"mean": (0.0, 1.0), "pooled": (0.0, 1.0)}
BASES = (("standard", "std", "standard"), ("adv. trained", "at", "adversarial"))


def rmc_tables(out: Out, cfg, models, xtr, ytr, xte, yte, *, store, progress, paper, key) -> None:
    r, seed = cfg.rmc, cfg.seed
    n, b, rm = r.points, r.batch_size, r.train_points or xtr.shape[0]
    eps = cfg.threat.eps
    t1 = [seed] if "rmc" in cfg.tables else []
    t6 = list(r.seeds) if "rmc_seeds" in cfg.tables else []
    rows1, rows6 = [], []
    static = static_attacks(cfg, out.warnings)
    skeys = tuple(f"static {a}" for a in static)
    for label, tag, role in BASES:
        model = getattr(models, role)
        memo = StoreCells(store, f"rmc-{tag}-{key(role)}", TableCell.from_dict)

        prepare = _d_prime(store, key(role))

        def table(s, attacks, model=model, memo=memo, prepare=prepare):
            return rmc_table(model, xtr[:rm], ytr[:rm], xte, yte, config=table_config(cfg, s, attacks, static),
                             prepare=prepare, progress=progress, cells=memo)

        ref = paper["rmc"][role]
        for s in t1:
            tab = table([s], ("none", *ATTACKS))
            name = f"{tab.defense} ({label})"
            cells = cells_of(tab, s, (*skeys, "none", *ATTACKS))
            base = out.base_view(model, xte, cells["none"].indices)
            static_checks(out, f"rmc_{tag}", tab, f"static {label}", s)
            rows1 += out.cell_rows("rmc", cells, name, f"static {label}", ref, base)
            out.add_metrics(f"rmc_{tag}", {a: cells[a] for a in ("none", *ATTACKS)}, name)
            out.bars[name] = [cells[a].accuracy for a in ATTACKS]
            out.compare(name, tab, s)
            # "RMC + AT is no better than AT" (§6): Γ under its strongest attack against the static base's own
            # robust accuracy (AutoAttack where it ran, else white-box PGD), on the same points
            robust = "autoattack" if "autoattack" in static else "pgd"
            worst = tab.strongest(ATTACKS, s)
            c = tab.compare_cells(worst, robust, reference_role="static", seed=s, boot_seed=s)
            out.comparisons.append(f"{name} under {LABEL[worst]} {c.accuracy:.2f} is {c.verdict} static {label} under "
                                   f"{STATIC_LABEL[robust]} {c.reference_accuracy:.2f} ({paired_text(c)})")
        if t6:
            tab = table(t6, ("none", "gmsa-avg", "gmsa-min"))
            name, ref6 = f"{tab.defense} ({label})", paper["rmc_seeds"][role]
            for a in (*skeys, "none", "gmsa-avg", "gmsa-min"):
                defense, attack = row_labels(a, name, f"static {label}")
                kind, akey = ("static", a.split()[1]) if a.startswith("static ") else ("defense", a)
                sr = tab.seeded(kind, akey, boot_seed=seed)
                rows6.append([defense, attack, sr.mean, sr.mean_ci_low, sr.mean_ci_high, sr.std, sr.pooled,
                              sr.pooled_ci_low, sr.pooled_ci_high, paper_of(ref6, a)])
                if kind == "defense":
                    metric = f"rmc_seeds_{tag}_{a.replace('-', '_')}"
                    what = f"{name} under {LABEL[a]}: mean accuracy over seeds {t6}"
                    out.metrics[f"{metric}_mean"] = (
                        Metric(sr.mean, what, "fraction", note="fewer than three seeds: no interval")
                        if sr.mean_ci_low is None or sr.mean_ci_high is None else
                        Metric.of(Interval(sr.mean, sr.mean_ci_low, sr.mean_ci_high, method="Student-t over seeds",
                                           bounds=(0.0, 1.0)), what, "fraction"))
                    out.metrics[f"{metric}_pooled"] = Metric.of(
                        cp_interval(sr.pooled, (sr.pooled_ci_low, sr.pooled_ci_high)),
                        f"{name} under {LABEL[a]}: accuracy over the pooled points of seeds {t6}", "fraction")
                for s in t6:
                    if "rmc" not in cfg.tables or s != seed:  # Table 1's seed is logged once
                        c = tab.cell(kind, akey, s)
                        clean = None if kind == "static" else tab.cell("defense", "none", s)
                        out.log_cell("rmc_seeds", defense, attack, c, out.base_view(model, xte, c.indices), clean)
            c = tab.compare_pooled(boot_seed=seed)
            out.comparisons.append(f"RMC ({label}) over seeds {t6}: {LABEL[c.attack]} pooled {c.accuracy:.2f} is "
                                   f"{c.verdict} clean {c.reference_accuracy:.2f} ({paired_text(c)})")
    if t1:
        out.table("rmc", f"Table 1 analogue: RMC ({n} points drawn with seed {seed}, {b} per round, stateful, "
                         f"non-leaking, L∞ eps {eps}{_recipe(r)}){_indicative(n)}", COLUMNS, rows1)
    if t6:
        out.table("rmc_seeds", f"Table 6 analogue: RMC over seeds {t6} ({n} points drawn per seed, {b} per round, "
                               f"L∞ eps {eps}; mean with its Student-t interval over seeds (none below three seeds), pooled: all {n * len(t6)} "
                               f"games' points with Clopper-Pearson; paper: MNIST, 5 runs){_indicative(n)}",
                  SEED_COLUMNS, rows6,
                  units=SEED_UNITS, bounds=SEED_BOUNDS)


def _d_prime(store, key: str):
    """RMC's D' (D and its PGD copies, the costliest part of building RMC, one per base and seed) checkpointed in
    ``store``, so the shards of a run compute it once."""
    if store is None:
        return None

    def prepare(rmc, seed: int) -> None:
        x, y = cached(store, f"rmc-dprime-{key}-s{seed}", lambda: tuple(t.cpu() for t in rmc.augmented), TORCH)
        rmc.set_augmented(x, y)

    return prepare


def _recipe(r) -> str:
    authors = r.stop_rule == "authors" and r.val_split == "nearest" and r.train_batchnorm and r.calibration_k > 0
    what = "the authors' recipe" if authors else "a compact recipe"
    games = f"; independent games of {r.points_per_game} points" if r.points_per_game else ""
    calibration = (f"calibration on {r.calibration_k} clean points per round" if r.calibration_k
                   else "no per-round calibration")
    return f"; {what}: K {r.k}, Adam lr {r.lr:g}, at most {r.max_epochs} epochs, {calibration}{games}"


def _indicative(n: int) -> str:
    return (f" — {n} points: indicative; a verdict is drawn only where paired intervals separate" if n < 100
            else "")


def table_config(cfg, seeds, attacks, static) -> RMCTableConfig:
    """The recipe of the experiment's ``cfg`` (its ``rmc``, ``threat`` and ``attack`` groups) for ``seeds``, Γ's
    rows ``attacks`` and the static rows ``static``."""
    r = cfg.rmc
    options = {"val_split": r.val_split, "stop_rule": r.stop_rule, "train_batchnorm": r.train_batchnorm,
               "calibration_k": r.calibration_k}
    return RMCTableConfig(eps=cfg.threat.eps, n=r.points, batch_size=r.batch_size, k=r.k, lr=r.lr,
                          epochs=r.max_epochs, patience=r.patience, calibration_points=r.warmup_points, T=r.T,
                          pgd_steps=cfg.attack.pgd_steps, aug_steps=r.aug_steps, adv_copies=r.adv_copies,
                          seeds=tuple(seeds), attacks=tuple(attacks), static_attacks=tuple(static),
                          rmc_options=options, points_per_game=r.points_per_game or None)


def rmc_games(cfg) -> list[tuple[str, str]]:
    """Every RMC game of the config as ``(base role, memo key)``: the units a sharded run shares out."""
    r = cfg.rmc
    t1 = [cfg.seed] if "rmc" in cfg.tables else []
    t6 = list(r.seeds) if "rmc_seeds" in cfg.tables else []
    static = ("none", "pgd", "autoattack") if cfg.robustness.autoattack else ("none", "pgd")
    keys: list[str] = []
    for s in dict.fromkeys([*t1, *t6]):
        attacks = ("none", *ATTACKS) if s in t1 else ("none", "gmsa-avg", "gmsa-min")
        keys += [k for k in game_keys(seeds=[s], n=r.points, static_attacks=static, defense_attacks=attacks,
                                      points_per_game=r.points_per_game or None) if k not in keys]
    return [(role, k) for _, _, role in BASES for k in keys]


def rmc_shard(cfg, models, xtr, ytr, xte, yte, games, *, store, progress, key) -> None:
    """Play the RMC ``games`` (``(base role, memo key)``) into ``store``."""
    r = cfg.rmc
    m = r.train_points or xtr.shape[0]
    static = static_attacks(cfg)
    for _, tag, role in BASES:
        mine = {k for rl, k in games if rl == role}
        if not mine:
            continue
        seeds = sorted({int(k.split("-s")[-1].split("-")[0]) for k in mine})
        for s in seeds:
            attacks = ("none", *ATTACKS) if ("rmc" in cfg.tables and s == cfg.seed) else ("none", "gmsa-avg",
                                                                                             "gmsa-min")
            rmc_table(getattr(models, role), xtr[:m], ytr[:m], xte, yte, config=table_config(cfg, [s], attacks, static),
                      prepare=_d_prime(store, key(role)), only=mine, progress=progress,
                      cells=StoreCells(store, f"rmc-{tag}-{key(role)}", TableCell.from_dict))


def rmc_key(cfg, fp) -> str:
    """What the RMC games depend on: the RMC group, the budget, the solver, the data and the base."""
    return config_hash(cfg.rmc, cfg.threat, cfg.attack, fp)
