"""Gradient ascent on the differentiable ECE (Bohdal et al. 2023; paper App. M) over z in [l, u].

Hard bin membership is replaced by softmax((w z + b) / tau) with w = (1, ..., M) and
b = cumsum(0, -cut_1, ..., -cut_{M-1}); since certified predictions fix c, only the binning needs a
relaxation (App. M.1). tau is annealed geometrically from 1e-2 towards 1e-6 (App. M.2).
"""

from __future__ import annotations

import numpy as np
import torch

from ._program import Program
from .metrics import _bin_index, bin_edges


def hard_ece(z: np.ndarray, c: np.ndarray, n_bins: int) -> float:
    bins = _bin_index(z, n_bins)
    return float(np.abs(np.bincount(bins, weights=c - z, minlength=n_bins)).sum() / z.shape[0])


def run_dece(
    prog: Program,
    z_init: np.ndarray,
    *,
    steps: int,
    lr: float,
    tau_start: float,
    tau_end: float,
    device: torch.device,
) -> tuple[np.ndarray, float]:
    m = prog.n_bins
    dt = torch.float64
    cuts = torch.as_tensor(bin_edges(n_bins=m)[1:-1], dtype=dt, device=device)
    w = torch.arange(1, m + 1, dtype=dt, device=device)
    b = torch.cat([torch.zeros(1, dtype=dt, device=device), torch.cumsum(-cuts, 0)])
    lo = torch.as_tensor(prog.lower, dtype=dt, device=device)
    hi = torch.as_tensor(prog.upper, dtype=dt, device=device)
    c = torch.as_tensor(prog.correct, dtype=dt, device=device)
    z = torch.as_tensor(z_init, dtype=dt, device=device).clone().requires_grad_(True)
    opt = torch.optim.Adam([z], lr=lr)
    best_z = np.clip(z_init, prog.lower, prog.upper)
    best = hard_ece(best_z, prog.correct, m)
    decay = (tau_end / tau_start) ** (1.0 / max(steps - 1, 1))
    tau = tau_start
    for _ in range(steps):
        soft = torch.softmax((z[:, None] * w + b) / tau, dim=1)  # (N, M)
        dece = (soft * (c - z)[:, None]).sum(0).abs().sum() / z.shape[0]
        opt.zero_grad()
        (-dece).backward()
        opt.step()
        with torch.no_grad():
            z.copy_(torch.minimum(torch.maximum(z, lo), hi))
        tau *= decay
        zz = z.detach().cpu().numpy().copy()
        val = hard_ece(zz, prog.correct, m)
        if val > best:
            best, best_z = val, zz
    return best_z, best
