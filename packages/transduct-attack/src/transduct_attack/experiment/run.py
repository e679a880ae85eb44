"""The experiment's run: every game of the selected tables (:func:`run`), or one shard of the RMC games
or table (:func:`shard_count`, :func:`run_shard`) that a later :func:`run` collects from the store."""

from __future__ import annotations

from robustsuite_common.config import to_dict
from robustsuite_common.experiment import Store

from . import audit, dent, retraining, rmc, urejectron
from ._common import Out, paper_values
from .config import Config
from .effects import effect_metrics, paper_effects
from .inputs import Data, Models, check_inputs, prepared
from .result import Result

__all__ = ["EXECUTION_FIELDS", "shard_count", "run_shard", "run"]

#: config paths that change how, not what, is computed
EXECUTION_FIELDS: tuple[str, ...] = ()


#: the tables computed after RMC's, in this order, each by one function of its module (its cells checkpointed)
_LATER = ("dann", "tadv", "dent", "urejectron")


def _tasks(config: Config) -> list[tuple[str, list]]:
    """The units of work a sharded run shares out, costliest first: RMC's games (one task per game with
    ``rmc.points_per_game``, else one per base, so each base's D' is built once), then one per other table, then the
    audit's games."""
    tasks: list[tuple[str, list]] = []
    if {"rmc", "rmc_seeds"} & set(config.tables):
        games = rmc.rmc_games(config)
        if config.rmc.points_per_game:
            tasks += [("rmc", [g]) for g in games]
        else:
            tasks += [("rmc", [g for g in games if g[0] == role]) for role in dict.fromkeys(r for r, _ in games)]
    tasks += [(name, []) for name in _LATER if name in config.tables]
    return tasks + ([("audit", [])] if config.audit.enabled else [])


def shard_count(config: Config) -> int:
    """How many shards the config's work splits into: one per RMC game (with ``rmc.points_per_game``) or per RMC
    base, one per other table and one for the audit; 1 when that is a single task (no sharding)."""
    if not isinstance(config, Config):
        raise TypeError(f"config must be a Config, got {type(config).__name__}")
    return max(1, len(_tasks(config)))


def run_shard(models: Models, data: Data, config: Config, index: int, count: int, *, store: Store | None,
              progress: bool = True) -> None:
    """Compute shard ``index`` of ``count`` (the tasks ``i`` with ``i % count == index``, see :func:`shard_count`)
    into ``store``; :func:`run` then finds their games there and computes only what is missing."""
    from robustsuite_common.checks import check_int
    from robustsuite_common.models import evaluating, model_device

    check_inputs(models, data, config)
    count = check_int("count", count, ge=1)
    index = check_int("index", index, ge=0, le=count - 1)
    if store is None:
        raise ValueError("store must be given: a shard's games are kept there for run() to collect")
    tasks = _tasks(config)
    mine = [t for i, t in enumerate(tasks) if i % count == index] if len(tasks) > 1 else []
    if not mine:
        return
    with evaluating(models.standard), evaluating(models.adversarial):
        xtr, ytr, xte, yte, data_fp, model_fp = prepared(models, data)
        scratch = Out(data.test, model_device(models.standard))  # the cells go to the store; run() builds the tables
        paper = paper_values()
        for name, games in mine:
            if name == "rmc":
                rmc.rmc_shard(config, models, xtr, ytr, xte, yte, games, store=store, progress=progress,
                               key=lambda role: rmc.rmc_key(config, (data_fp, model_fp[role])))
            else:
                _play(name, scratch, config, models, xtr, ytr, xte, yte, store=store, progress=progress,
                      paper=paper, fps=(data_fp, model_fp))


def _play(name: str, out: Out, cfg: Config, models: Models, xtr, ytr, xte, yte, *, store, progress: bool, paper,
          fps) -> tuple:
    """Compute table ``name`` of :data:`_LATER` (or the ``audit``, whose checks it returns) into ``out``."""
    data_fp, model_fp = fps
    kw = {"store": store, "progress": progress, "paper": paper}
    if name == "dann":
        retraining.dann(out, cfg, models, xtr, ytr, xte, yte, **kw, fp=(data_fp, model_fp["standard"]))
    elif name == "tadv":
        retraining.tadv(out, cfg, xtr, ytr, xte, yte, **kw, fp=data_fp)
    elif name == "dent":
        dent.dent(out, cfg, xtr, ytr, xte, yte, **kw, fp=data_fp)
    elif name == "urejectron":
        urejectron.urejectron(out, cfg, models, xtr, xte, yte, store=store, progress=progress,
                               fp=(data_fp, model_fp["standard"]))
    elif name == "audit":
        return audit.audit(out, cfg, models, xte, yte, store=store, progress=progress,
                           fp=(data_fp, model_fp["adversarial"]))
    else:
        raise ValueError(f"unknown table {name!r}")
    return ()


