"""Defensive Entropy Minimization, DENT+ model adaptation (Wang et al., 2021), paper Example 2 and A.3.

Stateless Γ: starting from the base model every time, only the BatchNorm affine parameters are adapted,
*per sample* ((γ_i, β_i) for input x_i), for six steps of AdaMod (lr 0.006, batches of 128, no weight
decay; the DENT authors' test-time configuration β1 = 0.99, β3 = 0.6 rather than AdaMod's library default
β3 = 0.999, which caps every step at 0.001·lr and leaves the model nearly unadapted) on entropy
minimisation with information-maximisation regularisation (Eq. 8):

    min_θ  Σ_i H(f(x_i; θ_i))  +  Σ_c S_c log S_c,   S_c = Σ_i f(x_i; θ_i)_c.

The adapted model holds one (γ_i, β_i) per position of the batch it was adapted on, so it only accepts
that batch shape (the referee and the attacks evaluate it on perturbations of that same batch).
Departure: normalisation uses the base model's running statistics (the sample-wise form of DENT+;
batch statistics would couple the samples of a batch in a way the paper does not describe).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F
from torch import nn

from robustsuite_common.checks import check_choice, check_images, check_int

from ._adamod import AdaMod
from ._validate import check_positive, logits_model
from .threat_model import Adaptation, TransductiveDefense

__all__ = ["DENT", "dent_objective"]


def dent_objective(logits: torch.Tensor) -> torch.Tensor:
    """Eq. 8 on a batch of logits: Σ_i entropy(f_i) + Σ_c S_c log S_c with S_c = Σ_i f_ic."""
    logp = F.log_softmax(logits, dim=1)
    entropy = -(logp.exp() * logp).sum()
    log_s = torch.logsumexp(logp, dim=0)  # log Σ_i f_ic, stable
    return entropy + (log_s.exp() * log_s).sum()


def _running_stats(bn: nn.modules.batchnorm._BatchNorm) -> tuple[torch.Tensor, torch.Tensor]:
    """The BatchNorm's running mean and variance (DENT normalises with them; a layer without them is refused)."""
    if bn.running_mean is None or bn.running_var is None:
        raise ValueError("DENT needs BatchNorm layers that track running statistics (track_running_stats=True)")
    return bn.running_mean, bn.running_var


