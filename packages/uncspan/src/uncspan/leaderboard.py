"""Leaderboard ranking models by their robustness to uncertainty attacks (paper Table IV).

Columns: clean accuracy, robust accuracy (our own PGD misclassification attack under the same budget —
the paper copies RobustBench's AutoAttack numbers instead), MUS μ/σ (Eq. 12) and MSUS μ/σ (Eq. 13);
rows sorted by MUS μ ascending (smaller span = more robust uncertainty).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ._compat import import_robustbench
from ._data import check_data, labels_of
from ._validation import (
    check_choice,
    check_eps,
    check_model,
    check_norm,
    check_positive_int,
    check_seed,
)
from .attacks import STRONGEST_UNDER_OBJECTIVES, MisclassificationAttack, UnderConfidenceAttack
from .intervals import clopper_pearson
from .span import UncertaintySpan, uncertainty_span

__all__ = [
    "LeaderboardRow",
    "Leaderboard",
    "rank_models",
    "leaderboard_row",
    "robustbench_checkpoint_path",
    "load_robustbench_models",
    "robustbench_timm_name",
    "robustbench_leaderboard",
]

COLUMNS = ["rank", "model", "adversarially_trained", "clean_acc", "clean_acc_ci_low", "clean_acc_ci_high",
           "robust_acc", "robust_acc_ci_low", "robust_acc_ci_high", "mus_mean", "mus_mean_ci_low",
           "mus_mean_ci_high", "mus_std", "msus_mean", "msus_std", "entropy_clean", "entropy_over", "entropy_under"]


@dataclass(frozen=True)
class LeaderboardRow:
    """One model's Table IV row: accuracies with Clopper-Pearson 95 % intervals, MUS μ with its bootstrap
    95 % interval, MUS σ, MSUS μ/σ, the mean entropies clean / after the over / after the under attack (nats);
    ``adversarially_trained`` is what the caller declared (``None``: not stated)."""

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

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in COLUMNS[1:]}


@dataclass(frozen=True)
class Leaderboard:
    """Rows sorted by MUS μ (ascending), the spans behind them, and the models skipped with the reason.

    ``pred_robust`` / ``conf_robust``: per model, the per-sample prediction and top-class probability after the
    misclassification attack behind robust accuracy (``robust_acc`` is the mean of ``pred_robust == y``)."""

    eps: float
    norm: str
    steps: int
    rows: tuple[LeaderboardRow, ...]
    spans: Mapping[str, UncertaintySpan]
    skipped: Mapping[str, str]
    pred_robust: Mapping[str, np.ndarray] = field(default_factory=dict)
    conf_robust: Mapping[str, np.ndarray] = field(default_factory=dict)

    @property
    def columns(self) -> list[str]:
        return list(COLUMNS)

    def table(self) -> list[list]:
        """Rows as lists in :attr:`columns` order (rank starts at 1)."""
        return [[i + 1, *r.to_dict().values()] for i, r in enumerate(self.rows)]

    def to_dict(self, per_sample: bool = False) -> dict:
        """JSON-safe dict; ``per_sample=True`` adds the spans and the predictions under the misclassification
        attack, so that :meth:`from_dict` restores the whole board (e.g. from a checkpoint)."""
        d = {"eps": self.eps, "norm": self.norm, "steps": self.steps, "columns": self.columns,
             "rows": [r.to_dict() for r in self.rows], "skipped": dict(self.skipped)}
        if per_sample:
            d["spans"] = {k: v.to_dict() for k, v in self.spans.items()}
            d["pred_robust"] = {k: np.asarray(v).tolist() for k, v in self.pred_robust.items()}
            d["conf_robust"] = {k: np.asarray(v).tolist() for k, v in self.conf_robust.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Leaderboard:
        """Rebuild from :meth:`to_dict` output (spans and robust predictions only when it has them)."""
        return cls(float(d["eps"]), str(d["norm"]), int(d["steps"]), tuple(LeaderboardRow(**r) for r in d["rows"]),
                   {k: UncertaintySpan.from_dict(v) for k, v in d.get("spans", {}).items()}, dict(d["skipped"]),
                   {k: np.asarray(v, dtype=np.int64) for k, v in d.get("pred_robust", {}).items()},
                   {k: np.asarray(v, dtype=np.float64) for k, v in d.get("conf_robust", {}).items()})

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
                  for k in ("spans", "skipped", "pred_robust", "conf_robust")}
        return cls(first.eps, first.norm, first.steps, tuple(rows), **merged)


def leaderboard_row(name: str, span: UncertaintySpan, y: object, pred_robust: object, *,
                    adversarially_trained: bool | None = None, seed: int = 0, n_boot: int = 2000) -> LeaderboardRow:
    """Table IV row from a span, the true labels and the predictions under the misclassification attack; the
    MUS interval is a percentile bootstrap with ``n_boot`` replicates drawn with ``seed``."""
    y_np = np.asarray(y.cpu().numpy() if isinstance(y, torch.Tensor) else y)
    pred_robust = np.asarray(pred_robust)
    if y_np.shape != span.pred_clean.shape or pred_robust.shape != y_np.shape:
        raise ValueError("y and pred_robust must have one entry per sample of the span")
    n = int(y_np.size)
    k_clean, k_rob = int(np.sum(span.pred_clean == y_np)), int(np.sum(pred_robust == y_np))
    m, s = span.mus, span.msus
    mlo, mhi = span.mus_ci(seed=seed, n_boot=check_positive_int(n_boot, "n_boot"))
    clo, chi = clopper_pearson(k_clean, n)
    rlo, rhi = clopper_pearson(k_rob, n)
    return LeaderboardRow(
        model=name, clean_acc=k_clean / n, robust_acc=k_rob / n, mus_mean=m.mean, mus_std=m.std,
        msus_mean=s.mean, msus_std=s.std, clean_acc_ci_low=clo, clean_acc_ci_high=chi, robust_acc_ci_low=rlo,
        robust_acc_ci_high=rhi, mus_mean_ci_low=mlo, mus_mean_ci_high=mhi,
        adversarially_trained=None if adversarially_trained is None else bool(adversarially_trained),
        entropy_clean=float(span.entropy_clean.mean()), entropy_over=float(span.entropy_over.mean()),
        entropy_under=float(span.entropy_under.mean()),
    )


def rank_models(
    models: Mapping[str, nn.Module],
    x: torch.Tensor | Iterable,
    y: torch.Tensor | None,
    eps: float,
    *,
    norm: str = "Linf",
    steps: int = 150,
    robust_steps: int | None = None,
    seed: int | None = 0,
    optimizer: str = "pgd",
    restarts: int = 1,
    under_objective: str | Sequence[str] = STRONGEST_UNDER_OBJECTIVES,
    adversarially_trained: Mapping[str, bool] | None = None,
    n_boot: int = 2000,
    batch_size: int = 256,
    progress: bool = False,
) -> Leaderboard:
    """Rank arbitrary torch classifiers by MUS on ``(x, y)`` under budget ``eps`` (Table IV).

    ``x`` is a tensor with labels ``y``, or a re-iterable loader of ``(x, y)`` batches (``y=None``).
    The span uses the strongest under-confidence setting by default (both objectives, ``restarts`` random
    restarts, per-sample best; see :func:`uncertainty_span`). ``robust_steps`` (default ``steps``) sets the
    misclassification PGD used for robust accuracy. ``adversarially_trained`` declares, per model name,
    whether it was adversarially trained (carried into the rows; never guessed from the name). ``n_boot``:
    bootstrap replicates of the MUS intervals. The board keeps, per model, the span and the per-sample
    predictions under the misclassification attack (``pred_robust``, ``conf_robust``).
    """
    if not isinstance(models, Mapping) or not models:
        raise TypeError("models must be a non-empty mapping name -> torch.nn.Module")
    for name, m in models.items():
        check_model(m, f"models[{name!r}]")
    check_data(x, reiterable=True)
    y = labels_of(x, y)
    if adversarially_trained is None:
        adversarially_trained = {}
    if not isinstance(adversarially_trained, Mapping) or not set(adversarially_trained) <= set(models):
        raise ValueError("adversarially_trained must map names of models to bool")
    norm = check_norm(norm)
    e = check_eps(eps)
    if not isinstance(e, float):
        raise TypeError("eps must be a scalar budget")
    steps = check_positive_int(steps, "steps", minimum=0)
    robust_steps = steps if robust_steps is None else check_positive_int(robust_steps, "robust_steps", minimum=0)
    seed = check_seed(seed)
    optimizer = check_choice(optimizer, "optimizer", ("pgd", "apgd"))
    n_boot = check_positive_int(n_boot, "n_boot")
    UnderConfidenceAttack(objective=under_objective, restarts=restarts)  # validate before any attack runs
    y_arg = y if isinstance(x, torch.Tensor) else None
    rows, spans, pred_robust, conf_robust = [], {}, {}, {}
    for name, model in models.items():
        sp = uncertainty_span(model, x, e, norm, steps, seed, optimizer=optimizer, restarts=restarts,
                              under_objective=under_objective, batch_size=batch_size, progress=progress)
        adv = MisclassificationAttack(steps=robust_steps, optimizer=optimizer, batch_size=batch_size,
                                      progress=progress, keep_adv=False)(model, x, e, norm=norm, seed=seed, y=y_arg)
        rows.append(leaderboard_row(name, sp, y, adv.pred_adv, adversarially_trained=adversarially_trained.get(name),
                                    seed=0 if seed is None else seed, n_boot=n_boot))
        spans[name], pred_robust[name], conf_robust[name] = sp, adv.pred_adv, adv.conf_adv
    rows.sort(key=lambda r: r.mus_mean)
    return Leaderboard(e, norm, steps, tuple(rows), spans, {}, pred_robust, conf_robust)


def robustbench_checkpoint_path(model_dir: str | Path, name: str, dataset: str = "cifar10", threat_model: str = "Linf") -> Path | None:
    """Where RobustBench keeps ``name``'s checkpoint under ``model_dir`` (``<dir>/<dataset>/<threat>/<name>.pt``,
    or the ``<name>.pt_m0.pt`` files of an ensemble); ``None`` when absent."""
    base = Path(model_dir) / dataset / threat_model
    single = base / f"{name}.pt"
    if single.is_file():
        return single
    first_member = base / f"{name}.pt_m0.pt"
    return first_member if first_member.is_file() else None


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

    Entries RobustBench routes through timm are built by timm without weights and loaded from the local
    checkpoint (RobustBench itself would download them). Note: for the other entries RobustBench's own
    loader calls ``torch.load`` on the checkpoint files; only use a ``model_dir`` you trust.
    """
    check_choice(dataset, "dataset", ("cifar10", "cifar100", "imagenet"))
    check_choice(threat_model, "threat_model", ("Linf", "L2", "corruptions"))
    if isinstance(names, str) or not names:
        raise TypeError("names must be a non-empty sequence of RobustBench model names")
    present = {n: robustbench_checkpoint_path(model_dir, n, dataset, threat_model) for n in names}
    skipped = {n: f"no checkpoint under {Path(model_dir) / dataset / threat_model}" for n, p in present.items() if p is None}
    models: dict[str, nn.Module] = {}
    if len(skipped) == len(present):
        return models, skipped
    import_robustbench()
    from robustbench.utils import load_model

    for n, p in present.items():
        if p is None:
            continue
        timm_name = robustbench_timm_name(n, dataset, threat_model)
        if timm_name is not None:
            # RobustBench's load_model calls timm.create_model(pretrained=True) for these entries, which
            # downloads the weights even with the checkpoint on disk; build the architecture without weights
            # and load the local file instead (tensors only: weights_only=True).
            model = _load_timm_checkpoint(timm_name, p, _NUM_CLASSES[dataset])
        else:
            model = load_model(model_name=n, model_dir=str(model_dir), dataset=dataset, threat_model=threat_model)
        models[n] = model.to(device).eval()
    return models, skipped


