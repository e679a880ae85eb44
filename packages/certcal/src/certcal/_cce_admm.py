"""The paper's ADMM solver for program (6) (§3.4, App. E.3-E.4, G.1-G.2, I.1), in torch.

lp-box reformulation (Wu & Ghanem 2019): a in {0,1}^{NM}  <=>  a in [0,1]^{NM} and ||a - 1/2||^2 = NM/4,
with split variables q1 (box), q2 (sphere) and g (confidence box); augmented Lagrangian

  -sum_m |sum_n a_nm (c_n - z_nm)| + <l1, a-q1> + r1/2 ||a-q1||^2 + <l2, a-q2> + r2/2 ||a-q2||^2
  + <l3, A a - 1> + r3/2 ||A a - 1||^2 + <l4, K a> + r4/2 ||K a||^2 + <l5, z-g> + r5/2 ||z-g||^2.

The (N, M) layout makes A (row sums: unique assignment) and K (masked row sums: valid assignment)
implicit, so a step costs O(NM) like the paper's torch.sparse version. Several runs (the paper's grid of
hyper-parameter settings and initialisations, App. I.1) are solved together as one batch of shape (G, N, M):
every step, every run's iterate is projected to a feasible point and scored on the device (no host
synchronisation inside the loop); each run keeps its best feasible point.

After its gradient step the confidence variable z is clipped to [0, 1] (App. G.2: "we clip ... as we constrain
the confidences"; the variable converges well inside this box, the clip only stabilises rare runs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ._program import Program


@dataclass(frozen=True)
class ADMMRun:
    """Hyper-parameters of one ADMM run (one member of a batch)."""

    lr_a: float
    lr_z: float
    rho_init: float
    rho_growth: float
    rho_max: float
    grad_clip: float
    a_init: float | None
    polish: bool
    clip_z: bool
    z_init: np.ndarray  # (N,)


@dataclass(frozen=True)
class ADMMBatchResult:
    bins: np.ndarray  # (G, N) best feasible assignment of each run
    confidences: np.ndarray  # (G, N)
    values: np.ndarray  # (G,) best projected objective of each run
    best_step: np.ndarray  # (G,)
    trace: np.ndarray  # (G, steps) projected objective after every step


def run_admm_batch(prog: Program, runs: list[ADMMRun], *, steps: int, device: torch.device) -> ADMMBatchResult:
    """Run ``len(runs)`` ADMM instances of program (6) side by side for ``steps`` steps."""
    n, m, g_runs = prog.n, prog.n_bins, len(runs)
    dt = torch.float64

    def vec(name: str) -> torch.Tensor:
        return torch.tensor([float(getattr(r, name)) for r in runs], dtype=dt, device=device).view(-1, 1, 1)

    lr_a, lr_z, rho, growth, rho_max, clip = (vec(k) for k in ("lr_a", "lr_z", "rho_init", "rho_growth",
                                                                 "rho_max", "grad_clip"))
    polish = torch.tensor([r.polish for r in runs], device=device)
    clip_z = torch.tensor([r.clip_z for r in runs], device=device).view(-1, 1, 1)
    reach = torch.as_tensor(prog.reachable, device=device)[None]  # (1, N, M)
    k = (~reach).to(dt)
    lo = torch.as_tensor(prog.lo, dtype=dt, device=device)[None]
    hi = torch.as_tensor(prog.hi, dtype=dt, device=device)[None]
    c = torch.as_tensor(prog.correct, dtype=dt, device=device)[None, :, None]  # (1, N, 1)
    a0 = torch.tensor([1.0 / m if r.a_init is None else r.a_init for r in runs], dtype=dt, device=device)
    a = a0.view(-1, 1, 1).expand(g_runs, n, m).clone()
    z = torch.as_tensor(np.stack([r.z_init for r in runs]), dtype=dt, device=device)[:, :, None].expand(g_runs, n, m)
    z = torch.minimum(torch.maximum(z, lo), hi).clone()
    q1, q2, g = a.clone(), a.clone(), z.clone()
    l1 = torch.zeros_like(a)
    l2 = torch.zeros_like(a)
    l3 = torch.zeros(g_runs, n, 1, dtype=dt, device=device)
    l4 = torch.zeros(g_runs, n, 1, dtype=dt, device=device)
    l5 = torch.zeros_like(z)
    radius = math.sqrt(n * m) / 2.0
    neg_inf = torch.tensor(-math.inf, dtype=dt, device=device)
    c1 = c[:, :, 0]  # (1, N)

    def project(a_: torch.Tensor, z_: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Feasible projection (App. G.1): each sample to its largest reachable assignment entry; confidences
        clipped into the chosen bin (the paper) or, with ``polish``, optimal for that assignment in closed
        form (per bin all-lower or all-upper ends: the objective is convex in z)."""
        bins = torch.where(reach, a_, neg_inf).argmax(dim=2)  # (G, N)
        idx = bins[:, :, None]
        lo_s = lo.expand(g_runs, -1, -1).gather(2, idx)[:, :, 0]
        hi_s = hi.expand(g_runs, -1, -1).gather(2, idx)[:, :, 0]
        zero = torch.zeros(g_runs, m, dtype=dt, device=device)
        plus = zero.scatter_add(1, bins, (c1 - lo_s).expand(g_runs, -1))
        minus = zero.scatter_add(1, bins, (hi_s - c1).expand(g_runs, -1))
        z_pol = torch.where((plus >= minus).gather(1, bins), lo_s, hi_s)
        z_clip = torch.minimum(torch.maximum(z_.gather(2, idx)[:, :, 0], lo_s), hi_s)
        zz = torch.where(polish[:, None], z_pol, z_clip)
        val = zero.scatter_add(1, bins, (c1 - zz).expand(g_runs, -1)).abs().sum(1) / n
        return bins, zz, val

    best_bins, best_z, best_val = project(a, z)
    best_step = torch.zeros(g_runs, dtype=torch.int64, device=device)
    trace = torch.empty(g_runs, steps, dtype=dt, device=device)
    for t in range(steps):
        gap = c - z  # (G, N, M)
        s = torch.sign((a * gap).sum(dim=1, keepdim=True))  # sign of each bin's gap
        r3 = a.sum(dim=2, keepdim=True) - 1.0
        r4 = (k * a).sum(dim=2, keepdim=True)
        grad_a = (-s * gap + l1 + rho * (a - q1) + l2 + rho * (a - q2) + (l3 + rho * r3) + k * (l4 + rho * r4))
        grad_a = torch.maximum(torch.minimum(grad_a, clip), -clip)
        grad_z = s * a + l5 + rho * (z - g)
        a = a - lr_a * grad_a
        z = z - lr_z * grad_z
        z = torch.where(clip_z, z.clamp(0.0, 1.0), z)
        # closed-form split-variable updates
        q1 = (a + l1 / rho).clamp(0.0, 1.0)
        v = a + l2 / rho - 0.5
        q2 = 0.5 + radius * v / v.flatten(1).norm(dim=1).clamp_min(1e-30).view(-1, 1, 1)
        g = torch.minimum(torch.maximum(z + l5 / rho, lo), hi)
        # dual ascent
        l1 = l1 + rho * (a - q1)
        l2 = l2 + rho * (a - q2)
        l3 = l3 + rho * (a.sum(dim=2, keepdim=True) - 1.0)
        l4 = l4 + rho * (k * a).sum(dim=2, keepdim=True)
        l5 = l5 + rho * (z - g)
        rho = torch.minimum(rho * growth, rho_max)
        bins, zz, val = project(a, z)
        trace[:, t] = val
        better = val > best_val
        best_bins = torch.where(better[:, None], bins, best_bins)
        best_z = torch.where(better[:, None], zz, best_z)
        best_val = torch.where(better, val, best_val)
        best_step = torch.where(better, t + 1, best_step)
    return ADMMBatchResult(bins=best_bins.cpu().numpy(), confidences=best_z.cpu().numpy(),
                           values=best_val.cpu().numpy(), best_step=best_step.cpu().numpy(),
                           trace=trace.cpu().numpy())