class _SampleAffineNorm(nn.Module):
    """A frozen BatchNorm (running statistics) followed by per-sample affine parameters (n, C)."""

    if TYPE_CHECKING:  # buffers, typed for the checker only (TorchScript reads __annotations__)
        running_mean: torch.Tensor
        running_var: torch.Tensor

    def __init__(self, bn: nn.modules.batchnorm._BatchNorm, n: int) -> None:
        super().__init__()
        mean, var = _running_stats(bn)
        self.register_buffer("running_mean", mean.detach().clone())
        self.register_buffer("running_var", var.detach().clone())
        self.eps = bn.eps
        c = bn.num_features
        w = bn.weight.detach() if bn.affine else torch.ones(c, device=mean.device)
        b = bn.bias.detach() if bn.affine else torch.zeros(c, device=mean.device)
        self.gamma = nn.Parameter(w.expand(n, c).clone())
        self.beta = nn.Parameter(b.expand(n, c).clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[0] != self.gamma.shape[0]:
            raise ValueError(f"a DENT-adapted model holds per-sample parameters for a batch of {self.gamma.shape[0]} "
                             f"inputs and cannot be applied to a batch of {x.shape[0]}")
        z = F.batch_norm(x, self.running_mean, self.running_var, None, None, False, 0.0, self.eps)
        shape = (x.shape[0], x.shape[1]) + (1,) * (x.dim() - 2)
        return z * self.gamma.view(shape) + self.beta.view(shape)


def _replace_bn(module: nn.Module, n: int) -> list[_SampleAffineNorm]:
    created = []
    for name, child in list(module.named_children()):
        if isinstance(child, nn.modules.batchnorm._BatchNorm):
            new = _SampleAffineNorm(child, n)
            setattr(module, name, new)
            created.append(new)
        else:
            created += _replace_bn(child, n)
    return created


class DENT(TransductiveDefense):
    """DENT+ (model adaptation only) as a stateless Γ; ``optimizer`` is ``"adamod"`` (paper) or ``"adam"``.

    ``betas`` = (β1, β2) and ``beta3`` are AdaMod's moment coefficients (``betas`` also serve Adam). One
    AdaMod step from fresh moments moves every parameter by (1 - β3)·lr·sign(g): 2.4e-3 with the defaults.

    Paper: the test-time defense evaluated in Table 2 (with DENT-AA, AutoAttack through the adaptation).
    """

    name = "DENT"

    def __init__(self, base_model: nn.Module, *, steps: int = 6, lr: float = 0.006, optimizer: str = "adamod",
                 batch_size: int = 128, betas: tuple[float, float] = (0.99, 0.999), beta3: float = 0.6) -> None:
        base_model = logits_model("base_model", base_model)
        if not any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in base_model.modules()):
            raise ValueError("DENT adapts BatchNorm affine parameters: base_model has no BatchNorm layer")
        self.steps = check_int("steps", steps, ge=1)
        self.lr = check_positive("lr", lr)
        self.optimizer = check_choice("optimizer", optimizer, ("adamod", "adam"))
        self.batch_size = check_int("batch_size", batch_size, ge=1)
        try:
            b1, b2 = (float(b) for b in betas)
        except (TypeError, ValueError):
            raise ValueError(f"betas must be a pair of floats in [0, 1), got {betas!r}") from None
        if not (0.0 <= b1 < 1.0 and 0.0 <= b2 < 1.0):
            raise ValueError(f"betas must be a pair of floats in [0, 1), got {betas!r}")
        self.betas = (b1, b2)
        if isinstance(beta3, bool) or not isinstance(beta3, (int, float)) or not 0.0 <= beta3 < 1.0:
            raise ValueError(f"beta3 must be a float in [0, 1), got {beta3!r}")
        self.beta3 = float(beta3)
        self._base = base_model

    def adapt(self, x: torch.Tensor, *, state: Any, generator: torch.Generator) -> Adaptation:
        """Adapt per-sample BN affines on ``x`` (deterministic: DENT draws no randomness)."""
        check_images("x", x)
        n = x.shape[0]
        model = copy.deepcopy(self._base).eval()
        for p in model.parameters():
            p.requires_grad_(False)
        norms = _replace_bn(model, n)
        x = x.detach()
        for start in range(0, n, self.batch_size):
            sl = slice(start, min(start + self.batch_size, n))
            params = [m.gamma for m in norms] + [m.beta for m in norms]
            # optimise only this batch's rows: the other rows get zero gradient and stay unchanged in
            # Adam/AdaMod (their moment estimates stay zero), because rows only meet through Eq. 8.
            if self.optimizer == "adamod":
                opt = AdaMod(params, lr=self.lr, betas=self.betas, beta3=self.beta3)
            else:
                opt = torch.optim.Adam(params, lr=self.lr, betas=self.betas)
            mask = torch.zeros(n, dtype=torch.bool, device=x.device)
            mask[sl] = True
            with torch.enable_grad():  # adapting also works when the caller is under torch.no_grad()
                for _ in range(self.steps):
                    opt.zero_grad(set_to_none=True)
                    logits = model(x)
                    dent_objective(logits[mask]).backward()
                    opt.step()
        for p in model.parameters():
            p.requires_grad_(False)
        # per-sample affines: only the batch it adapted on (see PGD's MIN gradient); torch's stub types a module's
        # attributes as Tensor | Module
        model.position_aware = True  # pyright: ignore[reportArgumentType]
        return Adaptation(model=model.eval())

    def affine_change(self, adaptation: Adaptation) -> tuple[float, float]:
        """How far :meth:`adapt` moved the BatchNorm affines: mean |γ_i − γ| and mean |β_i − β| over samples and
        channels, against the base model's (γ, β) — the visible trace of DENT's test-time adaptation (0 for a
        model that did not adapt; at most ``steps``·``lr`` per entry for AdaMod's clipped steps, roughly)."""
        adapted = [m for m in adaptation.model.modules() if isinstance(m, _SampleAffineNorm)]
        base = [m for m in self._base.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
        if not adapted or len(adapted) != len(base):
            raise ValueError("adaptation must come from this DENT's adapt() (per-sample BatchNorm affines)")
        dg, db, count = 0.0, 0.0, 0
        with torch.no_grad():
            for a, b in zip(adapted, base, strict=True):
                mean = _running_stats(b)[0]
                w = b.weight if b.affine else torch.ones_like(mean)
                c = b.bias if b.affine else torch.zeros_like(mean)
                dg += float((a.gamma - w).abs().double().sum())
                db += float((a.beta - c).abs().double().sum())
                count += a.gamma.numel()
        return dg / count, db / count
