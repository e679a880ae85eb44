"""beta-ACE calibration attacks (paper §2.2, Eq. 2; App. B.2).

    max_{||gamma||_p <= eps, F(x + gamma) = F(x)}  eta * CE(f(x + gamma), omega),  eta in {+1, -1}, omega in {y, y_hat}

eta = +1 lowers the confidence in omega, eta = -1 raises it; the predicted label never changes, so accuracy is
untouched while the ECE moves. Four configurations (``ACE_CONFIGURATIONS``): lower/raise confidence in the
label/the prediction.

Departure from the paper, and why: the paper's PGD stops a sample's optimisation once an update would
change its prediction and uses a plateau learning-rate schedule. We reject such an update and halve that
sample's step (the earlier ACE attack's rule, Galil & El-Yaniv 2021), which keeps every returned input's
prediction equal to the clean one while letting the sample keep improving with smaller steps.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F

from robustsuite_common.checks import check_choice, check_float, check_int
from robustsuite_common.models import as_model_input, evaluating
from robustsuite_common.projection import project

from ._intervals import Interval, boot, proportion
from ._pgd import ascent_direction
from ._validation import check_label_range, check_labelled_images, check_outputs, model_logits, num_classes

__all__ = ["ACE_CONFIGURATIONS", "ACEBenchmark", "ACEBenchmarkRow", "ACEResult", "BetaACE", "ace_benchmark"]

ACE_CONFIGURATIONS: dict[str, tuple[int, str]] = {
    "lower_label": (1, "label"),
    "raise_label": (-1, "label"),
    "lower_prediction": (1, "prediction"),
    "raise_prediction": (-1, "prediction"),
}


@dataclass(frozen=True)
class ACEResult:
    """Adversarial inputs and per-sample outcomes of a beta-ACE attack (numpy arrays except ``x_adv``, which is
    None for a result rebuilt from saved arrays by :meth:`from_arrays`)."""

    x_adv: torch.Tensor | None = field(repr=False)
    labels: np.ndarray = field(repr=False)
    clean_prediction: np.ndarray = field(repr=False)
    adv_prediction: np.ndarray = field(repr=False)
    clean_confidence: np.ndarray = field(repr=False)
    adv_confidence: np.ndarray = field(repr=False)
    loss: np.ndarray = field(repr=False)
    eta: int
    target: str
    norm: str

    @property
    def prediction_unchanged(self) -> bool:
        return bool(np.array_equal(self.clean_prediction, self.adv_prediction))

    @property
    def correct(self) -> np.ndarray:
        """Per input: the clean prediction equals the label (the attack keeps the prediction)."""
        return self.clean_prediction == self.labels

    def to_dict(self) -> dict[str, Any]:
        correct = self.correct
        from .metrics import expected_calibration_error

        return {
            "eta": self.eta, "target": self.target, "norm": self.norm, "n": int(self.labels.shape[0]),
            "accuracy": float(correct.mean()),
            "prediction_unchanged": self.prediction_unchanged,
            "clean_ece": expected_calibration_error(self.clean_confidence, correct),
            "adv_ece": expected_calibration_error(self.adv_confidence, correct),
            "mean_clean_confidence": float(self.clean_confidence.mean()),
            "mean_adv_confidence": float(self.adv_confidence.mean()),
        }

    _ARRAYS = ("labels", "clean_prediction", "adv_prediction", "clean_confidence", "adv_confidence", "loss")

    def to_arrays(self) -> dict[str, Any]:
        """The per-sample outcomes (not ``x_adv``) as arrays, for a checkpoint store's ``NUMPY`` codec."""
        out: dict[str, Any] = {k: np.asarray(getattr(self, k)) for k in self._ARRAYS}
        out.update(eta=np.int64(self.eta), target=np.str_(self.target), norm=np.str_(self.norm))
        return out

    @classmethod
    def from_arrays(cls, arrays: Any) -> ACEResult:
        return cls(x_adv=None, **{k: np.asarray(arrays[k]) for k in cls._ARRAYS}, eta=int(arrays["eta"]),
                   target=str(arrays["target"]), norm=str(arrays["norm"]))

    def ece_intervals(self, n_bins: int = 15, *, n_boot: int = 200, seed: int = 0) -> dict[str, Any]:
        """95 % intervals of the clean ECE, the attacked ECE and their paired difference (attacked - clean):
        BCa bootstrap over the inputs (robustsuite_common; the same resampled inputs for all three, so the
        difference is paired), None where the BCa interval cannot contain the plug-in estimate; and the
        Clopper-Pearson interval of the accuracy (unchanged by construction: the attack never changes a
        prediction)."""
        from .metrics import expected_calibration_error as ece

        check_int("n_bins", n_bins, ge=1)
        check_int("n_boot", n_boot, ge=1)
        correct = self.correct.astype(np.float64)
        zc, za = self.clean_confidence, self.adv_confidence
        out: dict[str, Any] = {"clean_ece": ece(zc, correct, n_bins=n_bins), "adv_ece": ece(za, correct, n_bins=n_bins)}
        out["diff_ece"] = out["adv_ece"] - out["clean_ece"]

        def one(z: np.ndarray, c: np.ndarray) -> float:
            return ece(z, c, n_bins=n_bins)

        def diff(z0: np.ndarray, z1: np.ndarray, c: np.ndarray) -> float:
            return ece(z1, c, n_bins=n_bins) - ece(z0, c, n_bins=n_bins)

        iv: dict[str, Interval | None] = {
            "clean_ece": boot((zc, correct), one, seed=seed, n_boot=n_boot),
            "adv_ece": boot((za, correct), one, seed=seed, n_boot=n_boot),
            "diff_ece": boot((zc, za, correct), diff, seed=seed, n_boot=n_boot, bounds=(-1.0, 1.0))}
        for k, v in iv.items():
            out[f"{k}_interval"] = v
            out[f"{k}_ci"] = None if v is None else v.ci
        acc = proportion(int(correct.sum()), int(correct.size))
        out["accuracy"] = float(acc.estimate)
        out["accuracy_ci"] = acc.ci
        out["accuracy_interval"] = acc
        return out


