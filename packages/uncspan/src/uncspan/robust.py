"""Robust accuracy as the field measures it (Table IV's "Robust" column; issue 27).

The paper copies RobustBench's robust accuracies, which are standard AutoAttack (Croce & Hein 2020) numbers.
:func:`robust_accuracy` therefore defaults to standard AutoAttack (``robustsuite_common.autoattack``: pyautoattack,
seeded, the caller's RNG and model untouched) and names what ran in every result. ``attack="pgd"`` (or a
configured :class:`~uncspan.MisclassificationAttack`) gives this package's own PGD number, which is weaker: a
table that shows both lets a reader see the gap, and :func:`pgd_gap` flags it when PGD leaves clearly more
points robust than AutoAttack on the same points (the interval of the paired difference lies above 0).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_choice, check_int, check_labels
from robustsuite_common.intervals import Interval, paired_difference, proportion_of
from robustsuite_common.models import forward_logits

from ._data import check_data, is_loader, iter_batches, labels_of
from ._model import check_model, check_outputs, n_classes, using
from ._validation import OPTIMIZERS, check_eps, check_norm, check_seed
from .attacks import MisclassificationAttack

__all__ = ["ROBUST_ATTACKS", "AutoAttack", "RobustOutcome", "PGDGap", "robust_accuracy", "pgd_gap", "attack_name"]

ROBUST_ATTACKS = ("autoattack", "pgd")


@dataclass(frozen=True)
class AutoAttack:
    """Standard AutoAttack as :func:`robust_accuracy`'s ``attack`` (the default is ``AutoAttack()``).

    ``version``: ``"standard"`` (APGD-CE, APGD-T, FAB-T, Square; needs >= 4 classes), ``"plus"`` or ``"rand"``.
    ``n_iter`` / ``n_restarts`` change its budget: a departure from standard AutoAttack that :attr:`name`
    states (for cheap tests only). ``batch_size``: AutoAttack's batches (its random starts depend on them)."""

    version: str = "standard"
    batch_size: int = 250
    n_iter: int | None = None
    n_restarts: int | None = None

    def __post_init__(self) -> None:
        check_choice("version", self.version, ("standard", "plus", "rand"))
        check_int("batch_size", self.batch_size, ge=1)
        for name in ("n_iter", "n_restarts"):
            if getattr(self, name) is not None:
                check_int(name, getattr(self, name), ge=1)

    @property
    def name(self) -> str:
        budget = "" if self.n_iter is None and self.n_restarts is None else \
            f", reduced budget n_iter={self.n_iter}, n_restarts={self.n_restarts}"
        return f"AutoAttack {self.version}{budget}"


