"""Uncertainty measures (paper §II-A): entropy (Eq. 3), maximum softmax probability, and epistemic
measures for MC-dropout and deep-ensemble models (mutual information / expected entropy split).

The epistemic measures go beyond the paper, which names them as future work (§VI).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from robustsuite_common.checks import check_images, check_int
from robustsuite_common.models import as_model_input, evaluating, logits_from

from ._validation import check_seed

__all__ = [
    "entropy",
    "entropy_from_logits",
    "max_softmax_probability",
    "EpistemicDecomposition",
    "epistemic_decomposition",
    "MCDropoutModel",
    "DeepEnsemble",
]


def _as_tensor(values: object, name: str) -> torch.Tensor:
    if isinstance(values, torch.Tensor):
        t = values
    elif isinstance(values, np.ndarray | list | tuple):
        t = torch.as_tensor(np.asarray(values, dtype=np.float64))
    else:
        raise TypeError(f"{name} must be a torch.Tensor or numpy array of shape (..., K); got {type(values).__name__}")
    if t.dim() < 1 or t.shape[-1] < 2:
        raise ValueError(f"{name} must have a class dimension of size >= 2 as its last axis; got {tuple(t.shape)}")
    return t


def _probabilities(values: object, name: str) -> torch.Tensor:
    p = _as_tensor(values, name)
    if p.numel() == 0:
        raise ValueError(f"{name} must hold at least one probability vector; got shape {tuple(p.shape)}")
    if not torch.isfinite(p).all() or (p < 0).any() or not torch.allclose(p.sum(-1), torch.ones((), dtype=p.dtype),
                                                                          atol=1e-4):
        raise ValueError(f"{name} must be finite, non-negative and sum to 1 over the last axis (probabilities, not "
                         "logits)")
    return p


def entropy(probs: torch.Tensor | np.ndarray) -> torch.Tensor | np.ndarray:
    """Shannon entropy in nats, ``-sum_c p_c log p_c`` over the last axis (Eq. 3), with ``0 log 0 = 0``.

    Accepts a tensor or a numpy array of probabilities and returns the same kind. Rows must be
    non-negative and sum to 1 (within 1e-4).
    """
    is_np = not isinstance(probs, torch.Tensor)
    p = _probabilities(probs, "probs")
    h = -torch.special.xlogy(p, p).sum(-1)
    return h.numpy() if is_np else h


def entropy_from_logits(logits: torch.Tensor) -> torch.Tensor:
    """Entropy (Eq. 3) computed stably from logits through ``log_softmax`` (differentiable), over the last axis.
    Checked for type and shape only (it runs inside every attack step): non-finite logits give NaN."""
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"logits must be a torch.Tensor of shape (..., K), got {type(logits).__name__}")
    if logits.dim() < 1 or logits.shape[-1] < 2:
        raise ValueError(f"logits must have a class dimension of size >= 2 as its last axis; got {tuple(logits.shape)}")
    logp = F.log_softmax(logits, dim=-1)
    return -(logp.exp() * logp).sum(-1)


def max_softmax_probability(probs: torch.Tensor | np.ndarray) -> torch.Tensor | np.ndarray:
    """Maximum softmax probability (MSP), the confidence ``max_c f_c(x)`` used by Eq. 7 and the reliability bins."""
    is_np = not isinstance(probs, torch.Tensor)
    p = _probabilities(probs, "probs")
    m = p.max(-1).values
    return m.numpy() if is_np else m


@dataclass(frozen=True)
class EpistemicDecomposition:
    """Total predictive entropy ``H(E_θ[p])`` = expected entropy ``E_θ[H(p)]`` (aleatoric) + mutual
    information ``I(y; θ | x)`` (epistemic), each per sample (numpy float64, shape (N,))."""

    total: np.ndarray
    expected_entropy: np.ndarray
    mutual_information: np.ndarray

    def to_dict(self) -> dict:
        return {k: getattr(self, k).tolist() for k in ("total", "expected_entropy", "mutual_information")}


def epistemic_decomposition(member_probs: torch.Tensor | np.ndarray) -> EpistemicDecomposition:
    """Split the predictive entropy of a Bayesian model average (Eq. 2) from member probabilities of shape
    (M, N, K) — M MC-dropout passes or ensemble members — into expected entropy and mutual information."""
    p = _probabilities(member_probs, "member_probs").detach().to(torch.float64).cpu()
    if p.dim() != 3:
        raise ValueError(f"member_probs must have shape (M, N, K); got {tuple(p.shape)}")
    mean = p.mean(0)
    total = -torch.special.xlogy(mean, mean).sum(-1)
    expected = (-torch.special.xlogy(p, p).sum(-1)).mean(0)
    # MI >= 0 by Jensen; clamp tiny negative round-off.
    mi = (total - expected).clamp_min(0.0)
    return EpistemicDecomposition(total.numpy(), expected.numpy(), mi.numpy())


class _BMAModel(nn.Module):
    """Base: ``forward`` returns the log of the averaged member probabilities, so that ``log_softmax`` of it
    is the BMA prediction (Eq. 2) and every attack in this package applies unchanged."""

    def member_log_probs(self, x: torch.Tensor) -> torch.Tensor:  # (M, N, K)
        raise NotImplementedError

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lp = self.member_log_probs(x)
        return torch.logsumexp(lp, dim=0) - torch.log(torch.tensor(float(lp.shape[0]), dtype=lp.dtype))

    @torch.no_grad()
    def decompose(self, x: torch.Tensor) -> EpistemicDecomposition:
        """Epistemic decomposition of the members' predictions on ``x``."""
        check_images("x", x)
        return epistemic_decomposition(self.member_log_probs(as_model_input(self, x)).exp())