class BetaACE:
    """PGD solver of Eq. (2) under L-inf or L2 for any vision model (logits on [0, 1] inputs).

    ``eta``: +1 (lower confidence in ``target``) or -1 (raise it); ``target``: "label" or "prediction";
    ``steps``: PGD iterations; ``step_size``: initial step as a fraction of eps (default 2.5 / steps);
    ``batch_size``: inputs per forward pass.
    """

    def __init__(
        self,
        *,
        eta: int = 1,
        target: Literal["label", "prediction"] = "label",
        norm: Literal["linf", "l2"] = "linf",
        steps: int = 50,
        step_size: float | None = None,
        batch_size: int = 256,
        outputs: str = "logits",
    ) -> None:
        check_choice("eta", eta, (1, -1))
        check_choice("target", target, ("label", "prediction"))
        check_choice("norm", norm, ("linf", "l2"))
        self.eta = int(eta)
        self.target = target
        self.norm = norm
        self.steps = check_int("steps", steps, ge=1)
        self.step_size = 2.5 / steps if step_size is None else check_float("step_size", step_size, gt=0)
        self.batch_size = check_int("batch_size", batch_size, ge=1)
        self.outputs = check_outputs(outputs)

    @classmethod
    def from_configuration(cls, name: str, **kwargs: Any) -> BetaACE:
        """One of the paper's four configurations by name (see ``ACE_CONFIGURATIONS``)."""
        check_choice("name", name, tuple(ACE_CONFIGURATIONS))
        eta, target = ACE_CONFIGURATIONS[name]
        return cls(eta=eta, target=target, **kwargs)  # type: ignore[arg-type]

    def __call__(self, model: torch.nn.Module, x: torch.Tensor, y: Any, eps: float | Any) -> ACEResult:
        """Attack ``x`` (N, C, H, W) in [0, 1] with labels ``y`` (N,) within ``eps`` (scalar or per input).

        The model is evaluated in eval mode and given back as it came; labels beyond the model's classes are
        refused after one forward pass on ``x[:1]`` (which reads the number of classes), before the attack."""
        yt = check_labelled_images(model, x, y)
        eps_t = torch.as_tensor(eps, dtype=torch.float64)
        if eps_t.ndim == 0:
            eps_t = eps_t.expand(x.shape[0])
        if eps_t.shape != (x.shape[0],) or not torch.all(torch.isfinite(eps_t)) or not torch.all(eps_t >= 0):
            raise ValueError("eps must be a non-negative scalar or a per-sample vector of length N")
        outs = []
        with evaluating(model):
            check_label_range("y", yt, num_classes(model, x, self.outputs))
            for s in range(0, x.shape[0], self.batch_size):
                sl = slice(s, s + self.batch_size)
                xb = as_model_input(model, x[sl])
                outs.append(self._attack(model, xb, yt[sl].to(xb.device), eps_t[sl].to(xb.device, xb.dtype)))
        cat = [torch.cat([o[i] for o in outs]) for i in range(6)]
        return ACEResult(
            x_adv=cat[0], labels=yt.numpy(), clean_prediction=cat[1].cpu().numpy(),
            adv_prediction=cat[2].cpu().numpy(), clean_confidence=cat[3].cpu().double().numpy(),
            adv_confidence=cat[4].cpu().double().numpy(), loss=cat[5].cpu().double().numpy(),
            eta=self.eta, target=self.target, norm=self.norm,
        )

    def _loss_grad(self, model: torch.nn.Module, x: torch.Tensor, omega: torch.Tensor):
        x = x.detach().requires_grad_(True)
        logits = model_logits(model(x), x.shape[0], self.outputs)
        loss = self.eta * F.cross_entropy(logits, omega, reduction="none")
        (grad,) = torch.autograd.grad(loss.sum(), x)
        return logits.detach(), loss.detach(), grad.detach()

    def _attack(self, model, x, y, eps):
        view = (-1,) + (1,) * (x.ndim - 1)
        eps_v = eps.view(view)
        logits0, _, _ = self._loss_grad(model, x, y)
        if not bool(torch.isfinite(logits0).all()):
            raise ValueError("model returned non-finite logits (NaN or inf): nothing can be attacked")
        pred0 = logits0.argmax(1)
        omega = y if self.target == "label" else pred0
        logits, loss, grad = self._loss_grad(model, x, omega)
        x_acc, g_acc = x.clone(), grad
        best_x, best_loss = x.clone(), loss.clone()
        alpha = torch.full_like(eps, self.step_size) * eps
        for _ in range(self.steps):
            cand = project(x_acc + alpha.view(view) * ascent_direction(g_acc, self.norm), x, eps=eps_v, norm=self.norm,
                           linf="delta")
            logits_c, loss_c, grad_c = self._loss_grad(model, cand, omega)
            ok = logits_c.argmax(1) == pred0
            okv = ok.view(view)
            x_acc = torch.where(okv, cand, x_acc)
            g_acc = torch.where(okv, grad_c, g_acc)
            alpha = torch.where(ok, alpha, alpha / 2)
            better = ok & (loss_c > best_loss)
            best_x = torch.where(better.view(view), cand, best_x)
            best_loss = torch.where(better, loss_c, best_loss)
        with torch.no_grad():
            lp0 = torch.log_softmax(logits0.double(), 1)
            lp = torch.log_softmax(model_logits(model(best_x), best_x.shape[0], self.outputs).double(), 1)
            adv_pred = lp.argmax(1)
        return (best_x.detach(), pred0, adv_pred, lp0.max(1).values.exp(), lp.gather(1, pred0[:, None]).squeeze(1).exp(),
                best_loss)


