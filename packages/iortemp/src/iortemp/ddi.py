"""DDi-AT (App. A.2, Eqs. 12-17): M embedding-space PGD adversaries, their parameter gradients combined with the
min-norm simplex weights alpha* (Eq. 15) and the combined gradient globally normalised (Eq. 12), clipped or left
(the Table 5 ablation)."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_choice
from robustsuite_common.extras import optional_import

from .embedding import embedding_pgd, forward_embeds, input_embeddings
from .training_config import TrainingConfig

__all__ = ["ddi_at_step", "min_norm_simplex"]


def min_norm_simplex(gram, *, solver: str = "auto") -> np.ndarray:
    """alpha* = argmin_{alpha in simplex} alpha^T G alpha for a PSD Gram matrix G = V V^T (Eq. 15).

    ``solver="exact"`` enumerates supports and solves each KKT system (exact for small M, used for
    M <= 8 under ``"auto"``); ``"cvxpy"`` solves the QP with cvxpy.
    """
    g = np.asarray(gram, dtype=np.float64)
    if g.ndim != 2 or g.shape[0] != g.shape[1] or g.shape[0] == 0:
        raise ValueError(f"gram must be a square (M, M) matrix, got shape {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ValueError("gram must be finite")
    check_choice("solver", solver, ("auto", "exact", "cvxpy"))
    m = g.shape[0]
    g = 0.5 * (g + g.T)
    # alpha* is invariant to a positive scale of G: solve on G / max diag, so Gram matrices of gradients from
    # logits of 1e-8 or 1e8 give the same weights (and no tolerance depends on the scale)
    scale = float(np.max(np.abs(np.diag(g)))) if m else 0.0
    if scale == 0.0 or not math.isfinite(scale):
        return np.full(m, 1.0 / m)  # all gradients zero: every simplex point is optimal
    g = g / scale
    if solver == "cvxpy" or (solver == "auto" and m > 8):
        cp = optional_import("cvxpy", extra="iortemp[qp]",
                             feature="solver='cvxpy' (and 'auto' with more than 8 gradients)")
        a = cp.Variable(m)
        prob = cp.Problem(cp.Minimize(cp.quad_form(a, cp.psd_wrap(g))), [a >= 0, cp.sum(a) == 1])
        prob.solve()
        alpha = np.clip(np.asarray(a.value, dtype=np.float64), 0, None)
        return alpha / alpha.sum()
    best, best_val = None, math.inf
    for mask in range(1, 2**m):
        s = [i for i in range(m) if mask >> i & 1]
        k = len(s)
        kkt = np.zeros((k + 1, k + 1))
        kkt[:k, :k] = g[np.ix_(s, s)]
        kkt[:k, k] = -1.0
        kkt[k, :k] = 1.0
        rhs = np.zeros(k + 1)
        rhs[k] = 1.0
        a_s = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:k]
        # every non-negative candidate, renormalised, is a feasible point; the KKT point of the optimal
        # support is among them, so the minimum over candidates is the optimum
        if a_s.min() < -1e-9 or a_s.sum() <= 0:
            continue
        alpha = np.zeros(m)
        alpha[s] = np.clip(a_s, 0, None)
        alpha /= alpha.sum()
        val = float(alpha @ g @ alpha)
        if best is None or val < best_val - 1e-15:
            best, best_val = alpha, val
    assert best is not None  # every vertex (single support) is feasible
    return best


def ddi_at_step(model: nn.Module, batch: dict, yb: torch.Tensor, params: list[torch.Tensor], cfg: TrainingConfig,
                acfg: TrainingConfig, gen: torch.Generator) -> tuple[torch.Tensor, np.ndarray]:
    """One DDi-AT step's gradients, written into ``params[i].grad``: ``cfg.ddi_m`` PGD adversaries of
    ``cfg.ddi_k`` steps, combined with alpha* and normalised by ``cfg.ddi_normalization``. Returns the alpha*-
    weighted loss and alpha*."""
    vecs, losses = [], []
    for _m in range(cfg.ddi_m):
        delta = embedding_pgd(model, batch, yb, cfg.ddi_k, acfg, gen)
        emb = input_embeddings(model)(batch["input_ids"])
        lm = nn.functional.cross_entropy(forward_embeds(model, emb + delta, batch), yb)
        grads = torch.autograd.grad(lm, params, allow_unused=True)
        vecs.append(
            torch.cat(
                [
                    (g if g is not None else torch.zeros_like(p)).reshape(-1)
                    for g, p in zip(grads, params, strict=True)
                ]
            )
        )
        losses.append(float(lm.detach()))
    mat = torch.stack(vecs)
    gram = (mat.double() @ mat.double().T).cpu().numpy()
    alpha = min_norm_simplex(gram, solver=cfg.ddi_solver)
    d = torch.as_tensor(alpha, dtype=mat.dtype, device=mat.device) @ mat
    norm = d.norm()
    if cfg.ddi_normalization == "normalise":
        d = d / norm.clamp_min(1e-12)
    elif cfg.ddi_normalization == "clip" and norm > cfg.ddi_clip_norm:
        d = d * (cfg.ddi_clip_norm / norm)
    off = 0
    for p in params:
        p.grad = d[off : off + p.numel()].view_as(p).clone()
        off += p.numel()
    return torch.tensor(float(np.dot(alpha, losses))), alpha
