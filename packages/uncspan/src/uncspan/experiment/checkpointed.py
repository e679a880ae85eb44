"""One call of :func:`uncspan.experiment.run`: its checked inputs, notes and warnings, the tables, metrics and
records it builds, and its attacks, each checkpointed in a :class:`~robustsuite_common.experiment.Store` under a key
that hashes the settings it depends on, the model's weights and the data (so an interrupted run resumes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from robustsuite_common.config import config_hash, to_dict
from robustsuite_common.experiment import JSON, Metric, Store, Table, cached
from robustsuite_common.fingerprint import fingerprint as common_fingerprint
from robustsuite_common.intervals import Interval

from ..ood import OODUnderAttack, ood_under_attack
from ..robust import AutoAttack, RobustOutcome, robust_accuracy
from ..span import UncertaintySpan, uncertainty_span
from .config import Config
from .inputs import Data, Models
from .result import slug

__all__ = ["RunState", "fingerprint"]


def fingerprint(*tensors: Any) -> str:
    """A content hash of tensors (data or a model's state): part of every checkpoint key, so a store never hands
    back work done on other inputs (:func:`robustsuite_common.fingerprint.fingerprint` of the parts as tensors)."""
    return common_fingerprint(*(torch.as_tensor(t) for t in tensors), length=16)


def _model_fingerprint(model: nn.Module) -> str:
    state = model.state_dict()
    return fingerprint(*(state[k] for k in sorted(state)), torch.tensor([len(state)]))


def interval(est: float, lo: float, hi: float, method: str, bounds: tuple) -> Interval:
    return Interval(est, lo, hi, method=method, bounds=bounds)


class RunState:
    """One call of :func:`run`: the checked inputs, the store, what the stages have built so far (``tables``,
    ``metrics``, ``records``, ``notes``, ``warnings``) and the checkpointed attacks."""

    def __init__(self, models: Models, data: Data, cfg: Config, store: Store | None, progress: bool) -> None:
        self.models, self.data, self.cfg, self.store, self.progress = models, data, cfg, store, progress
        attack = to_dict(cfg.attack)
        attack.pop("batch_size")
        self.attack_key = attack
        self.fp = {name: _model_fingerprint(m) for name, m in {**models.ranked, **models.osr}.items()}
        self.notes: list[str] = []
        self.warnings: list[str] = []
        self.tables: dict[str, Table] = {}
        self.metrics: dict[str, Metric] = {}
        self.records: dict[str, list[dict[str, Any]]] = {}

    def cached(self, kind: str, model: str, parts: dict, compute: Callable[[], dict]) -> dict:
        key = f"{kind}-{slug(model)}-{config_hash(parts | {'model': self.fp[model], 'seed': self.cfg.seed})}"
        return cached(self.store, key, compute, JSON)

    def span(self, name: str, x: torch.Tensor, eps: float, steps: int, restarts: int, what: dict) -> UncertaintySpan:
        a = self.cfg.attack
        d = self.cached("span", name, what | {"eps": eps, "steps": steps, "restarts": restarts}, lambda: uncertainty_span(
            self.models.ranked[name], x, eps=eps, norm=a.norm, steps=steps, seed=self.cfg.seed, optimizer=a.optimizer,
            restarts=restarts, under_objective=list(a.under_objective), batch_size=a.batch_size,
            progress=self.progress).to_dict())
        return UncertaintySpan.from_dict(d)

    def robust(self, name: str, x: torch.Tensor, y: torch.Tensor, kind: str, what: dict) -> RobustOutcome:
        a, lb = self.cfg.attack, self.cfg.leaderboard
        if kind == "autoattack":
            attack: Any = AutoAttack(lb.autoattack_version, batch_size=lb.autoattack_batch_size)
            parts = what | {"version": lb.autoattack_version, "aa_batch": lb.autoattack_batch_size}
        else:
            attack, parts = "pgd", what | {"pgd_steps": lb.pgd_steps}
        d = self.cached(kind, name, parts | {"eps": a.eps, "norm": a.norm, "optimizer": a.optimizer},
                        lambda: robust_accuracy(self.models.ranked[name], x, y, eps=a.eps, norm=a.norm, attack=attack,
                                                seed=self.cfg.seed, steps=lb.pgd_steps, optimizer=a.optimizer,
                                                batch_size=a.batch_size, progress=self.progress).to_dict())
        return RobustOutcome.from_dict(d)

    def ood(self, name: str, model: nn.Module, x_in: torch.Tensor, x_out: torch.Tensor, kind: str,
            what: dict) -> OODUnderAttack:
        a, cfg = self.cfg.attack, self.cfg
        d = self.cached(f"ood-{kind}", name, what | {"outliers": fingerprint(x_out)}, lambda:
                        ood_under_attack(model, x_in, x_out, eps=list(cfg.ood.eps), norm=a.norm, steps=a.steps,
                                         seed=cfg.seed, optimizer=a.optimizer, n_boot=cfg.metrics.auroc_n_boot,
                                         batch_size=a.batch_size, progress=self.progress).to_dict(per_sample=True))
        return OODUnderAttack.from_dict(d)
