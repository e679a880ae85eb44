"""Tables 1 and 6: RMC over the standard and the adversarially trained base (A.2)."""

from __future__ import annotations

from robustsuite_common.config import config_hash
from robustsuite_common.experiment import TORCH, Metric, cached
from robustsuite_common.intervals import Interval

from ..tables import TableCell, rmc_table
from ._common import (
    ATTACKS,
    COLUMNS,
    LABEL,
    STATIC_LABEL,
    Out,
    StoreCells,
    cells_of,
    cp_interval,
    cp_row,
    paired_text,
    paper_of,
    row_labels,
    static_attacks,
    static_checks,
)

SEED_COLUMNS = ("defense", "attack", "mean", "mean_ci_low", "mean_ci_high", "std over seeds", "pooled",
                "pooled_ci_low", "pooled_ci_high", "paper")
SEED_UNITS = {c: "fraction" for c in SEED_COLUMNS[2:-1]}
SEED_BOUNDS = {"mean": (0.0, 1.0), "pooled": (0.0, 1.0)}
BASES = (("standard", "std", "standard"), ("adv. trained", "at", "adversarial"))


def rmc_tables(out: Out, cfg, models, xtr, ytr, xte, yte, *, store, progress, paper, key) -> None:
    r, seed = cfg.rmc, cfg.seed
    n, b, rm, n_cal = r.points, r.batch_size, r.train_points or xtr.shape[0], r.warmup_points
    eps = cfg.threat.eps
    t1 = [seed] if "rmc" in cfg.tables else []
    t6 = list(r.seeds) if "rmc_seeds" in cfg.tables else []
    rows1, rows6 = [], []
    static = static_attacks(cfg, out.warnings)
    skeys = tuple(f"static {a}" for a in static)
    options = {"val_split": r.val_split, "stop_rule": r.stop_rule, "train_batchnorm": r.train_batchnorm,
               "calibration_k": r.calibration_k}
    for label, tag, role in BASES:
        model = getattr(models, role)
        memo = StoreCells(store, f"rmc-{tag}-{key(role)}", TableCell.from_dict)

        prepare = _d_prime(store, key(role))

        def table(s, attacks, model=model, memo=memo, prepare=prepare):
            return rmc_table(model, xtr[:rm], ytr[:rm], xte, yte, eps=eps, n=n, batch_size=b, k=r.k, lr=r.lr,
                             epochs=r.max_epochs, patience=r.patience, calibration_points=n_cal, T=r.T,
                             pgd_steps=cfg.attack.pgd_steps, aug_steps=r.aug_steps, adv_copies=r.adv_copies,
                             seeds=s, attacks=attacks, static_attacks=static, rmc_options=options,
                             points_per_game=r.points_per_game or None, prepare=prepare,
                             progress=progress, cells=memo)

        ref = paper["rmc"][role]
        for s in t1:
            tab = table([s], ("none", *ATTACKS))
            name = f"{tab.defense} ({label})"
            cells = cells_of(tab, s, (*skeys, "none", *ATTACKS))
            base = out.base_view(model, xte, cells["none"].indices)
            static_checks(out, f"rmc_{tag}", tab, f"static {label}", s)
            for a, c in cells.items():
                defense, attack = row_labels(a, name, f"static {label}")
                rows1.append(cp_row(defense, attack, c, paper_of(ref, a)))
                out.log_cell("rmc", defense, attack, c, base, None if a.startswith("static") else cells["none"])
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
                        if sr.mean_ci_low is None else
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


def rmc_games(cfg) -> list[tuple[str, str]]:
    """Every RMC game of the config as ``(base role, memo key)``: the units a sharded run shares out."""
    from ..tables import game_keys

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
    options = {"val_split": r.val_split, "stop_rule": r.stop_rule, "train_batchnorm": r.train_batchnorm,
               "calibration_k": r.calibration_k}
    static = static_attacks(cfg)
    for _, tag, role in BASES:
        mine = {k for rl, k in games if rl == role}
        if not mine:
            continue
        seeds = sorted({int(k.split("-s")[-1].split("-")[0]) for k in mine})
        for s in seeds:
            attacks = ("none", *ATTACKS) if ("rmc" in cfg.tables and s == cfg.seed) else ("none", "gmsa-avg",
                                                                                             "gmsa-min")
            rmc_table(getattr(models, role), xtr[:r.train_points or xtr.shape[0]], ytr[:r.train_points or xtr.shape[0]], xte, yte,
                      eps=cfg.threat.eps, n=r.points, batch_size=r.batch_size, k=r.k, lr=r.lr, epochs=r.max_epochs,
                      patience=r.patience, calibration_points=r.warmup_points, T=r.T, pgd_steps=cfg.attack.pgd_steps,
                      aug_steps=r.aug_steps, adv_copies=r.adv_copies, seeds=[s], attacks=attacks,
                      static_attacks=static, rmc_options=options, points_per_game=r.points_per_game or None,
                      prepare=_d_prime(store, key(role)), only=mine, progress=progress,
                      cells=StoreCells(store, f"rmc-{tag}-{key(role)}", TableCell.from_dict))


def rmc_key(cfg, fp) -> str:
    """What the RMC games depend on: the RMC group, the budget, the solver, the data and the base."""
    return config_hash(cfg.rmc, cfg.threat, cfg.attack, fp)
