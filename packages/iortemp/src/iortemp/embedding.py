"""The embedding-space adversary of adversarial training (TextDefender conventions): an L2 perturbation of the
sequence of input embeddings from a random start, ascended by normalised gradient steps and projected onto an L2
ball; PGD-K training on its final perturbation and FreeLB (Zhu et al., 2020) on the gradients of every step.
Sizes are absolute L2 norms (``TrainingConfig.adv_scale="embedding"`` rescales them by
:func:`mean_embedding_norm` before they get here)."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import torch
from torch import nn

from .training_config import TrainingConfig

__all__ = ["ascend", "embedding_pgd", "forward_embeds", "freelb_loss", "embedding_matrix", "init_delta", "input_embeddings",
           "mean_embedding_norm", "pgd_loss"]


def input_embeddings(model: nn.Module) -> nn.Module:
    """The input-embedding layer of a transformers model (``model.get_input_embeddings()``)."""
    # torch types an unknown attribute of a Module as Tensor | Module; a transformers model has this method
    get = cast(Callable[[], nn.Module], model.get_input_embeddings)
    return get()


def embedding_matrix(model: nn.Module) -> torch.Tensor:
    """The ``(vocabulary, d)`` weight of ``model``'s input-embedding layer."""
    return cast(torch.Tensor, input_embeddings(model).weight)


def mean_embedding_norm(model: nn.Module) -> float:
    """Mean L2 norm of the rows of ``model``'s input-embedding matrix: the unit of
    ``TrainingConfig(adv_scale="embedding")`` (about 1 for BERT-base, ~0.1-0.3 for tiny models)."""
    if not isinstance(model, nn.Module) or not hasattr(model, "get_input_embeddings"):
        raise TypeError("model must be a transformers model (nn.Module with get_input_embeddings), got "
                        f"{type(model).__name__}")
    with torch.no_grad():
        w = embedding_matrix(model)
        return float(w.double().norm(dim=1).mean())


def forward_embeds(model: nn.Module, embeds: torch.Tensor, batch: dict) -> torch.Tensor:
    """``model``'s logits from input embeddings ``embeds`` (with ``batch``'s attention mask and token types)."""
    kwargs = {k: v for k, v in batch.items() if k in ("attention_mask", "token_type_ids")}
    return model(inputs_embeds=embeds, **kwargs).logits


def init_delta(
    embeds: torch.Tensor, mask: torch.Tensor, cfg: TrainingConfig, gen: torch.Generator
) -> torch.Tensor:
    """The random start: uniform noise on the unmasked tokens, L2 size ``cfg.adv_init_mag`` over the sequence."""
    m = mask.unsqueeze(2).to(embeds.dtype)
    if cfg.adv_init_mag <= 0:
        return torch.zeros_like(embeds)
    u = (torch.rand(embeds.shape, generator=gen) * 2 - 1).to(embeds.device, embeds.dtype) * m
    dims = m.sum(dim=(1, 2)) * embeds.shape[-1]
    return u * (cfg.adv_init_mag / dims.sqrt()).view(-1, 1, 1)


def ascend(delta: torch.Tensor, grad: torch.Tensor, cfg: TrainingConfig) -> torch.Tensor:
    """One normalised L2 ascent step of size ``cfg.adv_lr``, projected onto the ball of ``cfg.adv_max_norm``."""
    b = delta.shape[0]
    gnorm = grad.reshape(b, -1).norm(dim=1).clamp_min(1e-8).view(-1, 1, 1)
    delta = delta + cfg.adv_lr * grad / gnorm
    if cfg.adv_max_norm > 0:
        dnorm = delta.reshape(b, -1).norm(dim=1).view(-1, 1, 1)
        delta = delta * torch.where(
            dnorm > cfg.adv_max_norm, cfg.adv_max_norm / dnorm.clamp_min(1e-12), torch.ones_like(dnorm)
        )
    return delta.detach()


def embedding_pgd(model, batch, labels, steps, cfg, gen) -> torch.Tensor:
    """Embedding-space L2 PGD (TextDefender's PGD-K inner maximisation); returns the perturbation."""
    with torch.no_grad():
        embeds = input_embeddings(model)(batch["input_ids"])
    delta = init_delta(embeds, batch["attention_mask"], cfg, gen)
    for _ in range(steps):
        delta.requires_grad_(True)
        loss = nn.functional.cross_entropy(forward_embeds(model, embeds + delta, batch), labels)
        (g,) = torch.autograd.grad(loss, delta)
        delta = ascend(delta, g, cfg)
    return delta


def pgd_loss(model: nn.Module, batch: dict, yb: torch.Tensor, cfg: TrainingConfig, acfg: TrainingConfig,
             gen: torch.Generator) -> torch.Tensor:
    """PGD-K training: the loss on the final perturbation of ``cfg.adv_steps`` steps (backpropagated here)."""
    delta = embedding_pgd(model, batch, yb, cfg.adv_steps, acfg, gen)
    emb = input_embeddings(model)(batch["input_ids"])
    loss = nn.functional.cross_entropy(forward_embeds(model, emb + delta, batch), yb)
    loss.backward()
    return loss


def freelb_loss(model: nn.Module, batch: dict, yb: torch.Tensor, cfg: TrainingConfig, acfg: TrainingConfig,
                gen: torch.Generator) -> torch.Tensor:
    """FreeLB: parameter gradients accumulated over the ``cfg.adv_steps`` ascent steps; returns the mean loss."""
    with torch.no_grad():
        emb0 = input_embeddings(model)(batch["input_ids"])
    delta = init_delta(emb0, batch["attention_mask"], acfg, gen)
    loss_sum = 0.0
    for _k in range(cfg.adv_steps):
        delta.requires_grad_(True)
        emb = input_embeddings(model)(batch["input_ids"])
        lk = (
            nn.functional.cross_entropy(forward_embeds(model, emb + delta, batch), yb)
            / cfg.adv_steps
        )
        lk.backward()
        loss_sum += float(lk.detach())
        assert delta.grad is not None  # lk.backward() reached delta
        delta = ascend(delta, delta.grad, acfg)
    return torch.tensor(loss_sum)