_NUM_CLASSES = {"cifar10": 10, "cifar100": 100, "imagenet": 1000}


def robustbench_timm_name(name: str, dataset: str = "cifar10", threat_model: str = "Linf") -> str | None:
    """The timm architecture RobustBench routes ``name`` to (its rule: lower-cased name, ``-`` → ``_``,
    then ``_<dataset>_<threat>``), or ``None`` when timm has no such model (or is not installed)."""
    try:
        import timm
    except ImportError:
        return None
    candidate = f"{name.lower().replace('-', '_')}_{dataset.lower()}_{threat_model.lower()}"
    return candidate if timm.is_model(candidate) else None


def _load_timm_checkpoint(timm_name: str, path: Path, num_classes: int) -> nn.Module:
    import timm

    state = torch.load(path, map_location="cpu", weights_only=True)
    for key in ("state_dict", "model"):
        if isinstance(state, Mapping) and key in state and isinstance(state[key], Mapping):
            state = state[key]
    if not isinstance(state, Mapping):
        raise ValueError(f"checkpoint {path} holds no state dict")
    state = {(k[len("module."):] if k.startswith("module.") else k): v for k, v in state.items()}
    model = timm.create_model(timm_name, num_classes=num_classes, pretrained=False)
    model.load_state_dict(state)
    return model


