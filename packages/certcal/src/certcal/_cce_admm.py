"""The paper's ADMM solver for program (6) (§3.4, App. E.3-E.4, G.1-G.2), in torch.

lp-box reformulation (Wu & Ghanem 2019): a in {0,1}^{NM}  <=>  a in [0,1]^{NM} and ||a - 1/2||^2 = NM/4,
with split variables q1 (box), q2 (sphere) and g (confidence box); augmented Lagrangian

  -sum_m |sum_n a_nm (c_n - z_nm)| + <l1, a-q1> + r1/2 ||a-q1||^2 + <l2, a-q2> + r2/2 ||a-q2||^2
  + <l3, A a - 1> + r3/2 ||A a - 1||^2 + <l4, K a> + r4/2 ||K a||^2 + <l5, z-g> + r5/2 ||z-g||^2.

The (N, M) layout makes A (row sums: unique assignment) and K (masked row sums: valid assignment)
implicit, so a step costs O(NM) like the paper's torch.sparse version.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ._program import Program, best_confidences, objective


@dataclass(frozen=True)
class ADMMTrace:
    best_value: float
    best_step: int
    values: np.ndarray  # projected objective after every step


def run_admm(
    prog: Program,
    z_init: np.ndarray,
    *,
    steps: int,
    lr_a: float,
    lr_z: float,
    rho_init: float,
    rho_growth: float,
    rho_max: float,
    grad_clip: float,
    a_init: float | None,
    polish: bool,
    device: torch.device,
) -> tuple[np.ndarray, np.ndarray, float, ADMMTrace]:
    n, m = prog.n, prog.n_bins
    dt = torch.float64
    reach = torch.as_tensor(prog.reachable, device=device)
    k = (~reach).to(dt)
    lo = torch.as_tensor(prog.lo, dtype=dt, device=device)
    hi = torch.as_tensor(prog.hi, dtype=dt, device=device)
    c = torch.as_tensor(prog.correct, dtype=dt, device=device)[:, None]
    a = torch.full((n, m), 1.0 / m if a_init is None else a_init, dtype=dt, device=device)
    z = torch.as_tensor(z_init, dtype=dt, device=device)[:, None].expand(n, m).clone()
    z = torch.minimum(torch.maximum(z, lo), hi)
    q1, q2, g = a.clone(), a.clone(), z.clone()
    l1 = torch.zeros_like(a)
    l2 = torch.zeros_like(a)
    l3 = torch.zeros(n, 1, dtype=dt, device=device)
    l4 = torch.zeros(n, 1, dtype=dt, device=device)
    l5 = torch.zeros_like(z)
    rho = rho_init
    radius = math.sqrt(n * m) / 2.0
    neg_inf = torch.tensor(-math.inf, dtype=dt, device=device)
    idx = np.arange(n)

    def project(a_: torch.Tensor, z_: torch.Tensor) -> tuple[np.ndarray, np.ndarray, float]:
        # Feasible projection (App. G.1): each sample to its largest reachable assignment entry ...
        bins = torch.where(reach, a_, neg_inf).argmax(dim=1).cpu().numpy()
        if polish:
            # ... with the optimal confidences for that assignment in closed form (our addition: the paper
            # clips z; this only raises the projected value and costs O(N))
            zz, val = best_confidences(prog, bins)
            return bins, zz, val
        zz = z_.detach().cpu().numpy()[idx, bins]
        zz = np.clip(zz, prog.lo[idx, bins], prog.hi[idx, bins])
        return bins, zz, objective(prog, bins, zz)

    best_bins, best_z, best_val = project(a, z)
    best_step = 0
    values = np.empty(steps)
    for t in range(steps):
        gap = c - z  # (n, m)
        s = torch.sign((a * gap).sum(dim=0, keepdim=True))  # sign of each bin's gap
        r3 = a.sum(dim=1, keepdim=True) - 1.0
        r4 = (k * a).sum(dim=1, keepdim=True)
        grad_a = (-s * gap + l1 + rho * (a - q1) + l2 + rho * (a - q2)
                  + (l3 + rho * r3) + k * (l4 + rho * r4))
        grad_a = grad_a.clamp(-grad_clip, grad_clip)
        grad_z = s * a + l5 + rho * (z - g)
        a = a - lr_a * grad_a
        z = z - lr_z * grad_z
        # closed-form split-variable updates
        q1 = (a + l1 / rho).clamp(0.0, 1.0)
        v = a + l2 / rho - 0.5
        q2 = 0.5 + radius * v / v.norm().clamp_min(1e-30)
        g = torch.minimum(torch.maximum(z + l5 / rho, lo), hi)
        # dual ascent
        l1 = l1 + rho * (a - q1)
        l2 = l2 + rho * (a - q2)
        l3 = l3 + rho * (a.sum(dim=1, keepdim=True) - 1.0)
        l4 = l4 + rho * (k * a).sum(dim=1, keepdim=True)
        l5 = l5 + rho * (z - g)
        rho = min(rho * rho_growth, rho_max)
        bins, zz, val = project(a, z)
        values[t] = val
        if val > best_val:
            best_bins, best_z, best_val, best_step = bins, zz, val, t + 1
    return best_bins, best_z, best_val, ADMMTrace(best_val, best_step, values)
