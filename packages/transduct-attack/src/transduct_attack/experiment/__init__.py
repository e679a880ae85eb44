"""The paper's evaluation as one experiment: Chen et al., *Towards Evaluating the Robustness of Neural Networks
Learned by Transduction* (ICLR 2022), Tables 1, 2, 3, 4, 6 and Figure 1, on the caller's models and data.

::

    from transduct_attack import experiment
    result = experiment.run(experiment.Models(standard=cnn, adversarial=cnn_at),
                            experiment.Data(train=train_split, test=test_split),
                            experiment.preset("demo"), store=experiment.MemoryStore())

- :class:`Config` groups the paper's hyper-parameters (:class:`ThreatConfig`, :class:`AttackConfig`,
  :class:`RobustnessConfig`, :class:`RMCConfig`, :class:`DENTConfig`, :class:`DANNConfig`, :class:`TADVConfig`,
  :class:`URejectronConfig`); :data:`PRESETS` names settings (``demo``, ``paper``, ``paper-cpu``).
- :func:`run` plays every game of the selected tables (each game checkpointed in ``store``), and returns a
  :class:`Result`: tables with the paper's values beside ours, metrics with intervals, per-sample records, a
  summary written from the numbers, notes and warnings. :func:`figures` draws the result.
- The paper's reference values are data (``paper_values.json``, :func:`paper_values`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from robustsuite_common.config import to_dict
from robustsuite_common.experiment import DirStore, ExperimentResult, Figure, MemoryStore, Split, Store

from ._common import Out, fingerprint, paper_values
from .config import (
    PRESETS,
    TABLES,
    AttackConfig,
    AuditConfig,
    Config,
    DANNConfig,
    DENTConfig,
    RMCConfig,
    RobustnessConfig,
    TADVConfig,
    ThreatConfig,
    URejectronConfig,
    preset,
)

__all__ = ["Config", "ThreatConfig", "AttackConfig", "RobustnessConfig", "RMCConfig", "DENTConfig", "DANNConfig",
           "TADVConfig", "URejectronConfig", "AuditConfig", "TABLES", "PRESETS", "preset", "Models", "Data", "Result", "run",
           "figures", "paper_values", "EXECUTION_FIELDS", "shard_count", "run_shard", "Store", "MemoryStore", "DirStore", "Split"]

#: config paths that change how, not what, is computed
EXECUTION_FIELDS: tuple[str, ...] = ()


def shard_count(config: Config) -> int:
    """How many shards the config's work splits into: with ``rmc.points_per_game`` set, one per RMC game (each
    independent game of each base, seed and attack, and each static row); else 1 (no sharding)."""
    from . import _rmc

    if not isinstance(config, Config):
        raise TypeError(f"config must be a Config, got {type(config).__name__}")
    if not config.rmc.points_per_game or not {"rmc", "rmc_seeds"} & set(config.tables):
        return 1
    return len(_rmc.rmc_games(config))


def run_shard(models: Models, data: Data, config: Config, index: int, count: int, *, store: Store | None,
              progress: bool = True) -> None:
    """Play shard ``index`` of ``count`` (the RMC games ``i`` with ``i % count == index``) into ``store``;
    :func:`run` then finds them there and computes only what is missing."""
    from robustsuite_common.checks import check_int
    from robustsuite_common.models import evaluating

    from . import _rmc

    _check(models, data, config)
    count = check_int("count", count, ge=1)
    index = check_int("index", index, ge=0, le=count - 1)
    if store is None:
        raise ValueError("store must be given: a shard's games are kept there for run() to collect")
    games = _rmc.rmc_games(config) if shard_count(config) > 1 else []
    mine = [g for i, g in enumerate(games) if i % count == index]
    if not mine:
        return
    with evaluating(models.standard), evaluating(models.adversarial):
        xtr, ytr, xte, yte, data_fp, model_fp = _prepared(models, data)
        _rmc.rmc_shard(config, models, xtr, ytr, xte, yte, mine, store=store, progress=progress,
                       key=lambda role: _rmc.rmc_key(config, (data_fp, model_fp[role])))


def _prepared(models: Models, data: Data):
    from robustsuite_common.models import as_model_input, model_device

    dev = model_device(models.standard)
    xtr = as_model_input(models.standard, data.train.x)
    xte = as_model_input(models.standard, data.test.x)
    ytr = torch.as_tensor(data.train.y, dtype=torch.int64).to(dev)
    yte = torch.as_tensor(data.test.y, dtype=torch.int64).to(dev)
    data_fp = fingerprint(xtr, ytr, xte, yte)
    model_fp = {role: fingerprint(getattr(models, role)) for role in ("standard", "adversarial")}
    return xtr, ytr, xte, yte, data_fp, model_fp


@dataclass(frozen=True)
class Models:
    """The two input models (vision contract: ``(N, C, H, W)`` in [0, 1] → logits ``(N, K)``; a dict, tuple or
    ``ModelOutput`` output is read as logits): ``standard`` (the standard base of RMC row 1, DANN and URejectron)
    and ``adversarial`` (the adversarially trained base of RMC row 2, trained at ``threat.at_model_eps``)."""

    standard: torch.nn.Module
    adversarial: torch.nn.Module


@dataclass(frozen=True)
class Data:
    """``train`` (D: RMC's neighbours, DANN's source, TADV's and DENT's training set, URejectron's P) and
    ``test`` (the test stream) as :class:`Split` s of images in [0, 1]; ``name`` is shown in figure titles."""

    train: Split
    test: Split
    name: str = field(default="")


@dataclass(frozen=True)
class Result(ExperimentResult):
    """What :func:`run` returns (an :class:`~robustsuite_common.experiment.ExperimentResult`); ``checks`` holds the
    verdict's checks the run computed (``audit.enabled``: the ``transductive-gain`` check), empty otherwise."""

    title = "Transductive defenses under adaptive attacks (RMC, DENT, DANN, TADV, URejectron vs FPA/GMSA)"

    def rows(self, table: str) -> list[dict[str, Any]]:
        """The rows of ``table`` as dicts."""
        return self.tables[table].records()


def _check(models: Any, data: Any, cfg: Any) -> None:
    from robustsuite_common.checks import check_images, check_labels
    from robustsuite_common.models import check_model

    from .._validate import n_classes

    if not isinstance(cfg, Config):
        raise TypeError(f"config must be a transduct_attack.experiment.Config (see preset()), got {type(cfg).__name__}")
    if not isinstance(models, Models):
        raise TypeError(f"models must be a transduct_attack.experiment.Models, got {type(models).__name__}")
    check_model("models.standard", models.standard)
    check_model("models.adversarial", models.adversarial)
    if not isinstance(data, Data):
        raise TypeError(f"data must be a transduct_attack.experiment.Data, got {type(data).__name__}")
    for name in ("train", "test"):
        split = getattr(data, name)
        if not isinstance(split, Split):
            raise TypeError(f"data.{name} must be a Split, got {type(split).__name__}")
        check_images(f"data.{name}.x", split.x)
        check_labels(f"data.{name}.y", split.y, length=split.x.shape[0])
    n_test, n_train = data.test.x.shape[0], data.train.x.shape[0]
    used = {"rmc": ("rmc", "rmc_seeds"), "dann": ("dann",), "tadv": ("tadv",), "dent": ("dent",),
            "urejectron": ("urejectron",)}
    if cfg.audit.enabled and cfg.audit.adaptive != "none" and cfg.audit.points > n_test:
        raise ValueError(f"audit.points must be at most the number of test points ({n_test}), got {cfg.audit.points}")
    from ._audit import check_audit

    check_audit(cfg, models)
    for group, tables in used.items():
        if not set(tables) & set(cfg.tables):
            continue
        g = getattr(cfg, group)
        extra = g.warmup_points if group == "rmc" else 0
        if g.points + extra > n_test:
            what = f"{group}.points" + (" + rmc.warmup_points" if extra else "")
            raise ValueError(f"{what} must be at most the number of test points ({n_test}), got {g.points + extra}")
        if g.train_points > n_train:
            raise ValueError(f"{group}.train_points must be at most the number of training points ({n_train}), "
                             f"got {g.train_points}")
    k = n_classes(models.standard, data.test.x)  # last: the one check that runs the model (one input)
    for name in ("train", "test"):
        check_labels(f"data.{name}.y", getattr(data, name).y, n_classes=k)


def run(models: Models, data: Data, config: Config, *, store: Store | None = None, progress: bool = True) -> Result:
    """Play every game of ``config.tables`` and return the :class:`Result` (see the module docstring).

    ``store`` checkpoints each finished game (and trained base) under keys that hash exactly what it depends on
    (the config group, the budget, the solver, the data and the model weights), so an interrupted run resumes;
    with ``store=None`` nothing is written. The models come back as they were (mode, buffers, ``requires_grad``).
    """
    from robustsuite_common.models import evaluating, model_device

    _check(models, data, config)
    cfg = config
    paper = paper_values()
    from . import _audit, _dent, _retraining, _rmc, _urejectron
    from .effects import effect_metrics, paper_effects

    with evaluating(models.standard), evaluating(models.adversarial):
        xtr, ytr, xte, yte, data_fp, model_fp = _prepared(models, data)
        out = Out(data.test, model_device(models.standard))
        _threat_warnings(out, cfg)
        kw = {"store": store, "progress": progress, "paper": paper}
        if "rmc" in cfg.tables or "rmc_seeds" in cfg.tables:
            _rmc.rmc_tables(out, cfg, models, xtr, ytr, xte, yte, **kw,
                            key=lambda role: _rmc.rmc_key(cfg, (data_fp, model_fp[role])))
        if "dann" in cfg.tables:
            _retraining.dann(out, cfg, models, xtr, ytr, xte, yte, **kw, fp=(data_fp, model_fp["standard"]))
        if "tadv" in cfg.tables:
            _retraining.tadv(out, cfg, xtr, ytr, xte, yte, **kw, fp=data_fp)
        if "dent" in cfg.tables:
            _dent.dent(out, cfg, xtr, ytr, xte, yte, **kw, fp=data_fp)
        if "urejectron" in cfg.tables:
            _urejectron.urejectron(out, cfg, models, xtr, xte, yte, store=store, progress=progress,
                                   fp=(data_fp, model_fp["standard"]))
        checks = _audit.audit(out, cfg, models, xte, yte, store=store, progress=progress,
                              fp=(data_fp, model_fp["adversarial"])) if cfg.audit.enabled else ()
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


def figures(result: ExperimentResult) -> list[Figure]:
    """The section's figures, drawn from ``result`` alone: robust accuracy of each defense under transfer PGD,
    FPA, GMSA-AVG and GMSA-MIN (bars), and URejectron against τ (Figure 1)."""
    from ._figures import bars, urejectron_curves

    out = []
    fig = bars(result)
    if fig is not None:
        out.append(fig)
    if "urejectron" in result.tables:
        out.append(urejectron_curves(result))
    return out


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