def run(models: Models, data: Data, config: Config, *, store: Store | None = None, progress: bool = True) -> Result:
    """Play every game of ``config.tables`` and return the :class:`Result` (see the module docstring).

    ``store`` checkpoints each finished game (and trained base) under keys that hash exactly what it depends on
    (the config group, the budget, the solver, the data and the model weights), so an interrupted run resumes;
    with ``store=None`` nothing is written. The models come back as they were (mode, buffers, ``requires_grad``).
    """
    from robustsuite_common.models import evaluating, model_device

    check_inputs(models, data, config)
    cfg = config
    paper = paper_values()

    with evaluating(models.standard), evaluating(models.adversarial):
        xtr, ytr, xte, yte, data_fp, model_fp = prepared(models, data)
        out = Out(data.test, model_device(models.standard))
        _threat_warnings(out, cfg)
        kw = {"store": store, "progress": progress, "paper": paper}
        if "rmc" in cfg.tables or "rmc_seeds" in cfg.tables:
            rmc.rmc_tables(out, cfg, models, xtr, ytr, xte, yte, **kw,
                            key=lambda role: rmc.rmc_key(cfg, (data_fp, model_fp[role])))
        checks: tuple = ()
        for name in (*(t for t in _LATER if t in cfg.tables), *(["audit"] if cfg.audit.enabled else [])):
            checks = _play(name, out, cfg, models, xtr, ytr, xte, yte, **kw, fps=(data_fp, model_fp)) or checks
    if cfg.tables:  # the paper's tables ran (not the audit preset alone)
        out.metrics.update(effect_metrics(out.records, seed=cfg.rmc.seeds[0]))
        out.tables["paper_effects"] = paper_effects(out.metrics)
    seeds = cfg.rmc.seeds
    if cfg.tables:
            out.notes.append(f"Budgets are scaled down from the paper (T={cfg.rmc.T} for RMC, {cfg.tadv.T} for TADV, "
                         f"{cfg.dann.T} for DANN and {cfg.dent.T} for DENT instead of 9, PGD {cfg.attack.pgd_steps} "
                         f"steps instead of 100–200, few epochs, {len(seeds)} seeds instead of 5); the game is "
                         "naturally ordered and non-leaking, with private randomness per round. The paper's column is "
                         "its MNIST row (eps 0.3) for Tables 1, 3, 4, 6 and its CIFAR-10 Wu et al. row (eps 8/255) for "
                         "Table 2.")
    if cfg.rmc.batch_size > 1 and {"rmc", "rmc_seeds"} & set(cfg.tables):
        out.notes.append("RMC rounds carry several points (the paper adapts on one point per round) to fit the "
                         "demo budget.")
    out.notes += out.comparisons
    summary = "; ".join(out.comparisons) or "no table selected"
    head = _headline(out.tables, cfg.threat.eps)
    tables = {"headline": head, **out.tables} if head is not None else out.tables
    return Result(experiment="transduct_attack", config={**to_dict(cfg), "data": data.name},
                  tables=tables, metrics=out.metrics, summary=summary + ".", records=out.records,
                  notes=tuple(out.notes), warnings=tuple(out.warnings), checks=checks)


def _threat_warnings(out: Out, cfg: Config) -> None:
    t = cfg.threat
    if {"rmc", "rmc_seeds"} & set(cfg.tables) and t.eps != t.at_model_eps:
        out.warnings.append(f"RMC over the adversarially trained base is played at L∞ eps {t.eps:g}, but that base "
                            f"was trained at {t.at_model_eps:g} (threat.at_model_eps): its white-box rows show how "
                            "robust it is at the played budget, and 'RMC + AT' is not compared at the budget AT was "
                            "trained for.")


def _headline(tables: dict, eps: float):
    """Per defense of Tables 1-4 (RMC, DANN, TADV, DENT and their static bases): clean accuracy against its accuracy
    under the strongest attack of its table (the lowest), with their Clopper-Pearson intervals; ``None`` without
    those tables."""
    from robustsuite_common.experiment import ci_of, headline

    rows = []
    for name in ("rmc", "dann", "tadv", "dent"):
        if name not in tables:
            continue
        recs = tables[name].records()
        for defense in dict.fromkeys(r["defense"] for r in recs):
            mine = [r for r in recs if r["defense"] == defense]
            clean = next((r for r in mine if r["attack"] == "clean"), None)
            attacked = [r for r in mine if r["attack"] != "clean" and r["accuracy"] is not None]
            if clean is None or not attacked:
                continue
            worst = min(attacked, key=lambda r: r["accuracy"])
            rows.append((f"{defense} ({name})", ci_of(clean, "accuracy"), ci_of(worst, "accuracy"), worst["attack"]))
    if not rows:
        return None
    return headline(f"Clean accuracy against the strongest attack of each table (L∞ eps {eps:g})", rows)
