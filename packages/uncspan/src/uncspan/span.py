"""Uncertainty span (paper §III-B): per-sample entropy range reachable in the budget, and its dataset
statistics MUS (Eq. 12) and MSUS (Eq. 13) with the standard deviations of Table IV."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_int
from robustsuite_common.intervals import Interval, mean_interval

from ._data import check_data
from ._model import check_model, check_outputs, using
from ._validation import check_eps, check_norm, check_seed
from .attacks import STRONGEST_UNDER_OBJECTIVES, AttackResult, OverConfidenceAttack, UnderConfidenceAttack

__all__ = ["UncertaintySpan", "SpanStatistic", "uncertainty_span", "mus", "msus"]


@dataclass(frozen=True)
class SpanStatistic:
    """Mean (μ) and standard deviation (σ, population, ddof=0) of a per-sample quantity over ``n`` samples."""

    mean: float
    std: float
    n: int

    def __float__(self) -> float:
        return self.mean

    def to_dict(self) -> dict:
        return {"mean": self.mean, "std": self.std, "n": self.n}


def _vector(values: object, name: str) -> np.ndarray:
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a 1-D array of entropies") from err
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array; got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite")
    return a


def _spans(entropy_under: object, entropy_over: object) -> np.ndarray:
    hu = _vector(entropy_under, "entropy_under")
    ho = _vector(entropy_over, "entropy_over")
    if hu.shape != ho.shape:
        raise ValueError(f"entropy_under and entropy_over must have the same length; got {hu.size} and {ho.size}")
    return hu - ho


def mus(entropy_under: object, entropy_over: object) -> SpanStatistic:
    """Mean Uncertainty Span, Eq. 12: ``E[H(f(x+δ↑)) − H(f(x+δ↓))]`` with its standard deviation."""
    s = _spans(entropy_under, entropy_over)
    return SpanStatistic(float(s.mean()), float(s.std()), int(s.size))


def msus(entropy_under: object, entropy_over: object) -> SpanStatistic:
    """Mean Squared Uncertainty Span, Eq. 13: ``E[(H(f(x+δ↑)) − H(f(x+δ↓)))²]`` with the standard deviation
    of the squared spans (Table IV's MSUS σ)."""
    s = _spans(entropy_under, entropy_over) ** 2
    return SpanStatistic(float(s.mean()), float(s.std()), int(s.size))


@dataclass(frozen=True)
class UncertaintySpan:
    """Per-sample entropies (nats) clean, after the over- and after the under-confidence attack, with the
    predictions and confidences (maximum softmax probability) behind them.

    Paper: the uncertainty span of §III, summarised by MUS and MSUS (Eqs. 12–13).
    """

    eps: float
    norm: str
    steps: int
    optimizer: str
    entropy_clean: np.ndarray
    entropy_over: np.ndarray
    entropy_under: np.ndarray
    pred_clean: np.ndarray
    pred_over: np.ndarray
    pred_under: np.ndarray
    conf_clean: np.ndarray
    conf_over: np.ndarray
    conf_under: np.ndarray

    @property
    def span(self) -> np.ndarray:
        """Per-sample uncertainty span ``H_under − H_over`` (≥ 0)."""
        return self.entropy_under - self.entropy_over

    @property
    def mus(self) -> SpanStatistic:
        return mus(self.entropy_under, self.entropy_over)

    @property
    def msus(self) -> SpanStatistic:
        return msus(self.entropy_under, self.entropy_over)

    def mus_ci(self, *, seed: int = 0, n_boot: int = 2000, level: float = 0.95) -> Interval:
        """MUS (the mean of the per-sample spans) with its BCa bootstrap interval
        (:func:`robustsuite_common.intervals.mean_interval`, ``n_boot`` resamples drawn with ``seed``); spans are
        >= 0, so the interval stays in [0, inf)."""
        return mean_interval(self.span, seed=seed, n_resamples=n_boot, level=level, bounds=(0.0, None))

    @classmethod
    def from_dict(cls, d: dict) -> UncertaintySpan:
        """Rebuild from :meth:`to_dict` output (e.g. a checkpoint of a finished unit of work)."""
        arrays = {k: np.asarray(d[k], dtype=np.int64 if k.startswith("pred") else np.float64)
                  for k in ("entropy_clean", "entropy_over", "entropy_under", "pred_clean", "pred_over",
                            "pred_under", "conf_clean", "conf_over", "conf_under")}
        return cls(eps=float(d["eps"]), norm=str(d["norm"]), steps=int(d["steps"]), optimizer=str(d["optimizer"]),
                   **arrays)

    def to_dict(self) -> dict:
        d = {"eps": self.eps, "norm": self.norm, "steps": self.steps, "optimizer": self.optimizer,
             "mus": self.mus.to_dict(), "msus": self.msus.to_dict()}
        for k in ("entropy_clean", "entropy_over", "entropy_under", "pred_clean", "pred_over", "pred_under",
                  "conf_clean", "conf_over", "conf_under"):
            d[k] = getattr(self, k).tolist()
        return d


def uncertainty_span(
    model: nn.Module,
    x: torch.Tensor | Iterable,
    *,
    eps: float,
    norm: str = "Linf",
    steps: int = 150,
    seed: int | None = 0,
    optimizer: str = "pgd",
    random_start: bool = False,
    restarts: int = 1,
    step_size: float | None = None,
    under_objective: str | Sequence[str] = STRONGEST_UNDER_OBJECTIVES,
    batch_size: int = 256,
    progress: bool = False,
    outputs: str = "logits",
) -> UncertaintySpan:
    """Run the over- (Eq. 10) and under-confidence attacks on ``x`` and return the per-sample entropies
    bounding its uncertainty span (Eq. 9).

    ``x``: a tensor (N, C, H, W) in [0, 1] or a re-iterable loader of batches (streamed to the model's
    device; only per-sample numbers are kept). By default the under-confidence side is the strongest
    setting: per sample the highest entropy over Eq. 11 and the entropy objective, each from the clean
    input and from ``restarts`` random starts (``under_objective="cross_entropy", restarts=0`` is the
    paper's single Eq. 11 run). The over side also keeps its best over the same starts. ``seed`` drives the
    random starts (the under attack uses ``seed + 1`` so the two differ). The model runs in eval mode and comes
    back as it came (see :class:`UncertaintyAttack` for ``outputs`` and the accepted output forms)."""
    check_model("model", model)
    check_data(x, reiterable=True)
    norm = check_norm(norm)
    outputs = check_outputs(outputs)
    e = check_eps(eps)
    if not isinstance(e, float):
        raise TypeError("eps must be a scalar budget for uncertainty_span")
    steps = check_int("steps", steps, ge=0)
    seed = check_seed(seed)
    kw: dict[str, Any] = dict(steps=steps, step_size=step_size, random_start=random_start, restarts=restarts,
              optimizer=optimizer, batch_size=batch_size, progress=progress, keep_adv=False)
    under_attack = UnderConfidenceAttack(objective=under_objective, **kw)
    over_attack = OverConfidenceAttack(**kw)
    with using(model, outputs) as net:
        over: AttackResult = over_attack(net, x, e, norm=norm, seed=seed)
        under: AttackResult = under_attack(net, x, e, norm=norm, seed=None if seed is None else seed + 1)
    return UncertaintySpan(
        eps=e, norm=norm, steps=steps, optimizer=optimizer,
        entropy_clean=over.entropy_clean, entropy_over=over.entropy_adv, entropy_under=under.entropy_adv,
        pred_clean=over.pred_clean, pred_over=over.pred_adv, pred_under=under.pred_adv,
        conf_clean=over.conf_clean, conf_over=over.conf_adv, conf_under=under.conf_adv,
    )
