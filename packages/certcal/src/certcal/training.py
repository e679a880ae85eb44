"""Adversarial calibration training (paper §4, Eqs. 7-8, App. F, I.3) and its SmoothAdv baseline.

Every method fine-tunes a copy of a vision model with m Gaussian noise draws per input (the same draws for
the inner attack and the weight update, as in SmoothAdv) and minimises the negative log-likelihood of the
smoothed soft classifier at the adversarial inputs, -log((1/m) sum_i softmax(f(x' + delta_i))_y) (Eq. 7; the
noise-only baseline keeps Cohen et al.'s mean base cross-entropy). They differ in the inner adversary, an L2 PGD within radius
``eps`` (warmed up linearly over ``warmup_epochs``):

* ``"gaussian"``  no adversary (Cohen et al.'s noise augmentation; used to make a smoothing base model);
* ``"smoothadv"`` Salman et al.: maximise -log((1/m) sum_i softmax(f(x' + delta_i))_y) (the AT baseline);
* ``"brier_act"`` Brier-ACT: maximise each sample's Brier term (c_n - z_n(x'))^2 of the smoothed top-class
  confidence, lowering it where the smoothed prediction is correct and raising it where it is wrong;
* ``"acce_act"``  ACCE-ACT as in App. F.2: the ADMM adversary of program (6) runs on the mini-batch with the
  confidence variable replaced by the smoothed confidence z_n(x'_n) of the model: every attack step takes
  one PGD step on x' against the augmented Lagrangian's z-terms (the model's forward pass gives z), then one
  gradient step on the assignment a, the closed-form split-variable updates and dual ascent;
* ``"acce_act_exact"`` (beyond the paper) the exact solver of program (6) finds worst-case target
  confidences on the batch first, and PGD moves each input towards its target (the "inverse problem" of
  App. L).

Departures from the paper, and why: (i) the certificate intervals inside training drop the Hoeffding term
(with m ~ 4 draws it would cover [0, 1]): [Phi(Phi^-1(z) - eps/sigma), Phi(Phi^-1(z) + eps/sigma)] around the
clean Monte-Carlo confidence z. (ii) In the calibration adversaries a step that would change the smoothed
(Monte-Carlo) prediction is rejected and its step halved, so c_n stays fixed as certification requires.
(iii) In ACCE-ACT one z per sample (the model's) stands for the per-bin z_nm, so the z = g coupling is
applied over the sample's reachable bins only (reconstructed: App. F's equations were lost).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F

from robustsuite_common.checks import check_choice, check_float, check_int
from robustsuite_common.contract import renamed
from robustsuite_common.models import as_model_input, evaluating, model_device
from robustsuite_common.projection import project

from ._pgd import ascent_direction
from ._validation import check_label_range, check_labelled_images, make_generator, model_logits, num_classes
from .cce import ADMMConfig, certified_calibration_error

__all__ = ["OPTIMIZERS", "TRAINING_METHODS", "TrainingResult", "adversarial_calibration_training", "gaussian_noise_training"]

TRAINING_METHODS = ("gaussian", "smoothadv", "brier_act", "acce_act", "acce_act_exact")
#: weight optimisers: Adam (the CPU default) or SGD with momentum (the paper's, App. I.3; Salman et al.'s 0.9)
OPTIMIZERS = ("adam", "sgd")


@dataclass(frozen=True)
class TrainingResult:
    """The fine-tuned model (a copy unless ``inplace``) and the per-epoch mean training loss."""

    model: torch.nn.Module = field(repr=False)
    method: str
    epochs: int
    loss_history: tuple[float, ...]
    config: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "epochs": self.epochs, "loss_history": list(self.loss_history),
                "config": dict(self.config)}


def _smoothed_logprob(model: torch.nn.Module, x: torch.Tensor, noise: torch.Tensor,
                      outputs: str = "logits") -> torch.Tensor:
    """log((1/m) sum_i softmax(f(x + delta_i))): (B, K), from noise (B, m, C, H, W)."""
    b, m = noise.shape[:2]
    logits = model_logits(model((x[:, None] + noise).flatten(0, 1)), b * m, outputs, first=False)
    logp = torch.log_softmax(logits, dim=1).view(b, m, -1)
    return torch.logsumexp(logp, dim=1) - np.log(m)


def _pgd_l2(
    model: torch.nn.Module,
    x: torch.Tensor,
    noise: torch.Tensor,
    eps: float,
    steps: int,
    step_size: float,
    objective,
    keep_prediction: torch.Tensor | None,
) -> torch.Tensor:
    """L2 PGD ascent on objective(smoothed_logprob) (per-sample values); optional prediction constraint."""
    if eps <= 0:
        return x
    view = (-1,) + (1,) * (x.ndim - 1)
    eps_v = torch.full((x.shape[0],) + (1,) * (x.ndim - 1), eps, device=x.device, dtype=x.dtype)
    alpha = torch.full((x.shape[0],), step_size, device=x.device, dtype=x.dtype)
    x_adv = x.clone()
    for _ in range(steps):
        xr = x_adv.detach().requires_grad_(True)
        val = objective(_smoothed_logprob(model, xr, noise))
        (grad,) = torch.autograd.grad(val.sum(), xr)
        cand = project(x_adv + alpha.view(view) * ascent_direction(grad, "l2"), x, eps=eps_v, norm="l2", linf="delta")
        if keep_prediction is None:
            x_adv = cand.detach()
            continue
        with torch.no_grad():
            ok = _smoothed_logprob(model, cand, noise).argmax(1) == keep_prediction
        x_adv = torch.where(ok.view(view), cand, x_adv).detach()
        alpha = torch.where(ok, alpha, alpha / 2)
    return x_adv


@renamed(epsilon="eps")
def adversarial_calibration_training(
    model: torch.nn.Module,
    x: torch.Tensor,
    y: Any,
    *,
    method: Literal["gaussian", "smoothadv", "brier_act", "acce_act", "acce_act_exact"] = "acce_act",
    sigma: float = 0.25,
    eps: float = 0.25,
    epochs: int = 10,
    batch_size: int = 256,
    num_noise: int = 4,
    attack_steps: int = 4,
    attack_step_factor: float = 1.0,
    lr: float = 1e-3,
    weight_decay: float = 1e-4,
    optimizer: Literal["adam", "sgd"] = "adam",
    momentum: float = 0.9,
    warmup_epochs: int = 3,
    n_bins: int = 15,
    admm: ADMMConfig | None = None,
    seed: int = 0,
    inplace: bool = False,
    progress: bool = False,
) -> TrainingResult:
    """Fine-tune ``model`` on (x, y) with the chosen (adversarial calibration) training method.

    Attack step size = attack_step_factor * 2 * eps / attack_steps (Salman et al.'s rule, scaled as in
    App. I.3); weights are updated with ``optimizer``: ``"adam"`` (default: converges in the few epochs a small
    CPU run affords) or ``"sgd"`` with ``momentum`` (the paper's, App. I.3: SGD, weight decay 1e-4); the model
    learning rate decays by 10x every 4 epochs (App. I.3).
    ``admm``: the settings of ACCE-ACT's ADMM adversary (``lr_a``, rho schedule, ``grad_clip``, ``a_init``;
    it takes one ADMM step per attack step, so ``ADMMConfig.steps`` is not used here).
    """
    yt = check_labelled_images(model, x, y)
    check_choice("method", method, TRAINING_METHODS)
    check_float("sigma", sigma, gt=0)
    check_float("eps", eps, ge=0)
    for name, v in (("epochs", epochs), ("batch_size", batch_size), ("num_noise", num_noise),
                    ("attack_steps", attack_steps), ("n_bins", n_bins)):
        check_int(name, v, ge=1)
    check_int("warmup_epochs", warmup_epochs, ge=0)
    check_float("lr", lr, gt=0)
    check_float("attack_step_factor", attack_step_factor, gt=0)
    check_float("weight_decay", weight_decay, ge=0)
    check_choice("optimizer", optimizer, OPTIMIZERS)
    check_float("momentum", momentum, ge=0, lt=1)
    if admm is not None and not isinstance(admm, ADMMConfig):
        raise TypeError(f"admm must be an ADMMConfig, got {type(admm).__name__}")
    with evaluating(model):  # reads the number of classes on x[:2]; the caller's model is not changed
        check_label_range("y", yt, num_classes(model, x))
    # ACCE-ACT's adversary uses the ADMM learning rate of a, the rho schedule and the gradient clip; its number
    # of steps is ``attack_steps`` (one ADMM step per PGD step, App. F.2)
    admm_cfg = admm or ADMMConfig()

    net = model if inplace else copy.deepcopy(model)
    device = model_device(net)
    gen = make_generator(seed, None, device)
    cpu_gen = make_generator(seed + 1, None, torch.device("cpu"))
    opt = (torch.optim.Adam(net.parameters(), lr=lr, weight_decay=weight_decay) if optimizer == "adam" else
           torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay))
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.1)
    xs, ys = as_model_input(net, x), yt.to(device)
    history = []
    iterator = range(epochs)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(iterator, desc=f"ACT[{method}]", leave=False)
    for epoch in iterator:
        eps_now = eps * min(1.0, (epoch + 1) / warmup_epochs) if warmup_epochs > 0 else eps
        step = attack_step_factor * 2.0 * eps_now / attack_steps
        perm = torch.randperm(x.shape[0], generator=cpu_gen).to(device)
        total, count = 0.0, 0
        for s in range(0, x.shape[0], batch_size):
            idx = perm[s:s + batch_size]
            xb, yb = xs[idx], ys[idx]
            noise = sigma * torch.randn((xb.shape[0], num_noise) + tuple(xb.shape[1:]), generator=gen,
                                        device=device, dtype=xb.dtype)
            net.eval()
            x_adv = _inner(net, method, xb, yb, noise, eps_now, sigma, attack_steps, step, n_bins, admm_cfg)
            net.train()
            loss = _outer_loss(net, method, x_adv, yb, noise)
            lv = float(loss.detach())
            if not np.isfinite(lv):
                raise ValueError(f"training loss became non-finite ({lv}) in epoch {epoch}: the model returned "
                                 "NaN/inf logits; lower lr or check the model")
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += lv * xb.shape[0]
            count += xb.shape[0]
        sched.step()
        history.append(total / count)
    net.eval()
    cfg = {"sigma": sigma, "epsilon": eps, "batch_size": batch_size, "num_noise": num_noise,
           "attack_steps": attack_steps, "attack_step_factor": attack_step_factor, "lr": lr,
           "warmup_epochs": warmup_epochs, "n_bins": n_bins, "seed": seed, "optimizer": optimizer,
           **({"momentum": momentum} if optimizer == "sgd" else {})}
    return TrainingResult(model=net, method=method, epochs=epochs, loss_history=tuple(history), config=cfg)


def _outer_loss(net: torch.nn.Module, method: str, x_adv: torch.Tensor, y: torch.Tensor,
                noise: torch.Tensor) -> torch.Tensor:
    """The weight-update loss at the adversarial inputs (Eq. 7).

    SmoothAdv and ACT minimise the negative log-likelihood of the smoothed soft classifier,
    -log((1/m) sum_i softmax(f(x' + delta_i))_y) (§4: "the cross-entropy loss of a smooth soft classifier",
    Monte-Carlo over the same m draws as the adversary); the noise-only baseline keeps Cohen et al.'s
    augmentation loss, the mean of the m base cross-entropies.
    """
    if method == "gaussian":
        b, m = noise.shape[:2]
        logits = model_logits(net((x_adv[:, None] + noise).flatten(0, 1)), b * m, first=False)
        return F.cross_entropy(logits, y.repeat_interleave(m))
    return -_smoothed_logprob(net, x_adv, noise).gather(1, y[:, None]).mean()


def _inner(net, method, xb, yb, noise, eps, sigma, steps, step, n_bins, admm_cfg) -> torch.Tensor:
    if method == "gaussian" or eps <= 0:
        return xb
    if method == "smoothadv":
        return _pgd_l2(net, xb, noise, eps, steps, step,
                       lambda lp: -lp.gather(1, yb[:, None]).squeeze(1), keep_prediction=None)
    with torch.no_grad():
        lp0 = _smoothed_logprob(net, xb, noise)
    pred = lp0.argmax(1)
    correct = (pred == yb).to(lp0.dtype)
    if method == "brier_act":
        def brier(lp: torch.Tensor) -> torch.Tensor:
            return (correct - lp.gather(1, pred[:, None]).squeeze(1).exp()) ** 2

        return _pgd_l2(net, xb, noise, eps, steps, step, brier, keep_prediction=pred)
    from scipy.stats import norm as _norm

    if method == "acce_act":
        return _acce_admm_pgd(net, xb, noise, pred, correct, lp0, eps, sigma, steps, step, n_bins, admm_cfg)
    # exact-ACT: worst-case target confidences from the exact CCE optimum on this batch

    z = lp0.max(1).values.exp().double().cpu().numpy().clip(0.0, 1.0)
    shift = eps / sigma
    lower = _norm.cdf(_norm.ppf(z) - shift)
    upper = _norm.cdf(_norm.ppf(z) + shift)
    res = certified_calibration_error(
        lower, upper, correct.cpu().numpy(), n_bins=n_bins,
        method="exact", confidences=z)
    target = torch.as_tensor(res.confidences, dtype=xb.dtype, device=xb.device)

    def toward(lp: torch.Tensor) -> torch.Tensor:
        return -(lp.gather(1, pred[:, None]).squeeze(1).exp() - target) ** 2

    return _pgd_l2(net, xb, noise, eps, steps, step, toward, keep_prediction=pred)


def _acce_admm_pgd(net, xb, noise, pred, correct, lp0, eps, sigma, steps, step, n_bins, cfg) -> torch.Tensor:
    """ACCE-ACT's inner maximisation (App. F.2): ADMM on program (6) whose confidences are the model's.

    Each of ``steps`` iterations: z = smoothed confidence of the prediction at x' (forward pass); one L2 PGD
    step on x' descending the Lagrangian's z-terms -sum_m s_m sum_n a_nm (c_n - z_n) + sum_{n, m reachable}
    [l5_nm (z_n - g_nm) + rho/2 (z_n - g_nm)^2] (prediction kept fixed); one clipped gradient step on a;
    q1, q2, g in closed form; dual ascent; rho grows by ``cfg.rho_growth`` up to ``cfg.rho_max``.
    """
    from scipy.stats import norm as _norm

    from ._program import build_program

    dev, dt = xb.device, lp0.dtype
    z0 = lp0.gather(1, pred[:, None]).squeeze(1).exp().double().cpu().numpy().clip(0.0, 1.0)
    shift = eps / sigma
    prog = build_program(_norm.cdf(_norm.ppf(z0) - shift), _norm.cdf(_norm.ppf(z0) + shift),
                         correct.double().cpu().numpy(), n_bins)
    reach = torch.as_tensor(prog.reachable, device=dev)
    rmask = reach.to(dt)
    k = 1.0 - rmask
    lo = torch.as_tensor(prog.lo, dtype=dt, device=dev)
    hi = torch.as_tensor(prog.hi, dtype=dt, device=dev)
    b = xb.shape[0]
    c = correct.to(dt)[:, None]
    a = torch.full((b, n_bins), 1.0 / n_bins if cfg.a_init is None else cfg.a_init, dtype=dt, device=dev)
    q1, q2 = a.clone(), a.clone()
    g = torch.minimum(torch.maximum(torch.as_tensor(z0, dtype=dt, device=dev)[:, None].expand(b, n_bins), lo), hi)
    l1, l2, l5 = torch.zeros_like(a), torch.zeros_like(a), torch.zeros_like(a)
    l3 = torch.zeros(b, 1, dtype=dt, device=dev)
    l4 = torch.zeros(b, 1, dtype=dt, device=dev)
    rho = cfg.rho_init
    radius = float(np.sqrt(b * n_bins) / 2.0)
    view = (-1,) + (1,) * (xb.ndim - 1)
    eps_v = torch.full((b,) + (1,) * (xb.ndim - 1), eps, device=dev, dtype=xb.dtype)
    alpha = torch.full((b,), step, device=dev, dtype=xb.dtype)
    x_adv = xb.clone()
    for _ in range(steps):
        xr = x_adv.detach().requires_grad_(True)
        z = _smoothed_logprob(net, xr, noise).gather(1, pred[:, None]).exp().to(dt)  # (B, 1)
        gap = c - z  # (B, 1) broadcast over bins
        s = torch.sign((a * gap).sum(0, keepdim=True)).detach()
        lag_z = (-(s * a * gap).sum() + (rmask * (l5 * (z - g) + 0.5 * rho * (z - g) ** 2)).sum())
        (grad,) = torch.autograd.grad(lag_z, xr)
        cand = project(x_adv - alpha.view(view) * ascent_direction(grad, "l2"), xb, eps=eps_v, norm="l2", linf="delta")
        with torch.no_grad():
            ok = _smoothed_logprob(net, cand, noise).argmax(1) == pred
            x_adv = torch.where(ok.view(view), cand, x_adv).detach()
            alpha = torch.where(ok, alpha, alpha / 2)
            zd = z.detach()
            gap = c - zd
            r3 = a.sum(1, keepdim=True) - 1.0
            r4 = (k * a).sum(1, keepdim=True)
            grad_a = (-s * gap + l1 + rho * (a - q1) + l2 + rho * (a - q2) + (l3 + rho * r3) + k * (l4 + rho * r4))
            a = a - cfg.lr_a * grad_a.clamp(-cfg.grad_clip, cfg.grad_clip)
            q1 = (a + l1 / rho).clamp(0.0, 1.0)
            v = a + l2 / rho - 0.5
            q2 = 0.5 + radius * v / v.norm().clamp_min(1e-30)
            g = torch.minimum(torch.maximum(zd + l5 / rho, lo), hi)
            l1 = l1 + rho * (a - q1)
            l2 = l2 + rho * (a - q2)
            l3 = l3 + rho * (a.sum(1, keepdim=True) - 1.0)
            l4 = l4 + rho * (k * a).sum(1, keepdim=True)
            l5 = l5 + rho * rmask * (zd - g)
            rho = min(rho * cfg.rho_growth, cfg.rho_max)
    return x_adv


def gaussian_noise_training(
    model: torch.nn.Module,
    x: torch.Tensor,
    y: Any,
    *,
    sigma: float = 0.25,
    epochs: int = 6,
    batch_size: int = 64,
    lr: float = 1e-3,
    seed: int = 0,
    progress: bool = False,
) -> TrainingResult:
    """Make a smoothing base model: fine-tune a copy of ``model`` with Gaussian noise augmentation N(0, sigma^2 I),
    one noise draw per input and step, no adversary (Cohen et al. 2019, §3; the base models the paper certifies,
    §5.2 and App. A.1, are trained this way).

    This is ``adversarial_calibration_training(method="gaussian", eps=0, num_noise=1)``. Departure from
    Cohen et al. (SGD from scratch for 90 epochs): Adam fine-tuning of an already trained model, with defaults
    (6 epochs, batch 64, lr 1e-3) sized for small image models on a CPU."""
    return adversarial_calibration_training(model, x, y, method="gaussian", sigma=sigma, eps=0.0, epochs=epochs,
                                            batch_size=batch_size, num_noise=1, lr=lr, seed=seed, progress=progress)