@dataclass(frozen=True)
class RobustOutcome:
    """Per-sample outcome of a misclassification attack on N labelled points.

    ``robust``: the model answers the label on the clean input and on the adversarial one; ``pred_adv`` /
    ``conf_adv``: prediction and top-class probability on the adversarial input; ``kind``: ``"autoattack"`` or
    ``"pgd"``; ``attack``: what ran, in words (version, budget, norm, ε, seed)."""

    kind: str
    attack: str
    robust: np.ndarray
    pred_adv: np.ndarray
    conf_adv: np.ndarray
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def robust_accuracy(self) -> float:
        return float(np.mean(self.robust))

    def interval(self, level: float = 0.95) -> Interval:
        """Robust accuracy with its Clopper-Pearson interval."""
        return proportion_of(self.robust, level=level)

    def to_dict(self) -> dict:
        return {"kind": self.kind, "attack": self.attack, "robust": np.asarray(self.robust, bool).tolist(),
                "pred_adv": np.asarray(self.pred_adv).tolist(), "conf_adv": np.asarray(self.conf_adv).tolist(),
                "details": dict(self.details)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RobustOutcome:
        return cls(str(d["kind"]), str(d["attack"]), np.asarray(d["robust"], dtype=bool),
                   np.asarray(d["pred_adv"], dtype=np.int64), np.asarray(d["conf_adv"], dtype=np.float64),
                   dict(d.get("details", {})))


def attack_name(attack: str | AutoAttack | MisclassificationAttack) -> str:
    """A readable name of a robust-accuracy attack (for column headers and notes)."""
    if isinstance(attack, AutoAttack):
        return attack.name
    if isinstance(attack, MisclassificationAttack):
        return f"PGD ({attack.optimizer}, {attack.steps} steps, {attack.restarts} restart(s))"
    return {"autoattack": AutoAttack().name, "pgd": "PGD"}.get(str(attack), str(attack))


def _check_attack(attack: object) -> str | AutoAttack | MisclassificationAttack:
    if isinstance(attack, AutoAttack | MisclassificationAttack):
        return attack
    if isinstance(attack, str):
        return str(check_choice("attack", attack, ROBUST_ATTACKS))
    raise TypeError(f"attack must be one of {list(ROBUST_ATTACKS)}, an uncspan.AutoAttack or an "
                    f"uncspan.MisclassificationAttack, got {type(attack).__name__}")


def robust_accuracy(
    model: nn.Module,
    x: torch.Tensor | Iterable,
    y: torch.Tensor | None,
    *,
    eps: float,
    norm: str = "Linf",
    attack: str | AutoAttack | MisclassificationAttack = "autoattack",
    seed: int = 0,
    steps: int = 150,
    optimizer: str = "pgd",
    batch_size: int = 256,
    progress: bool = False,
    outputs: str = "logits",
) -> RobustOutcome:
    """Per-sample robustness of ``model`` on ``(x, y)`` under budget ``eps``: standard AutoAttack by default
    (seeded with ``seed``), or this package's PGD misclassification attack (``attack="pgd"``: ``steps`` steps of
    ``optimizer`` from the clean input; or a configured :class:`MisclassificationAttack`).

    ``x``: a tensor (N, C, H, W) in [0, 1] with integer labels ``y``, or a re-iterable loader of ``(x, y)``
    batches (``y=None``; AutoAttack then runs on each of the loader's batches). The model runs in eval mode and
    comes back as it came."""
    check_model("model", model)
    check_data(x, reiterable=True)
    attack = _check_attack(attack)
    norm = check_norm(norm)
    outputs = check_outputs(outputs)
    e = check_eps(eps)
    if not isinstance(e, float):
        raise TypeError("eps must be a scalar budget")
    checked_seed = check_seed(seed)
    seed = 0 if checked_seed is None else checked_seed
    steps = check_int("steps", steps, ge=0)
    optimizer = str(check_choice("optimizer", optimizer, OPTIMIZERS))
    batch_size = check_int("batch_size", batch_size, ge=1)
    yt = labels_of(x, y)
    if attack == "pgd":
        attack = MisclassificationAttack(steps=steps, optimizer=optimizer, batch_size=batch_size, progress=progress,
                                         keep_adv=False)
    if isinstance(attack, MisclassificationAttack):
        res = attack(model, x, e, norm=norm, seed=seed, y=yt if isinstance(x, torch.Tensor) else None,
                     outputs=outputs)
        yn = yt.numpy()
        return RobustOutcome("pgd", f"{attack_name(attack)}, {norm} eps={e:g}", res.pred_adv == yn, res.pred_adv,
                             res.conf_adv, {"steps": attack.steps, "optimizer": attack.optimizer,
                                            "restarts": attack.restarts})
    aa = attack if isinstance(attack, AutoAttack) else AutoAttack()  # here attack is "autoattack" or an AutoAttack
    if norm == "Linf" and e > 1:
        raise ValueError(f"eps must be <= 1 for Linf on inputs in [0, 1], got {e}")
    if e == 0:  # nothing to attack: the clean predictions
        return _clean_outcome(model, x, yt, aa, norm, batch_size, outputs)
    from robustsuite_common.autoattack import autoattack, autoattack_version

    what = autoattack_version()
    parts = []
    with using(model, outputs) as net:
        first = next(iter_batches(x, None, 1))[0]
        check_labels("y", yt, n_classes=n_classes(net, first))
        batches = [(x, yt)] if isinstance(x, torch.Tensor) else [(xb, yb) for xb, yb in iter_batches(x, None, 1 << 30)]
        for xb, yb in batches:
            r = autoattack(net, xb, yb, eps=e, norm=norm, version=aa.version, seed=seed, batch_size=aa.batch_size,
                           n_iter=aa.n_iter, n_restarts=aa.n_restarts)
            logits = forward_logits(net, r.x_adv, batch_size=batch_size, dtype=torch.float64).cpu()
            parts.append((r.robust.numpy().astype(bool), logits.argmax(-1).numpy(),
                          logits.softmax(-1).max(-1).values.numpy()))
    robust, pred, conf = (np.concatenate([p[i] for p in parts]) for i in range(3))
    label = f"{aa.name} ({what}), {norm} eps={e:g}, seed {seed}"
    if is_loader(x):
        label += ", run per loader batch"
    return RobustOutcome("autoattack", label, robust, pred, conf,
                         {"version": aa.version, "library": what, "n_iter": aa.n_iter, "n_restarts": aa.n_restarts})


def _clean_outcome(model, x, yt, aa: AutoAttack, norm: str, batch_size: int, outputs: str) -> RobustOutcome:
    with using(model, outputs) as net:
        logits = torch.cat([forward_logits(net, xb, batch_size=batch_size, dtype=torch.float64).cpu()
                            for xb, _ in iter_batches(x, None, batch_size)])
    check_labels("y", yt, n_classes=logits.shape[-1])
    pred = logits.argmax(-1).numpy()
    return RobustOutcome("autoattack", f"{aa.name} at eps=0 (no attack: the clean predictions), {norm}",
                         pred == yt.numpy(), pred, logits.softmax(-1).max(-1).values.numpy(), {"version": aa.version})


@dataclass(frozen=True)
class PGDGap:
    """PGD's robust accuracy minus AutoAttack's on the same points (a paired difference of per-sample outcomes,
    with its bootstrap interval). ``overstates``: the interval lies above 0, i.e. PGD leaves clearly more points
    robust than AutoAttack (AutoAttack's own sanity checks warn in the same spirit)."""

    pgd: float
    autoattack: float
    difference: Interval

    @property
    def overstates(self) -> bool:
        return bool(self.difference.low > 0)

    def message(self, model: str = "the model") -> str:
        return (f"PGD leaves clearly more points robust than AutoAttack for {model}: robust accuracy {self.pgd:.3f} "
                f"under PGD against {self.autoattack:.3f} under AutoAttack (paired difference "
                f"{self.difference.estimate:+.3f} [{self.difference.low:+.3f}, {self.difference.high:+.3f}]); "
                "a PGD number alone would overstate this model's robustness.")


def pgd_gap(pgd: RobustOutcome, autoattack: RobustOutcome, *, seed: int = 0, n_boot: int = 2000) -> PGDGap:
    """PGD's robust accuracy minus AutoAttack's, paired over the same points (BCa bootstrap of the per-sample
    differences, bounded to [-1, 1])."""
    for name, o in (("pgd", pgd), ("autoattack", autoattack)):
        if not isinstance(o, RobustOutcome):
            raise TypeError(f"{name} must be a RobustOutcome (from robust_accuracy), got {type(o).__name__}")
    if np.shape(pgd.robust) != np.shape(autoattack.robust):
        raise ValueError(f"pgd and autoattack must be outcomes on the same points, got {np.size(pgd.robust)} and "
                         f"{np.size(autoattack.robust)}")
    d = paired_difference(np.asarray(pgd.robust, float), np.asarray(autoattack.robust, float), seed=seed,
                          n_resamples=check_int("n_boot", n_boot, ge=1), bounds=(-1.0, 1.0))
    return PGDGap(pgd.robust_accuracy, autoattack.robust_accuracy, d)