@dataclass(frozen=True)
class ACEBenchmarkRow:
    """One beta-ACE attack (configuration x norm) with 95 % intervals: accuracy (Clopper-Pearson), clean and
    attacked ECE and their paired difference (BCa bootstrap, :meth:`ACEResult.ece_intervals`; None where the
    BCa interval cannot contain the plug-in estimate)."""

    configuration: str
    norm: str
    eps: float
    accuracy: float
    accuracy_ci: tuple[float, float]
    clean_ece: float
    clean_ece_ci: tuple[float, float] | None
    adv_ece: float
    adv_ece_ci: tuple[float, float] | None
    diff_ece: float
    diff_ece_ci: tuple[float, float] | None
    prediction_unchanged: bool

    @property
    def increase_above_zero(self) -> bool:
        """The attacked-minus-clean ECE's bootstrap interval lies strictly above 0 (the attack raised it)."""
        return self.diff_ece_ci is not None and bool(self.diff_ece_ci[0] > 0)

    @property
    def attacked_above_clean(self) -> bool:
        """The attacked ECE's interval lies strictly above the clean one's (disjoint, attacked higher)."""
        if self.adv_ece_ci is None or self.clean_ece_ci is None:
            return False
        return bool(self.adv_ece_ci[0] > self.clean_ece_ci[1])

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "increase_above_zero": self.increase_above_zero,
                "attacked_above_clean": self.attacked_above_clean}