def robustbench_leaderboard(
    names: Sequence[str],
    x: torch.Tensor | Iterable,
    y: torch.Tensor | None,
    *,
    model_dir: str | Path,
    dataset: str = "cifar10",
    threat_model: str = "Linf",
    eps: float = 8 / 255,
    steps: int = 150,
    robust_steps: int | None = None,
    seed: int | None = 0,
    optimizer: str = "pgd",
    restarts: int = 1,
    under_objective: str | Sequence[str] = STRONGEST_UNDER_OBJECTIVES,
    adversarially_trained: Mapping[str, bool] | None = None,
    n_boot: int = 2000,
    device: str | torch.device = "cpu",
    batch_size: int = 256,
    progress: bool = False,
) -> Leaderboard:
    """Table IV for RobustBench models present in ``model_dir`` (paper: CIFAR-10 at 8/255, ImageNet at
    4/255, L∞, 150 steps, 8000 test points), with the strongest under-confidence attack by default and 95 %
    intervals. Models without a checkpoint are listed in ``skipped``; nothing is downloaded."""
    models, skipped = load_robustbench_models(names, model_dir, dataset=dataset, threat_model=threat_model, device=device)
    if not models:
        return Leaderboard(float(eps), threat_model, steps, (), {}, skipped)
    norm = threat_model if threat_model in ("Linf", "L2") else "Linf"
    flags = {k: v for k, v in (adversarially_trained or {}).items() if k in models}
    board = rank_models(models, x, y, eps, norm=norm, steps=steps, robust_steps=robust_steps, seed=seed,
                        optimizer=optimizer, restarts=restarts, under_objective=under_objective,
                        adversarially_trained=flags, n_boot=n_boot, batch_size=batch_size, progress=progress)
    return Leaderboard(board.eps, board.norm, board.steps, board.rows, board.spans, skipped, board.pred_robust,
                       board.conf_robust)
