"""Leaderboard ranking models by their robustness to uncertainty attacks (paper Table IV).

Columns: clean accuracy, robust accuracy (our own PGD misclassification attack under the same budget —
the paper copies RobustBench's AutoAttack numbers instead), MUS μ/σ (Eq. 12) and MSUS μ/σ (Eq. 13);
rows sorted by MUS μ ascending (smaller span = more robust uncertainty).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ._compat import import_robustbench
from ._validation import (
    check_choice,
    check_eps,
    check_images,
    check_model,
    check_norm,
    check_positive_int,
    check_seed,
)
from .attacks import MisclassificationAttack
from .span import UncertaintySpan, uncertainty_span

__all__ = [
    "LeaderboardRow",
    "Leaderboard",
    "rank_models",
    "robustbench_checkpoint_path",
    "load_robustbench_models",
    "robustbench_leaderboard",
]

COLUMNS = ["rank", "model", "clean_acc", "robust_acc", "mus_mean", "mus_std", "msus_mean", "msus_std"]


@dataclass(frozen=True)
class LeaderboardRow:
    """One model's Table IV row."""

    model: str
    clean_acc: float
    robust_acc: float
    mus_mean: float
    mus_std: float
    msus_mean: float
    msus_std: float

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in COLUMNS[1:]}


@dataclass(frozen=True)
class Leaderboard:
    """Rows sorted by MUS μ (ascending), the spans behind them, and the models skipped with the reason."""

    eps: float
    norm: str
    steps: int
    rows: tuple[LeaderboardRow, ...]
    spans: Mapping[str, UncertaintySpan]
    skipped: Mapping[str, str]

    @property
    def columns(self) -> list[str]:
        return list(COLUMNS)

    def table(self) -> list[list]:
        """Rows as lists in :attr:`columns` order (rank starts at 1)."""
        return [[i + 1, *r.to_dict().values()] for i, r in enumerate(self.rows)]

    def to_dict(self) -> dict:
        return {"eps": self.eps, "norm": self.norm, "steps": self.steps, "columns": self.columns,
                "rows": [r.to_dict() for r in self.rows], "skipped": dict(self.skipped)}


def rank_models(
    models: Mapping[str, nn.Module],
    x: torch.Tensor,
    y: torch.Tensor,
    eps: float,
    *,
    norm: str = "Linf",
    steps: int = 150,
    robust_steps: int | None = None,
    seed: int | None = 0,
    optimizer: str = "pgd",
    batch_size: int = 256,
    progress: bool = False,
) -> Leaderboard:
    """Rank arbitrary torch classifiers by MUS on ``(x, y)`` under budget ``eps`` (Table IV).

    ``robust_steps`` (default ``steps``) sets the misclassification PGD used for robust accuracy.
    """
    if not isinstance(models, Mapping) or not models:
        raise TypeError("models must be a non-empty mapping name -> torch.nn.Module")
    for name, m in models.items():
        check_model(m, f"models[{name!r}]")
    check_images(x)
    if not isinstance(y, torch.Tensor) or y.dtype not in (torch.int64, torch.int32) or y.shape != (x.shape[0],):
        raise TypeError(f"y must be an integer tensor of shape ({x.shape[0]},)")
    norm = check_norm(norm)
    e = check_eps(eps)
    if not isinstance(e, float):
        raise TypeError("eps must be a scalar budget")
    steps = check_positive_int(steps, "steps", minimum=0)
    robust_steps = steps if robust_steps is None else check_positive_int(robust_steps, "robust_steps", minimum=0)
    seed = check_seed(seed)
    optimizer = check_choice(optimizer, "optimizer", ("pgd", "apgd"))
    y_np = y.cpu().numpy()
    rows, spans = [], {}
    for name, model in models.items():
        sp = uncertainty_span(model, x, e, norm, steps, seed, optimizer=optimizer, batch_size=batch_size, progress=progress)
        adv = MisclassificationAttack(steps=robust_steps, optimizer=optimizer, batch_size=batch_size, progress=progress)(
            model, x, e, norm=norm, seed=seed, y=y
        )
        m, s = sp.mus, sp.msus
        rows.append(LeaderboardRow(
            model=name,
            clean_acc=float(np.mean(sp.pred_clean == y_np)),
            robust_acc=float(np.mean(adv.pred_adv == y_np)),
            mus_mean=m.mean, mus_std=m.std, msus_mean=s.mean, msus_std=s.std,
        ))
        spans[name] = sp
    rows.sort(key=lambda r: r.mus_mean)
    return Leaderboard(e, norm, steps, tuple(rows), spans, {})


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

    Note: RobustBench's own loader calls ``torch.load`` on the checkpoint files; only use a
    ``model_dir`` you trust.
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
        models[n] = load_model(model_name=n, model_dir=str(model_dir), dataset=dataset, threat_model=threat_model).to(device).eval()
    return models, skipped


def robustbench_leaderboard(
    names: Sequence[str],
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    model_dir: str | Path,
    dataset: str = "cifar10",
    threat_model: str = "Linf",
    eps: float = 8 / 255,
    steps: int = 150,
    seed: int | None = 0,
    device: str | torch.device = "cpu",
    batch_size: int = 256,
    progress: bool = False,
) -> Leaderboard:
    """Table IV for RobustBench models present in ``model_dir`` (paper: CIFAR-10 at 8/255, ImageNet at
    4/255, L∞, 150 steps, 8000 test points). Models without a checkpoint are listed in ``skipped``."""
    models, skipped = load_robustbench_models(names, model_dir, dataset=dataset, threat_model=threat_model, device=device)
    if not models:
        return Leaderboard(float(eps), threat_model, steps, (), {}, skipped)
    norm = threat_model if threat_model in ("Linf", "L2") else "Linf"
    board = rank_models(models, x, y, eps, norm=norm, steps=steps, seed=seed, batch_size=batch_size, progress=progress)
    return Leaderboard(board.eps, board.norm, board.steps, board.rows, board.spans, skipped)
