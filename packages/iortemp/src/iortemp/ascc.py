"""ASCC (Dong et al., 2021; the paper's other defense baseline): each word's embedding replaced by an adversarial
sparse convex combination of its synonyms' embeddings, and the training loss CE(x) + beta * KL(p(x) || p(x_hat))."""

from __future__ import annotations

import torch
from torch import nn

from robustsuite_common.contract import renamed

from .embedding import forward_embeds, input_embeddings
from .training_config import TrainingConfig

__all__ = ["ascc_candidates", "ascc_loss", "ascc_perturbation", "ascc_table"]


def ascc_table(tokenizer, synonyms, k: int) -> dict[int, list[int]]:
    """Token id -> up to ``k`` synonym token ids, for words that are whole tokens of the vocabulary."""
    vocab = tokenizer.get_vocab()
    out: dict[int, list[int]] = {}
    for word, syns in synonyms.items():
        i = vocab.get(word, vocab.get(str(word).lower()))
        if i is None:
            continue
        ids = []
        for w in syns:
            j = vocab.get(w, vocab.get(str(w).lower()))
            if j is not None and j != i and j not in ids:
                ids.append(j)
        if ids:
            out[int(i)] = ids[:k]
    return out


def ascc_candidates(input_ids: torch.Tensor, table: dict[int, list[int]], k: int):
    """(B, L, k + 1) candidate ids (the token itself first) and their validity mask."""
    ids = input_ids.cpu().tolist()
    cand = [[[t] + (table.get(t, []) + [t] * k)[:k] for t in row] for row in ids]
    mask = [[[True] + [j < len(table.get(t, [])) for j in range(k)] for t in row] for row in ids]
    dev = input_ids.device
    return torch.tensor(cand, device=dev), torch.tensor(mask, device=dev)


@renamed(batch="encoded", cfg="config", gen="generator")
def ascc_perturbation(model, encoded: dict, cand: torch.Tensor, mask: torch.Tensor, *, config: TrainingConfig,
                      generator: torch.Generator | None) -> torch.Tensor:
    """ASCC's inner maximisation: convex-combination weights (B, L, k+1) over each word's synonym embeddings
    that maximise KL(p(x) || p(x_hat)) minus an entropy term pushing them towards sparse vertices
    (Dong et al., 2021, Eq. 8-10). Rows are on the probability simplex (masked entries exactly 0). ``encoded``: the
    tokenised batch (``input_ids``, ``attention_mask``); ``cand`` / ``mask``: the synonym candidates and their mask;
    ``config``: the ASCC steps, step size and entropy weight; ``generator``: the random start's stream."""
    emb = input_embeddings(model)
    with torch.no_grad():
        ecand = emb(cand)  # (B, L, K1, d)
        p_clean = torch.softmax(model(**encoded).logits, dim=-1)
    w = (torch.rand(cand.shape, generator=generator) * 1e-2).to(ecand.device, ecand.dtype)
    neg = torch.finfo(ecand.dtype).min
    for _ in range(config.ascc_steps):
        w.requires_grad_(True)
        coef = torch.softmax(w.masked_fill(~mask, neg), dim=-1)
        adv = (coef.unsqueeze(-1) * ecand).sum(dim=-2)
        logp_adv = torch.log_softmax(forward_embeds(model, adv, encoded), dim=-1)
        kl = nn.functional.kl_div(logp_adv, p_clean, reduction="batchmean")
        ent = -(coef * torch.log(coef.clamp_min(1e-12))).sum(-1).mean()
        (g,) = torch.autograd.grad(kl - config.ascc_entropy * ent / max(1, cand.shape[1]), w)
        w = (w + config.ascc_lr * g / g.norm().clamp_min(1e-12)).detach()
    return torch.softmax(w.masked_fill(~mask, neg), dim=-1).detach()


def ascc_loss(model: nn.Module, batch: dict, yb: torch.Tensor, table: dict[int, list[int]], cfg: TrainingConfig,
              gen: torch.Generator) -> torch.Tensor:
    """ASCC's training loss on one batch (backpropagated here)."""
    cand, cmask = ascc_candidates(batch["input_ids"], table, cfg.ascc_max_synonyms)
    coef = ascc_perturbation(model, batch, cand, cmask, config=cfg, generator=gen)
    logits = model(**batch).logits
    adv = (coef.unsqueeze(-1) * input_embeddings(model)(cand)).sum(dim=-2)
    kl = nn.functional.kl_div(torch.log_softmax(forward_embeds(model, adv, batch), dim=-1),
                              torch.softmax(logits, dim=-1), reduction="batchmean")
    loss = nn.functional.cross_entropy(logits, yb) + cfg.ascc_beta * kl
    loss.backward()
    return loss
