"""The indicators' measurements on the model (:func:`probe`), beside AutoAttack on the same points: FGSM, PGD
(:func:`pgd`), APGD-CE over an ε sweep, with doubled iterations and with an unbounded budget (:func:`large_eps`),
input gradients, two identical calls, and a trace of the forward pass for autograd. The result, :class:`Probes`, is
JSON-safe; :mod:`robustsuite_common.indicators` turns it into checks."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from .checks import check_choice, check_float, check_int, check_labels
from .projection import project

__all__ = ["Probes", "large_eps", "pgd", "probe"]


@dataclass(frozen=True)
class Probes:
    """What :func:`probe` measured on the same points as AutoAttack (JSON-safe; see :func:`~robustsuite_common.indicators.attack_checks`).

    ``fgsm``/``pgd``: per-point robust flags at ε; ``sweep``: APGD-CE robust flags per ε (``sweep_eps``, ε
    included); ``doubled``: APGD-CE at ε with twice the iterations; ``large``: APGD-CE at ``large_eps`` (a budget
    that covers the whole input box); ``zero_grad``: points whose input gradient of the cross-entropy is zero or
    not finite; ``logit_change``: the largest change of L2-normalised logits between two identical calls;
    ``autograd_calls``: autograd functions entered during one forward pass; ``probability_rows``: rows of the
    model's output that look like probabilities.
    """

    eps: float
    norm: str
    n_iter: int
    fgsm: list[bool]
    pgd: list[bool]
    sweep_eps: list[float]
    sweep: list[list[bool]]
    doubled: list[bool]
    large_eps: float
    large: list[bool]
    zero_grad: list[bool]
    logit_change: float
    autograd_calls: int
    probability_rows: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Probes:
        return cls(**d)


def large_eps(norm: str, shape: Sequence[int]) -> float:
    """A budget that reaches every input of the [0, 1] box from every other: 1 for L∞, √d for L2 (d = C·H·W)."""
    return 1.0 if norm == "Linf" else float(math.sqrt(int(np.prod(shape[1:]))))


def pgd(model: Any, x: Any, y: Any, *, eps: float, norm: str = "Linf", steps: int = 20,
        step_size: float | None = None, random_start: bool = True, seed: int = 0, batch_size: int = 256) -> Any:
    """Projected gradient descent on the cross-entropy (Madry et al. 2018): per-point robust flags (the model
    still answers ``y``). ``steps=1, random_start=False, step_size=eps`` is FGSM (Goodfellow et al. 2015).
    Default step ``2.5 ε / steps``; L∞ steps follow the gradient's sign, L2 steps its normalised direction."""
    import torch

    from .models import as_model_input, evaluating, logits_from

    eps = check_float("eps", eps, gt=0.0)
    norm = check_choice("norm", norm, ("Linf", "L2"))
    steps = check_int("steps", steps, ge=1)
    alpha = 2.5 * eps / steps if step_size is None else check_float("step_size", step_size, gt=0.0)
    gen = torch.Generator().manual_seed(check_int("seed", seed, ge=0))
    out = []
    with evaluating(model, freeze_parameters=True):
        for i in range(0, x.shape[0], batch_size):
            xb = as_model_input(model, x[i:i + batch_size]).detach()
            yb = torch.as_tensor(np.asarray(y[i:i + batch_size]), device=xb.device)
            xa = xb.clone()
            if random_start:  # uniform in the L∞ ball; on the L2 sphere
                noise = torch.rand(xb.shape, generator=gen).to(xb.device, xb.dtype) * 2 - 1
                if norm == "L2":
                    noise = noise / noise.flatten(1).norm(dim=1).clamp_min(1e-12).view(-1, *([1] * (xb.ndim - 1)))
                xa = project(xb + eps * noise, xb, eps=eps, norm=norm)
            for _ in range(steps):
                xa.requires_grad_(True)
                with torch.enable_grad():
                    loss = torch.nn.functional.cross_entropy(logits_from(model(xa), n=xa.shape[0]), yb,
                                                             reduction="sum")
                    # a model whose output does not depend on its input has no gradient: the attack stands still
                    g = torch.autograd.grad(loss, xa)[0] if loss.requires_grad else torch.zeros_like(xa)
                g = torch.nan_to_num(g)
                if norm == "Linf":
                    step = g.sign()
                else:
                    step = g / g.flatten(1).norm(dim=1).clamp_min(1e-12).view(-1, *([1] * (g.ndim - 1)))
                xa = project(xa.detach() + alpha * step, xb, eps=eps, norm=norm)
            with torch.no_grad():
                out.append((logits_from(model(xa), n=xa.shape[0]).argmax(1) == yb).cpu())
    return torch.cat(out)


