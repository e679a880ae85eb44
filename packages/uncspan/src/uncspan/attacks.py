"""Over- and under-confidence attacks (paper §III-B, Eqs. 9–11) and the misclassification attack used for
robust accuracy.

* :class:`OverConfidenceAttack` — the Stabilizing Attack (STAB, Ledda et al. 2023): minimise the
  cross-entropy to the one-hot vector of the clean prediction ŷ (Eq. 10), i.e. maximise ``f_ŷ``.
* :class:`UnderConfidenceAttack` — minimise the cross-entropy to the uniform vector (Eq. 11).

Both run PGD (Madry et al.) under an L∞ or L2 budget with 150 steps by default (§V-A) and keep, per
sample, the iterate with the lowest (over) or highest (under) entropy seen — the clean input included —
rather than the last one. ``optimizer="apgd"`` switches to an APGD-style adaptive step with momentum
(Croce & Hein 2020), which is not in the paper and reaches further with few steps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from tqdm.auto import tqdm

from robustsuite_common.checks import check_bool, check_choice, check_float, check_int, check_labels
from robustsuite_common.models import as_model_input

from . import _optim
from ._data import check_data, check_label_range, is_loader, iter_batches, model_device, per_sample_seed
from ._model import check_model, check_outputs, using
from ._validation import OPTIMIZERS, check_eps, check_norm, check_seed
from .measures import entropy_from_logits

__all__ = [
    "AttackResult",
    "UncertaintyAttack",
    "OverConfidenceAttack",
    "UnderConfidenceAttack",
    "MisclassificationAttack",
    "STRONGEST_UNDER_OBJECTIVES",
]


@dataclass(frozen=True)
class AttackResult:
    """Outcome of an attack on N inputs.

    ``x_adv`` — best iterate per sample (on the input's device; for a loader, on the CPU; ``None`` when the
    attack was built with ``keep_adv=False``); ``entropy_clean`` / ``entropy_adv`` — entropies (nats) before
    and after; ``loss`` — the winning run's objective at ``x_adv`` (Eq. 10/11, the negative entropy, or the
    negative cross-entropy of the misclassification attack); ``best_step`` — iteration at which the kept
    iterate was found (0 = clean input, 1 = start point); ``best_objective`` / ``best_restart`` — index into
    ``objectives`` and restart number of the run that won (restart 0 starts at the clean input unless
    ``random_start``); ``pred_*`` — argmax labels; ``conf_*`` — maximum softmax probabilities.
    """

    goal: str
    norm: str
    eps: float | list[float]
    optimizer: str
    steps: int
    x_adv: torch.Tensor | None
    entropy_clean: np.ndarray
    entropy_adv: np.ndarray
    loss: np.ndarray
    best_step: np.ndarray
    pred_clean: np.ndarray
    pred_adv: np.ndarray
    conf_clean: np.ndarray
    conf_adv: np.ndarray
    objectives: tuple[str, ...] = ()
    restarts: int = 0
    best_objective: np.ndarray | None = None
    best_restart: np.ndarray | None = None

    def to_dict(self) -> dict:
        """JSON-safe summary with the per-sample arrays (the adversarial inputs are left out)."""
        d = {
            "goal": self.goal,
            "norm": self.norm,
            "eps": self.eps,
            "optimizer": self.optimizer,
            "steps": self.steps,
            "objectives": list(self.objectives),
            "restarts": self.restarts,
            "mean_entropy_clean": float(self.entropy_clean.mean()),
            "mean_entropy_adv": float(self.entropy_adv.mean()),
        }
        for k in ("entropy_clean", "entropy_adv", "loss", "best_step", "pred_clean", "pred_adv", "conf_clean",
                  "conf_adv", "best_objective", "best_restart"):
            v = getattr(self, k)
            d[k] = None if v is None else v.tolist()
        return d


class UncertaintyAttack:
    """Base class: projected first-order attack on an uncertainty objective.

    Keyword-only hyper-parameters: ``steps`` (150, §V-A); ``step_size`` (absolute step; default
    ``2.5·eps/steps`` for PGD — Madry et al.'s rule, since the paper does not state one — and
    ``2·eps`` as the initial APGD step); ``random_start`` (uniform start in the ball, drawn from
    ``seed``); ``restarts`` (extra runs per objective from uniform random starts; the per-sample best over
    all runs is kept, as AutoAttack keeps the best over its attacks); ``optimizer`` (``"pgd"`` or
    ``"apgd"``); ``momentum`` (APGD's α, 0.75); ``batch_size`` (inputs moved to the model's device and
    attacked at once); ``keep_adv`` (return the adversarial inputs; ``False`` keeps only per-sample
    numbers, so memory does not grow with the data); ``progress`` (tqdm bar over batches).

    Random starts are drawn per sample from ``(seed, restart, sample index)``, so results do not depend
    on ``batch_size``.
    """

    goal: ClassVar[str] = ""
    requires_labels: ClassVar[bool] = False
    OBJECTIVES: ClassVar[tuple[str, ...]] = ("default",)

    def __init__(
        self,
        *,
        steps: int = 150,
        step_size: float | None = None,
        random_start: bool = False,
        restarts: int = 0,
        optimizer: str = "pgd",
        momentum: float = 0.75,
        batch_size: int = 256,
        keep_adv: bool = True,
        progress: bool = False,
    ) -> None:
        self.steps = check_int("steps", steps, ge=0)
        self.step_size = None if step_size is None else check_float("step_size", step_size, gt=0.0)
        self.random_start = check_bool("random_start", random_start)
        self.restarts = check_int("restarts", restarts, ge=0)
        self.optimizer = str(check_choice("optimizer", optimizer, OPTIMIZERS))
        self.momentum = check_float("momentum", momentum, gt=0.0, le=1.0)
        self.batch_size = check_int("batch_size", batch_size, ge=1)
        self.keep_adv = check_bool("keep_adv", keep_adv)
        self.progress = check_bool("progress", progress)
        self.objectives: tuple[str, ...] = self.OBJECTIVES[:1]

    # --- objective hooks -------------------------------------------------------------------------
    def _targets(self, logits: torch.Tensor, y: torch.Tensor | None) -> torch.Tensor | None:
        return None

    def _loss(self, logits: torch.Tensor, target: torch.Tensor | None, objective: str) -> torch.Tensor:
        raise NotImplementedError

    def _score(self, logits: torch.Tensor, target: torch.Tensor | None) -> torch.Tensor:
        raise NotImplementedError

    # --- call ------------------------------------------------------------------------------------
    def __call__(
        self,
        model: nn.Module,
        x: torch.Tensor | Iterable,
        eps: float | torch.Tensor,
        *,
        norm: str = "Linf",
        seed: int | None = None,
        y: torch.Tensor | None = None,
        outputs: str = "logits",
    ) -> AttackResult:
        """Attack ``x`` — a tensor (N, C, H, W) in [0, 1] or a loader of such batches (tensors or ``(x, y)``
        tuples) — with budget ``eps`` (scalar, or per-sample (N,) for a tensor) under ``norm``.

        Batches are moved to the model's device (and cast to its dtype) one at a time and the per-sample
        results back, so the device holds one batch whatever N. ``seed`` drives the random starts (private
        generators; global RNG untouched). The input is not modified. The model runs in eval mode and comes
        back as it came; ``outputs`` says what it returns (``"logits"``, or ``"probabilities"`` /
        ``"log_probabilities"`` as an explicit opt-in); tuples, dicts with ``"logits"`` and ``ModelOutput``s
        are accepted. Labels ``y`` (integer class indices) are checked against the model's classes after the
        first clean forward pass, before any attack step.
        """
        check_model("model", model)
        check_data(x)
        norm = check_norm(norm)
        outputs = check_outputs(outputs)
        loader = is_loader(x)
        n = x.shape[0] if isinstance(x, torch.Tensor) else None
        eps_checked = check_eps(eps, n=n)
        if loader and not isinstance(eps_checked, float):
            raise TypeError("eps must be a scalar budget when x is a loader")
        seed = check_seed(seed)
        if (self.random_start or self.restarts > 0) and seed is None:
            raise ValueError("seed must be given when random_start=True or restarts > 0 (randomness is explicit)")
        if isinstance(x, torch.Tensor):
            y = None if y is None else torch.as_tensor(check_labels("y", y, length=x.shape[0]))
            if self.requires_labels and y is None:
                raise ValueError(f"y: {type(self).__name__} needs the true labels: pass y= (integer class indices (N,))")
        elif y is not None:
            raise TypeError("y must be None when x is a loader: the labels come from its (x, y) batches")
        with using(model, outputs) as net:
            return self._run(net, x, y, eps_checked, norm, seed)

    def _run(self, model: nn.Module, x: torch.Tensor | Iterable, y: torch.Tensor | None,
             eps_checked: float | torch.Tensor, norm: str, seed: int | None) -> AttackResult:
        fallback = x.device if isinstance(x, torch.Tensor) else torch.device("cpu")
        device = model_device(model, fallback)
        out_device = fallback
        out_dtype = x.dtype if isinstance(x, torch.Tensor) else None
        runs = [(k, r) for k in range(len(self.objectives)) for r in range(self.restarts + 1)]
        keys = ("entropy_clean", "entropy_adv", "loss", "best_step", "pred_clean", "pred_adv", "conf_clean",
                "conf_adv", "best_objective", "best_restart")
        acc: dict[str, list[np.ndarray]] = {k: [] for k in keys}
        x_adv_parts: list[torch.Tensor] = []
        offset = 0
        batches = iter_batches(x, y, self.batch_size)
        for xb_src, yb in tqdm(batches, disable=not self.progress, desc=f"{self.goal} attack"):
            b = xb_src.shape[0]
            if self.requires_labels and yb is None:
                raise ValueError(f"{type(self).__name__} needs the true labels: the loader must yield (x, y)")
            xb = as_model_input(model.inner, xb_src.detach())
            shape = (-1,) + (1,) * (xb.dim() - 1)
            if isinstance(eps_checked, torch.Tensor):
                eb = eps_checked[offset : offset + b].to(device=device, dtype=xb.dtype).view(shape)
            else:
                eb = torch.full((b,), eps_checked, dtype=xb.dtype, device=device).view(shape)
            with torch.no_grad():
                logits_clean = model(xb)
                if offset == 0 and y is not None:  # all labels at once, before the first attack step
                    check_label_range("y", y, logits_clean.shape[-1])
                elif y is None and yb is not None:  # a loader's labels, batch by batch
                    check_label_range("y", yb, logits_clean.shape[-1])
                target = self._targets(logits_clean, None if yb is None else yb.to(device))
            if self.step_size is not None:
                sb = torch.full_like(eb, self.step_size)
            elif self.optimizer == "pgd":
                sb = 2.5 * eb / max(self.steps, 1)
            else:
                sb = None
            best: list[torch.Tensor] = []
            for k, r in runs:
                start = self._start(xb, eb, norm, seed, r, offset) if (self.random_start or r > 0) else xb
                out = _optim.minimise(
                    model, xb, eb, norm=norm,
                    loss_fn=lambda z, t=target, o=self.objectives[k]: self._loss(z, t, o),
                    score_fn=lambda z, t=target: self._score(z, t),
                    steps=self.steps, step_size=sb, optimizer=self.optimizer, momentum=self.momentum,
                    start=start, logits0=logits_clean,
                )
                obj_idx = torch.full_like(out.step_best, k)
                rst_idx = torch.full_like(out.step_best, r)
                if not best:
                    best = [out.x_best, out.score_best, out.loss_best, out.step_best, obj_idx, rst_idx,
                            out.logits_best]
                    continue
                better = out.score_best < best[1]  # strictly better: ties keep the earlier run
                best[0] = torch.where(better.view(shape), out.x_best, best[0])
                best[6] = torch.where(better[:, None], out.logits_best, best[6])
                for j, v in enumerate((out.score_best, out.loss_best, out.step_best, obj_idx, rst_idx), start=1):
                    best[j] = torch.where(better, v, best[j])
            lc, la = logits_clean.double(), best[6].double()  # la: the logits of the kept iterate, as evaluated
            pc, pa = F.softmax(lc, -1), F.softmax(la, -1)
            for key, v in (("entropy_clean", entropy_from_logits(lc)), ("entropy_adv", entropy_from_logits(la)),
                           ("loss", best[2].double()), ("best_step", best[3]), ("pred_clean", lc.argmax(-1)),
                           ("pred_adv", la.argmax(-1)), ("conf_clean", pc.max(-1).values),
                           ("conf_adv", pa.max(-1).values), ("best_objective", best[4]), ("best_restart", best[5])):
                acc[key].append(v.detach().cpu().numpy())
            if self.keep_adv:
                x_adv_parts.append(best[0].detach().to(out_device, dtype=out_dtype or xb_src.dtype))
            offset += b
        if offset == 0:
            raise ValueError("x holds no samples")
        arrays = {k: np.concatenate(v) for k, v in acc.items()}
        return AttackResult(
            goal=self.goal,
            norm=norm,
            eps=eps_checked.tolist() if isinstance(eps_checked, torch.Tensor) else eps_checked,
            optimizer=self.optimizer,
            steps=self.steps,
            x_adv=torch.cat(x_adv_parts) if self.keep_adv else None,
            objectives=tuple(self.objectives),
            restarts=self.restarts,
            **arrays,
        )

    @staticmethod
    def _start(xb: torch.Tensor, eb: torch.Tensor, norm: str, seed: int | None, restart: int,
               offset: int) -> torch.Tensor:
        """Uniform random start in the ball, one private generator per sample (batch-size independent); ``seed``
        is checked to be given before any attack (random starts need it)."""
        assert seed is not None
        out = torch.empty_like(xb)
        for j in range(xb.shape[0]):
            gen = torch.Generator(device=xb.device)
            gen.manual_seed(per_sample_seed(seed, restart, offset + j))
            out[j : j + 1] = _optim.random_start(xb[j : j + 1], eb[j : j + 1], norm, gen)
        return out

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(steps={self.steps}, step_size={self.step_size}, "
            f"random_start={self.random_start}, restarts={self.restarts}, optimizer={self.optimizer!r}, "
            f"objectives={self.objectives!r})"
        )


class OverConfidenceAttack(UncertaintyAttack):
    """Over-confidence attack = Stabilizing Attack (STAB): ``min_δ −log f_ŷ(x+δ)`` with ŷ the clean
    prediction (Eq. 10). The kept iterate is the one with the lowest entropy."""

    goal = "over"

    def _targets(self, logits, y):
        return logits.argmax(-1)

    def _loss(self, logits, target, objective):
        assert target is not None
        return -F.log_softmax(logits, -1).gather(1, target[:, None]).squeeze(1)

    def _score(self, logits, target):
        return entropy_from_logits(logits)


class UnderConfidenceAttack(UncertaintyAttack):
    """Under-confidence attack: ``min_δ −(1/c) Σ_k log f_k(x+δ)``, the cross-entropy to the uniform vector
    (Eq. 11), and/or ``min_δ −H(f(x+δ))``. The kept iterate is the one with the highest entropy.

    ``objective``: ``"cross_entropy"`` (Eq. 11, the paper), ``"entropy"`` (not in the paper), or a sequence
    of both — :data:`STRONGEST_UNDER_OBJECTIVES` — to keep per sample the highest entropy over the
    objectives (and over ``restarts``). Why both: Eq. 11 averages ``−log f_k`` over all classes, so with
    many classes it is dominated by the smallest probabilities and its optimum is not the entropy maximum
    (it stops 26–41 % short in MUS on RobustBench models, issue 14); the entropy objective's gradient
    vanishes on near-one-hot outputs, where Eq. 11 still moves. Neither dominates per sample.
    """

    goal = "under"
    OBJECTIVES: ClassVar[tuple[str, ...]] = ("cross_entropy", "entropy")

    def __init__(self, *, objective: str | Sequence[str] = "cross_entropy", **kwargs) -> None:
        super().__init__(**kwargs)
        objs = (objective,) if isinstance(objective, str) else tuple(objective)
        if not objs or len(set(objs)) != len(objs):
            raise ValueError(f"objective must be one of {self.OBJECTIVES} or a non-empty sequence of distinct "
                             f"ones; got {objective!r}")
        self.objectives = tuple(str(check_choice("objective", o, self.OBJECTIVES)) for o in objs)

    @property
    def objective(self) -> str | tuple[str, ...]:
        return self.objectives[0] if len(self.objectives) == 1 else self.objectives

    def _loss(self, logits, target, objective):
        if objective == "entropy":
            return -entropy_from_logits(logits)
        return -F.log_softmax(logits, -1).mean(-1)

    def _score(self, logits, target):
        return -entropy_from_logits(logits)


#: The strongest under-confidence setting, the default of :func:`uncertainty_span` and the leaderboard.
STRONGEST_UNDER_OBJECTIVES: tuple[str, ...] = ("cross_entropy", "entropy")


class MisclassificationAttack(UncertaintyAttack):
    """Untargeted PGD on the cross-entropy to the true label ``y`` (Eq. 5 with ``L' = −CE``), used for the
    robust-accuracy column of the leaderboard. Requires ``y=`` in the call. The kept iterate is the one
    with the smallest margin ``z_y − max_{k≠y} z_k`` (a misclassified iterate if one was found)."""

    goal = "misclassify"
    requires_labels = True

    def _targets(self, logits, y):
        return y

    def _loss(self, logits, target, objective):
        assert target is not None
        return -F.cross_entropy(logits, target, reduction="none")

    def _score(self, logits, target):
        assert target is not None
        zy = logits.gather(1, target[:, None]).squeeze(1)
        other = logits.scatter(1, target[:, None], float("-inf")).max(-1).values
        return zy - other
