"""AdaMod (Ding et al., 2019), written for DENT's six-step adaptation (A.3).

Adam whose per-element step size lr / (sqrt(v_hat) + eps) is capped by its own exponential moving
average (coefficient ``beta3``), which damps the large early steps of Adam.
"""

from __future__ import annotations

import torch


class AdaMod(torch.optim.Optimizer):
    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), beta3: float = 0.999,
                 eps: float = 1e-8, weight_decay: float = 0.0) -> None:
        if lr <= 0:
            raise ValueError(f"lr must be > 0, got {lr}")
        super().__init__(params, {"lr": lr, "betas": betas, "beta3": beta3, "eps": eps, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):  # noqa: D102
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                if group["weight_decay"]:
                    grad = grad.add(p, alpha=group["weight_decay"])
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                    state["exp_avg_lr"] = torch.zeros_like(p)
                state["step"] += 1
                t = state["step"]
                m, v, s = state["exp_avg"], state["exp_avg_sq"], state["exp_avg_lr"]
                m.mul_(b1).add_(grad, alpha=1 - b1)
                v.mul_(b2).addcmul_(grad, grad, value=1 - b2)
                step_size = group["lr"] * (1 - b2 ** t) ** 0.5 / (1 - b1 ** t)
                eta = step_size / (v.sqrt() + group["eps"])
                s.mul_(group["beta3"]).add_(eta, alpha=1 - group["beta3"])
                eta = torch.minimum(eta, s)
                p.sub_(eta * m)
        return loss