def _autograd_calls(model: Any, x: Any) -> int:
    """Autograd functions (``grad``, ``backward``, ``_make_grads``) entered during one forward pass: a model that
    differentiates inside its forward pass adapts at test time (AutoAttack's ``check_dynamic``)."""
    import torch

    calls = 0

    def trace(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call" and frame.f_code.co_name in ("grad", "backward", "_make_grads"):
            calls += 1

    old = sys.gettrace()
    sys.settrace(trace)  # type: ignore[arg-type]
    try:
        with torch.no_grad():
            model(x)
    finally:
        sys.settrace(old)
    return calls


def probe(model: Any, x: Any, y: Any, *, eps: float, norm: str = "Linf", n_iter: int = 20, seed: int = 0,
          batch_size: int = 256, progress: Any = None) -> Probes:
    """Run the indicators' attacks and measurements on ``model`` at ``(x, y)`` (the points AutoAttack attacked):
    FGSM and PGD (``n_iter`` steps) at ε; APGD-CE (``n_iter`` iterations, one restart) at ε/2, ε, 2ε, 4ε (L∞
    capped at 1), at ε with ``2 n_iter`` iterations and at :func:`large_eps`; input gradients; two identical
    calls; a traced forward pass. ``progress(stage)`` is called before each stage when given."""
    import torch

    from .autoattack import autoattack
    from .models import as_model_input, evaluating, forward_logits, logits_from

    eps = check_float("eps", eps, gt=0.0)
    norm = check_choice("norm", norm, ("Linf", "L2"))
    n_iter = check_int("n_iter", n_iter, ge=1)
    y_np = check_labels("y", y, length=x.shape[0])
    say = progress or (lambda stage: None)

    def apgd(budget: float, iters: int) -> list[bool]:
        try:
            r = autoattack(model, x, y_np, eps=budget, norm=norm, version="custom", attacks=["apgd-ce"], seed=seed,
                           n_iter=iters, n_restarts=1, batch_size=batch_size)
        except RuntimeError as e:  # pyautoattack cannot differentiate a model whose output ignores its input
            if "does not require grad" not in str(e):
                raise
            return [bool(v) for v in (forward_logits(model, x).argmax(1).cpu().numpy() == y_np)]
        return [bool(v) for v in r.robust.tolist()]

    say("gradients and determinism")
    with evaluating(model, freeze_parameters=True):
        zero, probs, change = [], 0, 0.0
        for i in range(0, x.shape[0], batch_size):
            xb = as_model_input(model, x[i:i + batch_size]).detach().requires_grad_(True)
            yb = torch.as_tensor(y_np[i:i + batch_size], device=xb.device)
            with torch.enable_grad():
                logits = logits_from(model(xb), n=xb.shape[0])
                loss = torch.nn.functional.cross_entropy(logits, yb, reduction="sum")
                g = torch.autograd.grad(loss, xb, allow_unused=True)[0] if loss.requires_grad else None
            if g is None:
                zero += [True] * xb.shape[0]
            else:
                flat = g.flatten(1)
                zero += (~torch.isfinite(flat).all(1) | (flat.abs().sum(1) == 0)).tolist()
            with torch.no_grad():
                v = logits.detach().double()
                probs += int((((v >= -1e-4) & (v <= 1 + 1e-4)).all(1) & ((v.sum(1) - 1).abs() <= 1e-4)).sum())
                a = logits_from(model(xb.detach()), n=xb.shape[0]).double()
                b = logits_from(model(xb.detach()), n=xb.shape[0]).double()
                a, b = (t / (t.norm(dim=1, keepdim=True) + 1e-10) for t in (a, b))
                change = max(change, float((a - b).norm(dim=1).max()))
        calls = _autograd_calls(model, as_model_input(model, x[:batch_size]))
    say("FGSM and PGD")
    fgsm = pgd(model, x, y_np, eps=eps, norm=norm, steps=1, step_size=eps, random_start=False, seed=seed,
               batch_size=batch_size)
    p = pgd(model, x, y_np, eps=eps, norm=norm, steps=n_iter, seed=seed, batch_size=batch_size)
    sweep_eps = [e for e in (eps / 2, eps, 2 * eps, 4 * eps) if norm != "Linf" or e <= 1.0]
    if norm == "Linf" and 1.0 not in sweep_eps and sweep_eps[-1] < 1.0 and len(sweep_eps) < 4:
        sweep_eps.append(1.0)
    sweep = []
    for e in sweep_eps:
        say(f"APGD-CE at eps {e:g}")
        sweep.append(apgd(e, n_iter))
    say(f"APGD-CE with {2 * n_iter} iterations")
    doubled = apgd(eps, 2 * n_iter)
    big = large_eps(norm, tuple(x.shape))
    say(f"APGD-CE at eps {big:g} (unbounded)")
    large = apgd(big, n_iter)
    return Probes(eps=float(eps), norm=norm, n_iter=n_iter, fgsm=[bool(v) for v in fgsm.tolist()],
                  pgd=[bool(v) for v in p.tolist()], sweep_eps=[float(e) for e in sweep_eps], sweep=sweep,
                  doubled=doubled, large_eps=big, large=large, zero_grad=[bool(v) for v in zero],
                  logit_change=float(change), autograd_calls=int(calls), probability_rows=int(probs))