_MC_DROPOUT_LAYERS = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d)


class MCDropoutModel(_BMAModel):
    """MC-dropout (Gal & Ghahramani) wrapper: ``n_samples`` passes, each with its own dropout masks, every
    other layer (batch norm included) in eval mode; the wrapper itself starts in eval mode (the wrapped model's
    own mode is left as the caller set it: each call runs it in eval mode and restores it).

    The masks are drawn per MC sample from ``(seed, layer, sample index)`` with private generators (global
    RNG untouched) and shared by all inputs of a call, so an input's estimate depends on that input alone,
    never on the batch it came in or the batch size (issue 14). ``nn.Dropout`` masks features,
    ``nn.Dropout1d/2d/3d`` whole channels, with inverted-dropout scaling ``1/(1−p)``. By default the same
    masks are reused on every call (``fixed_masks=True``), which makes the wrapper a deterministic function
    that gradient attacks can optimise against; with ``fixed_masks=False`` each call advances an internal
    counter (fresh masks, still reproducible).

    Paper: the Bayesian predictive distribution of Eq. 2.
    """

    def __init__(self, model: nn.Module, *, n_samples: int = 16, seed: int = 0, fixed_masks: bool = True):
        super().__init__()
        layers = [m for m in model.modules() if isinstance(m, nn.modules.dropout._DropoutNd)]
        if not layers:
            raise ValueError("model must contain at least one dropout layer for MC-dropout")
        other = sorted({type(m).__name__ for m in layers if type(m) not in _MC_DROPOUT_LAYERS})
        if other:
            raise ValueError(f"model has dropout layers MC-dropout does not support: {other}; supported: "
                             f"{[c.__name__ for c in _MC_DROPOUT_LAYERS]}")
        self.model = model
        self.n_samples = check_int("n_samples", n_samples, ge=1)
        self.seed = check_seed(seed) or 0
        self.fixed_masks = bool(fixed_masks)
        self._calls = 0
        self._layers = layers
        self._masks: dict[tuple, torch.Tensor] = {}
        self.training = False  # the wrapper only: the caller's model keeps its mode

    def _mask(self, layer: int, sample: int, out: torch.Tensor, call_seed: int) -> torch.Tensor:
        mod = self._layers[layer]
        shape = (1, *out.shape[1:]) if type(mod) is nn.Dropout else (1, out.shape[1]) + (1,) * (out.dim() - 2)
        key = (call_seed, layer, sample, shape, out.device, out.dtype)
        mask = self._masks.get(key)
        if mask is None:
            p = float(mod.p)
            gen = torch.Generator(device=out.device)
            gen.manual_seed(int(np.random.SeedSequence([call_seed, layer, sample]).generate_state(1, np.uint64)[0] >> 1))
            keep = torch.rand(shape, generator=gen, device=out.device) >= p
            mask = keep.to(out.dtype) / (1.0 - p) if p < 1 else torch.zeros(shape, dtype=out.dtype, device=out.device)
            if self.fixed_masks:
                self._masks[key] = mask
        return mask

    def _hook(self, layer: int, state: dict[str, int], call_seed: int) -> Callable[..., torch.Tensor]:
        """The forward hook of dropout layer ``layer``: its output times the mask of the current sample."""

        def hook(mod: nn.Module, inp: Any, out: torch.Tensor) -> torch.Tensor:
            return out * self._mask(layer, state["sample"], out, call_seed)

        return hook

    def member_log_probs(self, x: torch.Tensor) -> torch.Tensor:
        call_seed = self.seed if self.fixed_masks else self.seed + self._calls
        self._calls += 1
        state = {"sample": 0}
        # eval mode (dropout layers become the identity; the hooks below apply the masks), every module's mode
        # and every buffer given back afterwards
        with evaluating(self.model):
            hooks = [layer.register_forward_hook(self._hook(i, state, call_seed)) for i, layer in enumerate(self._layers)]
            try:
                outs = []
                for m in range(self.n_samples):
                    state["sample"] = m
                    outs.append(F.log_softmax(logits_from(self.model(x), n=x.shape[0]), dim=-1))
            finally:
                for h in hooks:
                    h.remove()
        return torch.stack(outs)


class DeepEnsemble(_BMAModel):
    """Deep ensemble (Lakshminarayanan et al.): members' softmax outputs averaged (BMA, Eq. 2). The wrapper
    starts in eval mode; in eval mode every member runs in eval mode (batch norm on running statistics) and gets
    its own mode back after each call, so the caller's members are never changed."""

    def __init__(self, members: Sequence[nn.Module]):
        super().__init__()
        members = list(members)
        if not all(isinstance(m, nn.Module) for m in members):
            raise TypeError("members must be torch.nn.Module classifiers")
        if len(members) < 2:
            raise ValueError("members must be a sequence of at least two torch.nn.Module classifiers")
        self.members = nn.ModuleList(members)
        self.training = False  # the wrapper only: the caller's members keep their modes

    def member_log_probs(self, x: torch.Tensor) -> torch.Tensor:
        outs = []
        for m in self.members:
            if self.training:
                outs.append(F.log_softmax(logits_from(m(x), n=x.shape[0]), dim=-1))
            else:
                with evaluating(m):
                    outs.append(F.log_softmax(logits_from(m(x), n=x.shape[0]), dim=-1))
            if outs[-1].shape[1] != outs[0].shape[1]:
                raise ValueError(f"members[{len(outs) - 1}] returns {outs[-1].shape[1]} classes but members[0] returns "
                                 f"{outs[0].shape[1]}: an ensemble averages the members' class probabilities, so "
                                 "every member must output the same classes")
        return torch.stack(outs)