@dataclass(frozen=True)
class ACEBenchmark:
    """The paper's Table 1 layout: every beta-ACE configuration under every norm on one model and input set.
    ``results`` keeps each attack's per-input outcomes (same order as ``rows``; not part of ``to_dict``)."""

    rows: tuple[ACEBenchmarkRow, ...]
    steps: int
    n_bins: int
    n_boot: int
    seed: int
    results: tuple[ACEResult, ...] = field(default=(), repr=False, compare=False)

    @property
    def predictions_unchanged(self) -> bool:
        """No attack changed a single prediction (so accuracy is the clean one everywhere)."""
        return all(r.prediction_unchanged for r in self.rows)

    @property
    def worst(self) -> ACEBenchmarkRow:
        """The attack reaching the highest attacked ECE (the first one on ties)."""
        return max(self.rows, key=lambda r: r.adv_ece)

    @property
    def n_increase_above_zero(self) -> int:
        """Attacks whose ECE increase has a bootstrap interval strictly above 0."""
        return sum(r.increase_above_zero for r in self.rows)

    @property
    def n_attacked_above_clean(self) -> int:
        """Attacks whose attacked-ECE interval lies strictly above the clean-ECE interval."""
        return sum(r.attacked_above_clean for r in self.rows)

    def to_dict(self) -> dict[str, Any]:
        return {"rows": [r.to_dict() for r in self.rows], "steps": self.steps, "n_bins": self.n_bins,
                "n_boot": self.n_boot, "seed": self.seed, "predictions_unchanged": self.predictions_unchanged,
                "n_increase_above_zero": self.n_increase_above_zero,
                "n_attacked_above_clean": self.n_attacked_above_clean}

    @classmethod
    def from_results(cls, results: Sequence[tuple[str, float, ACEResult]], *, steps: int, n_bins: int = 15,
                     n_boot: int = 200, seed: int = 0) -> ACEBenchmark:
        """The benchmark of finished attacks ``(configuration, eps, result)`` (e.g. read back from a store)."""
        rows = []
        for cfg, e, res in results:
            d = res.ece_intervals(n_bins, n_boot=n_boot, seed=seed)
            rows.append(ACEBenchmarkRow(
                configuration=cfg, norm=res.norm, eps=float(e), accuracy=d["accuracy"], accuracy_ci=d["accuracy_ci"],
                clean_ece=d["clean_ece"], clean_ece_ci=d["clean_ece_ci"], adv_ece=d["adv_ece"],
                adv_ece_ci=d["adv_ece_ci"], diff_ece=d["diff_ece"], diff_ece_ci=d["diff_ece_ci"],
                prediction_unchanged=res.prediction_unchanged))
        return cls(rows=tuple(rows), steps=steps, n_bins=n_bins, n_boot=n_boot, seed=seed,
                   results=tuple(r for _, _, r in results))


def check_ace_eps(eps: Mapping[str, float] | None) -> dict[str, float]:
    """``{"linf": ..., "l2": ...}`` budgets (default: L-inf 8/255, the paper's CIFAR-10 budget)."""
    eps = {"linf": 8 / 255} if eps is None else eps
    if not isinstance(eps, Mapping) or not eps:
        raise ValueError(f"eps must map at least one norm ('linf' or 'l2') to a budget, got {eps!r}")
    out = {}
    for norm, e in eps.items():
        check_choice("eps (norm)", norm, ("linf", "l2"))
        out[norm] = check_float(f"eps[{norm!r}]", e, gt=0)
    return out


def ace_benchmark(
    model: torch.nn.Module,
    x: torch.Tensor,
    y: Any,
    *,
    eps: Mapping[str, float] | None = None,
    configurations: Sequence[str] = tuple(ACE_CONFIGURATIONS),
    steps: int = 100,
    n_bins: int = 15,
    n_boot: int = 200,
    seed: int = 0,
    outputs: str = "logits",
) -> ACEBenchmark:
    """Run each of ``configurations`` under each norm of ``eps`` (``{"linf": ..., "l2": ...}``, in that order of
    rows: norms outer, configurations inner) and collect the ECE effect with intervals (paper §2.2, Table 1).

    Defaults from the paper (Table 1, App. B.2): all four configurations, L-inf eps = 8/255 (CIFAR-10), 100 PGD
    steps; ``n_bins`` = 15 equal-width bins of the ECE; ``n_boot`` bootstrap resamples (seeded by ``seed``)."""
    eps = check_ace_eps(eps)
    configurations = tuple(configurations)
    if not configurations:
        raise ValueError("configurations must not be empty")
    for c in configurations:
        check_choice("configurations", c, tuple(ACE_CONFIGURATIONS))
    check_int("steps", steps, ge=1)
    check_int("n_bins", n_bins, ge=1)
    check_int("n_boot", n_boot, ge=1)
    check_outputs(outputs)
    check_labelled_images(model, x, y)
    results = []
    for norm, e in eps.items():
        for cfg in configurations:
            res = BetaACE.from_configuration(cfg, norm=norm, steps=steps, outputs=outputs)(model, x, y, float(e))
            results.append((cfg, float(e), res))
    return ACEBenchmark.from_results(results, steps=steps, n_bins=n_bins, n_boot=n_boot, seed=seed)
