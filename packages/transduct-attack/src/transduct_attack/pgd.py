"""Projected gradient descent on a *set* of models (the inner solver of PGD, FPA and GMSA, A.1.3).

The gradient of the ensemble objective is accumulated model by model: one forward/backward graph
is alive at a time, so activation memory stays flat as the model set grows with GMSA's iterations
(A.1.3: "we do the backpropagation for each model sequentially and then accumulate the gradients").

Aggregates over the model set (Algorithm 2):
- ``"avg"``: L^AVG = (1 / (i+1)) * sum_j L_a(F_j, V')  (GMSA-AVG)
- ``"min"``: L^MIN = min_j L_a(F_j, V')  (GMSA-MIN). Taken per sample, as in the authors' code: each
  sample is pushed along the gradient of the model that currently resists it most. The batch-level
  min of the paper's display equals this whenever one model is the hardest for every sample.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal

import torch
from torch import nn

from robustsuite_common.checks import check_choice, check_images, check_int
from robustsuite_common.projection import project

from . import losses as _losses
from ._validate import as_input, check_eps, check_generator, check_labels, check_positive, logits_model

Aggregate = Literal["avg", "min"]
AGGREGATES: tuple[str, ...] = ("avg", "min")

__all__ = ["PGD", "PGDEnsemble", "Aggregate", "ensemble_gradient", "ensemble_objective"]

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def ensemble_objective(models: Sequence[nn.Module], x: torch.Tensor, y: torch.Tensor, loss: LossFn,
                       aggregate: str) -> torch.Tensor:
    """Per-sample aggregated loss over ``models`` (no gradient)."""
    with torch.no_grad():
        if aggregate == "avg":
            total = torch.zeros(x.shape[0], device=x.device)
            for m in models:
                total += loss(m(x), y)
            return total / len(models)
        best = torch.full((x.shape[0],), float("inf"), device=x.device)
        for m in models:
            best = torch.minimum(best, loss(m(x), y))
        return best


def ensemble_gradient(models: Sequence[nn.Module], x: torch.Tensor, y: torch.Tensor, loss: LossFn,
                      aggregate: str) -> torch.Tensor:
    """Gradient w.r.t. ``x`` of the summed per-sample aggregated loss, one model at a time."""
    grad = torch.zeros_like(x)
    if aggregate == "avg":
        for m in models:
            xr = x.detach().requires_grad_(True)
            (g,) = torch.autograd.grad(loss(m(xr), y).sum(), xr)
            grad += g
        return grad / len(models)
    # "min": a forward pass of every model without a graph finds each sample's hardest model (argmin, first on
    # ties, as torch.min's backward in the one-graph form); then each model backpropagates only the samples it
    # is the minimum for, fed as a sub-batch. The backward work is one pass over the batch in total instead of
    # one per model, and one graph at a time is alive (memory flat in the number of models). A position-aware
    # model (DENT's per-sample affines: ``position_aware = True``) gets the whole batch with a masked loss.
    with torch.no_grad():
        values = torch.stack([loss(m(x), y) for m in models])  # (M, N): M floats per sample, tiny
        argmin = values.argmin(dim=0)
        order = argmin.argsort(stable=True)  # samples grouped by their hardest model
        counts = torch.bincount(argmin, minlength=len(models)).tolist()  # one host sync for the whole split
    xs, ys = x.detach()[order], y[order]
    pieces = []
    start = 0
    for j, (m, c) in enumerate(zip(models, counts, strict=True)):
        if c == 0:
            continue
        sl = slice(start, start + c)
        start += c
        if getattr(m, "position_aware", False):
            xr = x.detach().requires_grad_(True)
            (g,) = torch.autograd.grad((loss(m(xr), y) * (argmin == j)).sum(), xr)
            pieces.append(g[order[sl]])
        else:
            xr = xs[sl].requires_grad_(True)
            (g,) = torch.autograd.grad(loss(m(xr), ys[sl]).sum(), xr)
            pieces.append(g)
    grad[order] = torch.cat(pieces)
    return grad


def _random_start(x: torch.Tensor, eps: float, generator: torch.Generator) -> torch.Tensor:
    noise = torch.rand(x.shape, generator=generator, device=generator.device, dtype=x.dtype).to(x.device)
    return project(x + (2 * noise - 1) * eps, x, eps=eps, norm="Linf")


def _check_models(models: Sequence[nn.Module] | nn.Module) -> list[nn.Module]:
    """The model set, each read as logits (any output form) in eval mode (:class:`LogitsModel`)."""
    if isinstance(models, nn.Module):
        models = [models]
    models = list(models)
    if not models or not all(isinstance(m, nn.Module) for m in models):
        raise TypeError("models must be a non-empty sequence of torch.nn.Module")
    return [logits_model("models", m) for m in models]


def _check_run(models: Sequence[nn.Module] | nn.Module, x: torch.Tensor, y: Any, *, eps: float,
               generator: torch.Generator, aggregate: str) -> tuple[list[nn.Module], torch.Tensor, torch.Tensor, float,
                                                                    str]:
    """A solver's arguments checked: the model set, x as the first model's input, y on its device, eps, aggregate."""
    models = _check_models(models)
    check_images("x", x)
    y = check_labels("y", y, x.shape[0], device=x.device, model=models[0], x=x)
    x = as_input(models[0], x)
    y = y.to(x.device)
    eps = check_eps(eps)
    check_generator(generator)
    return models, x, y, eps, check_choice("aggregate", aggregate, AGGREGATES)


class PGD:
    """L-infinity PGD (Madry et al., 2018) on the aggregated loss of a model set.

    Hyper-parameters are keyword-only; :meth:`run` takes the models, the data and the budget ``eps``.
    ``step_size=None`` means ``2.5 * eps / steps`` (``steps`` before any ``steps_scale``, which adds steps of
    the same size). ``restarts`` random restarts keep, per sample, the restart with the largest aggregated
    attack loss.

    Paper: the solver of FPA and GMSA (Algorithms 1–2; step schedule of A.1.3).
    """

    def __init__(self, *, steps: int = 100, step_size: float | None = None, random_start: bool = True,
                 restarts: int = 1, loss: str = "ce") -> None:
        self.steps = check_int("steps", steps, ge=1)
        self.step_size = None if step_size is None else check_positive("step_size", step_size)
        self.random_start = bool(random_start)
        self.restarts = check_int("restarts", restarts, ge=1)
        self.loss = check_choice("loss", loss, ("ce", "cw"))

    def __repr__(self) -> str:
        return (f"PGD(steps={self.steps}, step_size={self.step_size}, random_start={self.random_start}, "
                f"restarts={self.restarts}, loss={self.loss!r})")

    def _step_size(self, eps: float, steps: int) -> float:
        return self.step_size if self.step_size is not None else 2.5 * eps / steps

    def run(self, models: Sequence[nn.Module] | nn.Module, x: torch.Tensor, y: torch.Tensor, *,
            eps: float, generator: torch.Generator, aggregate: str = "avg", steps_scale: int = 1,
            target: torch.Tensor | None = None, loss: str | None = None) -> torch.Tensor:
        """Return x' in the eps-ball of ``x`` (clipped to [0, 1]) maximising the aggregated loss."""
        models, x, y, eps, aggregate = _check_run(models, x, y, eps=eps, generator=generator, aggregate=aggregate)
        steps = self.steps * check_int("steps_scale", steps_scale, ge=1)
        name = self.loss if loss is None else check_choice("loss", loss, _losses.ATTACK_LOSSES)
        if name == "cw-targeted":
            if target is None:
                raise ValueError("loss 'cw-targeted' needs target=")

            def targeted(z: torch.Tensor, yt: torch.Tensor) -> torch.Tensor:
                return _losses.cw_targeted(z, yt[:, 0], yt[:, 1])

            loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = targeted

            # labels and targets travel together, so a sub-batch (MIN's per-model backward) indexes both
            labels = torch.stack([y, target.to(y.device)], dim=1)
        elif name == "cw":
            loss_fn = _losses.cw_untargeted
        else:
            loss_fn = _losses.cross_entropy
        if name != "cw-targeted":
            labels = y
        x = x.detach()
        # The step size is that of the *base* schedule: A.1.3 scales GMSA-MIN's number of steps by (i + 1) at
        # a fixed step size (0.01 on MNIST), so the extra steps lengthen the search instead of shrinking it.
        alpha = self._step_size(eps, self.steps)
        best, best_val = x.clone(), None
        for _ in range(self.restarts):
            x_adv = _random_start(x, eps, generator) if (self.random_start and eps > 0) else x.clone()
            for _ in range(steps):
                if eps == 0:
                    break
                g = ensemble_gradient(models, x_adv, labels, loss_fn, aggregate)
                x_adv = project(x_adv + alpha * g.sign(), x, eps=eps, norm="Linf")
            if self.restarts == 1:
                return x_adv
            val = ensemble_objective(models, x_adv, labels, loss_fn, aggregate)
            if best_val is None:
                best, best_val = x_adv, val
            else:
                better = val > best_val
                best = torch.where(better.view(-1, *([1] * (x.dim() - 1))), x_adv, best)
                best_val = torch.where(better, val, best_val)
        return best


