"""Leaderboard ranking models by their robustness to uncertainty attacks (paper Table IV).

Columns: clean accuracy, robust accuracy (standard AutoAttack by default, as RobustBench reports it and the
paper copies; the attack is named in the ``robust_attack`` column), this package's PGD robust accuracy beside it
with the paired difference PGD − AutoAttack, MUS μ/σ (Eq. 12) and MSUS μ/σ (Eq. 13); rows sorted by MUS μ
ascending (smaller span = more robust uncertainty).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_choice, check_int, check_labels
from robustsuite_common.experiment import chance_rate
from robustsuite_common.intervals import at_chance, proportion

from ._data import check_data, check_label_range, iter_batches, labels_of
from ._model import check_model, check_outputs, n_classes, using
from ._validation import OPTIMIZERS, check_eps, check_norm, check_seed
from .attacks import STRONGEST_UNDER_OBJECTIVES, MisclassificationAttack, UnderConfidenceAttack
from .robust import AutoAttack, RobustOutcome, _check_attack, pgd_gap, robust_accuracy
from .span import UncertaintySpan, uncertainty_span

__all__ = [
    "LeaderboardRow",
    "Leaderboard",
    "RankConfig",
    "rank_models",
    "leaderboard_row",
    "load_robustbench_models",
    "robustbench_leaderboard",
]

COLUMNS = ["rank", "model", "adversarially_trained", "clean_acc", "clean_acc_ci_low", "clean_acc_ci_high",
           "robust_acc", "robust_acc_ci_low", "robust_acc_ci_high", "robust_attack", "pgd_robust_acc",
           "pgd_robust_acc_ci_low", "pgd_robust_acc_ci_high", "pgd_minus_robust", "pgd_minus_robust_ci_low",
           "pgd_minus_robust_ci_high", "pgd_overstates", "mus_mean", "mus_mean_ci_low", "mus_mean_ci_high",
           "mus_std", "msus_mean", "msus_std", "entropy_clean", "entropy_over", "entropy_under", "at_chance"]


@dataclass(frozen=True)
class LeaderboardRow:
    """One model's Table IV row: accuracies with Clopper-Pearson 95 % intervals (``robust_acc`` under the attack
    named in ``robust_attack``; ``pgd_robust_acc`` under this package's PGD when it was computed beside
    AutoAttack, with the paired difference ``pgd_minus_robust`` and ``pgd_overstates`` = its interval lies above
    0), MUS μ with its BCa bootstrap 95 % interval, MUS σ, MSUS μ/σ, the mean entropies clean / after the over /
    after the under attack (nats); ``adversarially_trained`` is what the caller declared (``None``: not stated);
    ``at_chance``: the clean accuracy's interval reaches the majority-class share of the labels (the attack
    numbers of such a model carry no information)."""

    model: str
    clean_acc: float
    robust_acc: float
    mus_mean: float
    mus_std: float
    msus_mean: float
    msus_std: float
    clean_acc_ci_low: float = float("nan")
    clean_acc_ci_high: float = float("nan")
    robust_acc_ci_low: float = float("nan")
    robust_acc_ci_high: float = float("nan")
    mus_mean_ci_low: float = float("nan")
    mus_mean_ci_high: float = float("nan")
    adversarially_trained: bool | None = None
    entropy_clean: float = float("nan")
    entropy_over: float = float("nan")
    entropy_under: float = float("nan")
    robust_attack: str = ""
    pgd_robust_acc: float | None = None
    pgd_robust_acc_ci_low: float | None = None
    pgd_robust_acc_ci_high: float | None = None
    pgd_minus_robust: float | None = None
    pgd_minus_robust_ci_low: float | None = None
    pgd_minus_robust_ci_high: float | None = None
    pgd_overstates: bool | None = None
    at_chance: bool = False

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in COLUMNS[1:]}


@dataclass(frozen=True)
class Leaderboard:
    """Rows sorted by MUS μ (ascending), the spans behind them, and the models skipped with the reason.

    ``robust``: per model, the per-sample outcome of the attack behind ``robust_acc`` (standard AutoAttack by
    default); ``pgd``: the outcome of this package's PGD where it ran beside AutoAttack."""

    eps: float
    norm: str
    steps: int
    rows: tuple[LeaderboardRow, ...]
    spans: Mapping[str, UncertaintySpan]
    skipped: Mapping[str, str]
    robust: Mapping[str, RobustOutcome] = field(default_factory=dict)
    pgd: Mapping[str, RobustOutcome] = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        return list(COLUMNS)

    @property
    def pred_robust(self) -> dict[str, np.ndarray]:
        """Per model, the predictions on the adversarial inputs of the robust-accuracy attack."""
        return {k: v.pred_adv for k, v in self.robust.items()}

    def table(self) -> list[list]:
        """Rows as lists in :attr:`columns` order (rank starts at 1)."""
        return [[i + 1, *r.to_dict().values()] for i, r in enumerate(self.rows)]

    def to_dict(self, per_sample: bool = False) -> dict:
        """JSON-safe dict; ``per_sample=True`` adds the spans and the per-sample robust outcomes, so that
        :meth:`from_dict` restores the whole board (e.g. from a checkpoint)."""
        d = {"eps": self.eps, "norm": self.norm, "steps": self.steps, "columns": self.columns,
             "rows": [r.to_dict() for r in self.rows], "skipped": dict(self.skipped)}
        if per_sample:
            d["spans"] = {k: v.to_dict() for k, v in self.spans.items()}
            d["robust"] = {k: v.to_dict() for k, v in self.robust.items()}
            d["pgd"] = {k: v.to_dict() for k, v in self.pgd.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Leaderboard:
        """Rebuild from :meth:`to_dict` output (spans and robust outcomes only when it has them)."""
        return cls(float(d["eps"]), str(d["norm"]), int(d["steps"]), tuple(LeaderboardRow(**r) for r in d["rows"]),
                   {k: UncertaintySpan.from_dict(v) for k, v in d.get("spans", {}).items()}, dict(d["skipped"]),
                   {k: RobustOutcome.from_dict(v) for k, v in d.get("robust", {}).items()},
                   {k: RobustOutcome.from_dict(v) for k, v in d.get("pgd", {}).items()})

    @classmethod
    def merge(cls, *boards: Leaderboard) -> Leaderboard:
        """One leaderboard from boards ranked separately on the same test points and budget (e.g. one model at
        a time, each checkpointed): rows re-sorted by MUS μ (ties keep the given order), spans in the given
        order."""
        if not boards or not all(isinstance(b, Leaderboard) for b in boards):
            raise TypeError("boards must be one or more Leaderboard objects")
        first = boards[0]
        if any((b.eps, b.norm, b.steps) != (first.eps, first.norm, first.steps) for b in boards):
            raise ValueError("boards must share eps, norm and steps")
        names = [r.model for b in boards for r in b.rows]
        if len(set(names)) != len(names):
            raise ValueError(f"boards must rank distinct models; got {names}")
        rows = sorted((r for b in boards for r in b.rows), key=lambda r: r.mus_mean)
        merged = {k: {n: v for b in boards for n, v in getattr(b, k).items()}
                  for k in ("spans", "skipped", "robust", "pgd")}
        return cls(first.eps, first.norm, first.steps, tuple(rows), **merged)


def leaderboard_row(name: str, span: UncertaintySpan, y: object, robust: RobustOutcome, *,
                    pgd: RobustOutcome | None = None, adversarially_trained: bool | None = None, seed: int = 0,
                    n_boot: int = 2000) -> LeaderboardRow:
    """Table IV row from a span, the true labels and the per-sample outcome of the robust-accuracy attack
    (``pgd``: this package's PGD beside it, for the paired gap); the MUS and gap intervals are BCa bootstraps
    with ``n_boot`` resamples drawn with ``seed``."""
    if not isinstance(span, UncertaintySpan):
        raise TypeError(f"span must be an UncertaintySpan (from uncertainty_span), got {type(span).__name__}")
    y_np = check_labels("y", y, length=span.pred_clean.size)
    if not isinstance(robust, RobustOutcome) or (pgd is not None and not isinstance(pgd, RobustOutcome)):
        raise TypeError("robust and pgd must be RobustOutcome objects (from uncspan.robust_accuracy)")
    if np.shape(robust.robust) != y_np.shape or (pgd is not None and np.shape(pgd.robust) != y_np.shape):
        raise ValueError("robust and pgd must have one outcome per sample of the span")
    n_boot = check_int("n_boot", n_boot, ge=1)
    n = int(y_np.size)
    k_clean = int(np.sum(span.pred_clean == y_np))
    m, s = span.mus, span.msus
    mus_iv = span.mus_ci(seed=seed, n_boot=n_boot)
    clean, rob = proportion(k_clean, n), robust.interval()
    extra: dict = {}
    if pgd is not None:
        p = pgd.interval()
        gap = pgd_gap(pgd, robust, seed=seed, n_boot=n_boot)
        extra = {"pgd_robust_acc": p.estimate, "pgd_robust_acc_ci_low": p.low, "pgd_robust_acc_ci_high": p.high,
                 "pgd_minus_robust": gap.difference.estimate, "pgd_minus_robust_ci_low": gap.difference.low,
                 "pgd_minus_robust_ci_high": gap.difference.high, "pgd_overstates": gap.overstates}
    return LeaderboardRow(
        model=name, clean_acc=k_clean / n, robust_acc=rob.estimate, mus_mean=m.mean, mus_std=m.std,
        msus_mean=s.mean, msus_std=s.std, clean_acc_ci_low=clean.low, clean_acc_ci_high=clean.high,
        robust_acc_ci_low=rob.low, robust_acc_ci_high=rob.high, mus_mean_ci_low=mus_iv.low,
        mus_mean_ci_high=mus_iv.high,
        adversarially_trained=None if adversarially_trained is None else bool(adversarially_trained),
        entropy_clean=float(span.entropy_clean.mean()), entropy_over=float(span.entropy_over.mean()),
        entropy_under=float(span.entropy_under.mean()), robust_attack=robust.attack,
        at_chance=at_chance(k_clean, n, chance_rate(y_np)), **extra,
    )


@dataclass(frozen=True)
class RankConfig:
    """The settings of a Table IV ranking (:func:`rank_models`, :func:`robustbench_leaderboard`), checked when built.

    ``eps`` (budget, paper: 8/255 CIFAR-10, 4/255 ImageNet), ``norm``, ``steps`` of each span attack (paper: 150),
    ``restarts``, ``optimizer`` and ``under_objective`` of the span (the strongest setting by default, see
    :func:`uncertainty_span`); ``attack`` behind the robust-accuracy column (standard AutoAttack by default, seeded
    with ``seed``; ``"pgd"`` or a configured :class:`MisclassificationAttack` for this package's PGD), with
    ``pgd_beside`` this package's PGD (``robust_steps`` steps, default ``steps``) beside AutoAttack; ``n_boot``
    bootstrap resamples of the MUS and gap intervals; ``batch_size`` and ``progress`` change how, not what, is
    computed."""

    eps: float = 8 / 255
    norm: str = "Linf"
    steps: int = 150
    robust_steps: int | None = None
    seed: int | None = 0
    optimizer: str = "pgd"
    restarts: int = 1
    under_objective: str | Sequence[str] = STRONGEST_UNDER_OBJECTIVES
    attack: str | AutoAttack | MisclassificationAttack = "autoattack"
    pgd_beside: bool = True
    n_boot: int = 2000
    batch_size: int = 256
    progress: bool = False

    def __post_init__(self) -> None:
        e = check_eps(self.eps)
        if not isinstance(e, float):
            raise TypeError("eps must be a scalar budget")
        steps = check_int("steps", self.steps, ge=0)
        checked = {
            "eps": e, "norm": check_norm(self.norm), "steps": steps, "seed": check_seed(self.seed),
            "robust_steps": None if self.robust_steps is None else check_int("robust_steps", self.robust_steps, ge=0),
            "optimizer": str(check_choice("optimizer", self.optimizer, OPTIMIZERS)),
            "n_boot": check_int("n_boot", self.n_boot, ge=1), "attack": _check_attack(self.attack)}
        UnderConfidenceAttack(objective=self.under_objective, restarts=self.restarts)  # validate before any attack
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @property
    def pgd_steps(self) -> int:
        """Steps of this package's PGD robust-accuracy attack: ``robust_steps``, default ``steps``."""
        return self.steps if self.robust_steps is None else self.robust_steps


def _settings(fn: str, config: RankConfig | None, old: dict[str, Any]) -> RankConfig:
    """``config`` (default :class:`RankConfig`) with the settings passed the old way, as keywords (deprecated)."""
    if config is not None and not isinstance(config, RankConfig):
        raise TypeError(f"config must be an uncspan.RankConfig, got {type(config).__name__}")
    config = RankConfig() if config is None else config
    if not old:
        return config
    unknown = sorted(set(old) - {f.name for f in fields(RankConfig)})
    if unknown:
        raise TypeError(f"{fn}() got unexpected keyword arguments {unknown}")
    warnings.warn(f"{fn}({', '.join(f'{k}=...' for k in old)}) is deprecated; pass config=uncspan.RankConfig(...)",
                  DeprecationWarning, stacklevel=3)
    return replace(config, **old)


def rank_models(
    models: Mapping[str, nn.Module],
    x: torch.Tensor | Iterable,
    y: torch.Tensor | None,
    *,
    config: RankConfig | None = None,
    adversarially_trained: Mapping[str, bool] | None = None,
    outputs: str = "logits",
    **old_settings: Any,
) -> Leaderboard:
    """Rank arbitrary torch classifiers by MUS on ``(x, y)`` with the settings ``config`` (Table IV).

    ``x`` is a tensor with labels ``y``, or a re-iterable loader of ``(x, y)`` batches (``y=None``). ``config``
    (a :class:`RankConfig`; default: its defaults) holds the budget, the span's attacks, the robust-accuracy attack
    (standard AutoAttack with this package's PGD beside it by default, so the gap is visible) and the bootstrap;
    its fields passed as keywords (``eps=0.1, steps=20``) still work for one release, with a
    ``DeprecationWarning``. ``adversarially_trained`` declares, per model name, whether it was adversarially trained
    (carried into the rows; never guessed from the name). The board keeps, per model, the span and the per-sample
    robust outcomes. Models run in eval mode and come back as they came.
    """
    cfg = _settings("rank_models", config, old_settings)
    if not isinstance(models, Mapping) or not models:
        raise TypeError("models must be a non-empty mapping name -> torch.nn.Module")
    for name, m in models.items():
        check_model(f"models[{name!r}]", m)
    check_data(x, reiterable=True)
    y = labels_of(x, y)
    if adversarially_trained is None:
        adversarially_trained = {}
    if not isinstance(adversarially_trained, Mapping) or not set(adversarially_trained) <= set(models):
        raise ValueError("adversarially_trained must map names of models to bool")
    outputs = check_outputs(outputs)
    seed0 = 0 if cfg.seed is None else cfg.seed
    pgd = MisclassificationAttack(steps=cfg.pgd_steps, optimizer=cfg.optimizer, batch_size=cfg.batch_size,
                                  progress=cfg.progress, keep_adv=False)
    rows, spans, robust, beside = [], {}, {}, {}
    for name, model in models.items():
        with using(model, outputs) as net:
            first = next(iter_batches(x, None, 1))[0]
            check_label_range("y", y, n_classes(net, first))  # labels against the model's classes, before any attack
            sp = uncertainty_span(net, x, eps=cfg.eps, norm=cfg.norm, steps=cfg.steps, seed=cfg.seed,
                                  optimizer=cfg.optimizer, restarts=cfg.restarts, under_objective=cfg.under_objective,
                                  batch_size=cfg.batch_size, progress=cfg.progress)
            yx = y if isinstance(x, torch.Tensor) else None
            rob = robust_accuracy(net, x, yx, eps=cfg.eps, norm=cfg.norm,
                                  attack=pgd if cfg.attack == "pgd" else cfg.attack, seed=seed0,
                                  batch_size=cfg.batch_size, progress=cfg.progress)
            extra = None
            if cfg.pgd_beside and rob.kind == "autoattack":
                extra = robust_accuracy(net, x, yx, eps=cfg.eps, norm=cfg.norm, attack=pgd, seed=seed0,
                                        batch_size=cfg.batch_size, progress=cfg.progress)
        rows.append(leaderboard_row(name, sp, y, rob, pgd=extra, adversarially_trained=adversarially_trained.get(name),
                                    seed=seed0, n_boot=cfg.n_boot))
        spans[name], robust[name] = sp, rob
        if extra is not None:
            beside[name] = extra
    rows.sort(key=lambda r: r.mus_mean)
    return Leaderboard(cfg.eps, cfg.norm, cfg.steps, tuple(rows), spans, {}, robust, beside)


def load_robustbench_models(
    names: Sequence[str],
    model_dir: str | Path,
    *,
    dataset: str = "cifar10",
    threat_model: str = "Linf",
    device: str | torch.device = "cpu",
) -> tuple[dict[str, nn.Module], dict[str, str]]:
    """Load the RobustBench models whose checkpoints are already in ``model_dir`` (nothing is downloaded:
    a model without a local checkpoint is skipped with a reason). Returns ``(models, skipped)``.

    A thin wrapper over :func:`robustsuite_common.robustbench.load_robustbench_model` (the one RobustBench
    loader; entries RobustBench routes through timm are built without weights and loaded from the local file).
    For the other entries RobustBench's own loader calls ``torch.load`` on the checkpoint files; only use a
    ``model_dir`` you trust.
    """
    from robustsuite_common.robustbench import (
        DATASETS,
        THREAT_MODELS,
        checkpoint_path,
        load_robustbench_model,
    )

    check_choice("dataset", dataset, DATASETS)
    check_choice("threat_model", threat_model, THREAT_MODELS)
    if isinstance(names, str) or not names:
        raise TypeError("names must be a non-empty sequence of RobustBench model names")
    present = {n: checkpoint_path(model_dir, n, dataset, threat_model) for n in names}
    skipped = {n: f"no checkpoint under {Path(model_dir) / dataset / threat_model}" for n, p in present.items() if p is None}
    models: dict[str, nn.Module] = {}
    for n, p in present.items():
        if p is not None:
            models[n] = load_robustbench_model(n, model_dir=model_dir, dataset=dataset, threat_model=threat_model,
                                               extra="uncspan[robustbench]").to(device).eval()
    return models, skipped


def robustbench_leaderboard(
    names: Sequence[str],
    x: torch.Tensor | Iterable,
    y: torch.Tensor | None,
    *,
    model_dir: str | Path,
    dataset: str = "cifar10",
    threat_model: str = "Linf",
    config: RankConfig | None = None,
    adversarially_trained: Mapping[str, bool] | None = None,
    device: str | torch.device = "cpu",
    **old_settings: Any,
) -> Leaderboard:
    """Table IV for RobustBench models present in ``model_dir`` (paper: CIFAR-10 at 8/255, ImageNet at
    4/255, L∞, 150 steps, 8000 test points), with the settings ``config`` (:class:`RankConfig`; its defaults: the
    strongest under-confidence attack, robust accuracy by standard AutoAttack with PGD beside it, 95 % intervals;
    its norm is the threat model's). Models without a checkpoint are listed in ``skipped``; nothing is
    downloaded. ``config``'s fields passed as keywords still work for one release, with a ``DeprecationWarning``."""
    cfg = _settings("robustbench_leaderboard", config, old_settings)
    check_data(x, reiterable=True)  # the data first: nothing is loaded for points that would be refused
    labels_of(x, y)
    models, skipped = load_robustbench_models(names, model_dir, dataset=dataset, threat_model=threat_model,
                                              device=device)
    if not models:
        return Leaderboard(float(cfg.eps), threat_model, cfg.steps, (), {}, skipped)
    norm = threat_model if threat_model in ("Linf", "L2") else "Linf"
    flags = {k: v for k, v in (adversarially_trained or {}).items() if k in models}
    board = rank_models(models, x, y, config=replace(cfg, norm=norm), adversarially_trained=flags)
    return Leaderboard(board.eps, board.norm, board.steps, board.rows, board.spans, skipped, board.robust, board.pgd)