class PGDEnsemble:
    """The 14 PGD subroutines of A.3 (DENT): untargeted CW restarts plus one targeted CW run per class.

    Every subroutine returns a candidate x'; per sample the candidate maximising the selection loss
    L_a = max_{k != y} f(x')_k (aggregated over the model set like the attack loss) is kept.
    ``n_targeted=None`` targets every other class (9 on a 10-class task, as in the paper).
    """

    def __init__(self, *, steps: int = 100, step_size: float | None = None, n_untargeted: int = 5,
                 n_targeted: int | None = None, random_start: bool = True) -> None:
        self.steps = check_int("steps", steps, ge=1)
        self.step_size = None if step_size is None else check_positive("step_size", step_size)
        self.n_untargeted = check_int("n_untargeted", n_untargeted, ge=0)
        self.n_targeted = None if n_targeted is None else check_int("n_targeted", n_targeted, ge=0)
        self.random_start = bool(random_start)
        if self.n_untargeted == 0 and self.n_targeted == 0:
            raise ValueError("PGDEnsemble needs at least one subroutine (n_untargeted or n_targeted > 0)")

    def __repr__(self) -> str:
        return (f"PGDEnsemble(steps={self.steps}, step_size={self.step_size}, n_untargeted={self.n_untargeted}, "
                f"n_targeted={self.n_targeted})")

    def run(self, models: Sequence[nn.Module] | nn.Module, x: torch.Tensor, y: torch.Tensor, *,
            eps: float, generator: torch.Generator, aggregate: str = "avg", steps_scale: int = 1) -> torch.Tensor:
        """Run all subroutines and keep, per sample, the candidate with the largest selection loss."""
        models, x, y, eps, aggregate = _check_run(models, x, y, eps=eps, generator=generator, aggregate=aggregate)
        with torch.no_grad():
            # the whole batch: a DENT-adapted model is position-aware and only accepts the batch it adapted on
            k = models[0](x).shape[1]
        n_targeted = k - 1 if self.n_targeted is None else min(self.n_targeted, k - 1)
        sub = PGD(steps=self.steps, step_size=self.step_size, random_start=self.random_start, restarts=1)
        candidates: list[torch.Tensor] = []
        for _ in range(self.n_untargeted):
            candidates.append(sub.run(models, x, y, eps=eps, generator=generator, aggregate=aggregate,
                                      steps_scale=steps_scale, loss="cw"))
        for shift in range(1, n_targeted + 1):
            target = (y + shift) % k
            candidates.append(sub.run(models, x, y, eps=eps, generator=generator, aggregate=aggregate,
                                      steps_scale=steps_scale, loss="cw-targeted", target=target))
        if not candidates:
            raise ValueError("PGDEnsemble runs no subroutine (n_untargeted = 0 and no targeted run)")
        best = candidates[0]
        best_val = ensemble_objective(models, best, y, _losses.max_wrong_probability, aggregate)
        for cand in candidates[1:]:
            val = ensemble_objective(models, cand, y, _losses.max_wrong_probability, aggregate)
            better = val > best_val
            best = torch.where(better.view(-1, *([1] * (x.dim() - 1))), cand, best)
            best_val = torch.where(better, val, best_val)
        return best
