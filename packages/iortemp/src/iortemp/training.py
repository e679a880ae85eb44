"""Training for any Hugging Face sequence classifier (App. A-C): base, DDi-AT (:mod:`iortemp.ddi`), embedding
PGD-K and FreeLB (:mod:`iortemp.embedding`), ASCC (:mod:`iortemp.ascc`), and augmentation adversarial training.

Defaults follow Appendix C: AdamW (lr 1e-5, weight decay 0.01, betas (0.9, 0.999), eps 1e-8), batch 8,
5 epochs, no warm-up; embedding adversary (TextDefender conventions): 5 steps, step size 0.03, random
init magnitude 0.05, L2 max-norm 1.0; DDi-AT with M = 3 PGD starts of K = 3 steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import nn

from robustsuite_common.checks import check_choice, check_labels, check_seed, check_texts
from robustsuite_common.contract import renamed

from .ascc import ascc_loss, ascc_perturbation, ascc_table
from .ddi import ddi_at_step, min_norm_simplex
from .embedding import freelb_loss, mean_embedding_norm, pgd_loss
from .hf import HFTextClassifier
from .protocol import call_attack
from .temperature import _device_of
from .training_config import METHODS, TrainingConfig

__all__ = [
    "TrainingConfig",
    "TrainingResult",
    "adversarial_augmentation",
    "ascc_perturbation",
    "mean_embedding_norm",
    "min_norm_simplex",
    "train_classifier",
]

@dataclass(frozen=True)
class TrainingResult:
    method: str
    steps: int
    epoch_losses: tuple[float, ...]
    mean_simplex_weights: tuple[float, ...] | None  # DDi-AT: average alpha* over steps
    config: TrainingConfig
    adv_unit: float = 1.0  # L2 norm that one unit of adv_init_mag / adv_lr / adv_max_norm stood for

    def to_dict(self) -> dict:
        return {
            "adv_unit": self.adv_unit,
            "method": self.method,
            "steps": self.steps,
            "epoch_losses": list(self.epoch_losses),
            "mean_simplex_weights": None
            if self.mean_simplex_weights is None
            else list(self.mean_simplex_weights),
            "config": self.config.to_dict(),
        }


def train_classifier(
    model: nn.Module,
    tokenizer,
    texts: Sequence[str],
    labels,
    *,
    method: str = "base",
    config: TrainingConfig | None = None,
    seed: int = 0,
    progress: bool = False,
    synonyms=None,
) -> TrainingResult:
    """Train ``model`` in place on ``(texts, labels)`` with ``method`` in base / ddi-at / pgd / freelb / ascc.

    * ``ddi-at`` (App. A.2, Eq. 15-17): M embedding-space PGD adversaries from independent random starts,
      K steps each; the M parameter gradients are combined with the min-norm simplex weights alpha*
      (:func:`min_norm_simplex`) and the combined gradient is globally normalised to unit L2 norm
      (``ddi_normalization="normalise"``, Eq. 12), clipped to ``ddi_clip_norm`` ("clip") or left ("none")
      — the Table 5 ablation. The optimiser (AdamW, App. C) then steps along it, as Phi in Eq. 12. Adam
      is invariant to a constant gradient scale; what the per-step normalisation changes is that steps
      never shrink as the adversarial loss falls (Adam's second moment would otherwise still hold the large
      early gradients), so the logit margins keep growing: the overconfidence of Table 1 / App. B.
    * ``pgd``: PGD-K adversarial training in the embedding space (loss on the final perturbation).
    * ``freelb``: FreeLB (Zhu et al., 2020): parameter gradients accumulated over the K ascent steps.
    * ``ascc``: ASCC (Dong et al., 2021): loss CE(x) + ``ascc_beta`` * KL(p(x) || p(x_hat)) where x_hat replaces
      each word's embedding by the adversarial convex combination of its synonyms' embeddings
      (:func:`ascc_perturbation`); ``synonyms`` maps words to substitutes (e.g. WordNet synonyms,
      :func:`iortemp.wordnet.wordnet_synonyms`); words that are not whole tokens are left unperturbed.

    Departure: Eq. 16 picks, per example, the maximiser with the largest gradient norm; like the paper's
    implementation we take the M PGD solutions as the finite set S*(M) and let alpha* weigh them.
    Dropout and the data order are seeded from ``seed`` without changing the caller's global RNG state.
    """
    cfg = config or TrainingConfig()
    check_choice("method", method, METHODS)
    if not isinstance(model, nn.Module) or not hasattr(model, "get_input_embeddings"):
        raise TypeError(
            "model must be a transformers sequence classifier (nn.Module with get_input_embeddings)"
        )
    texts = check_texts("texts", texts)
    n_labels = getattr(getattr(model, "config", None), "num_labels", None)
    y = check_labels("labels", labels, length=len(texts), n_classes=n_labels if isinstance(n_labels, int) else None)
    check_seed("seed", seed)
    table = None
    if method == "ascc":
        if synonyms is None or not hasattr(synonyms, "items"):
            raise ValueError("synonyms must be a mapping word -> list of substitutes for method='ascc'")
        table = ascc_table(tokenizer, synonyms, cfg.ascc_max_synonyms)
        if not table:
            raise ValueError("synonyms: no word and substitute are whole tokens of the tokenizer's vocabulary")
    clf = HFTextClassifier(model, tokenizer, max_length=cfg.max_length)
    device = _device_of(model)
    params = [p for p in model.parameters() if p.requires_grad]
    opt, sched = _optimizer(model, cfg)
    unit = mean_embedding_norm(model) if cfg.adv_scale == "embedding" else 1.0
    # the adversary's magnitudes in absolute L2 units (``cfg`` itself is reported unchanged)
    acfg = replace(cfg, adv_init_mag=cfg.adv_init_mag * unit, adv_lr=cfg.adv_lr * unit,
                   adv_max_norm=cfg.adv_max_norm * unit, adv_scale="absolute")
    gen = torch.Generator().manual_seed(int(seed))
    devices = [device.index or 0] if device.type == "cuda" else []
    epoch_losses, alphas, step = [], [], 0
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(int(seed))
        model.train()
        bar = range(cfg.epochs)
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(bar, desc=f"train[{method}]")
        for _ in bar:
            order = torch.randperm(len(texts), generator=gen).tolist()
            total, count = 0.0, 0
            for i in range(0, len(texts), cfg.batch_size):
                idx = order[i : i + cfg.batch_size]
                batch = clf.encode([texts[j] for j in idx])
                yb = torch.as_tensor(y[idx], dtype=torch.long, device=device)
                opt.zero_grad(set_to_none=True)
                loss = _loss(method, model, batch, yb, cfg=cfg, acfg=acfg, gen=gen, params=params, table=table,
                             alphas=alphas)
                opt.step()
                sched.step()
                step += 1
                total += float(loss.detach()) * len(idx)
                count += len(idx)
            epoch_losses.append(total / count)
    model.eval()
    mean_alpha = tuple(float(v) for v in np.mean(alphas, axis=0)) if alphas else None
    return TrainingResult(method, step, tuple(epoch_losses), mean_alpha, cfg, float(unit))


def _optimizer(model: nn.Module, cfg: TrainingConfig):
    """AdamW (App. C) without weight decay on biases and LayerNorm, and its linear warm-up."""
    decay = [
        p for n, p in model.named_parameters() if p.requires_grad and not ("bias" in n or "LayerNorm" in n)
    ]
    no_decay = [
        p for n, p in model.named_parameters() if p.requires_grad and ("bias" in n or "LayerNorm" in n)
    ]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": cfg.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=cfg.lr,
        betas=cfg.betas,
        eps=cfg.adam_eps,
    )
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / cfg.warmup_steps) if cfg.warmup_steps else 1.0
    )
    return opt, sched


def _loss(method: str, model: nn.Module, batch: dict, yb: torch.Tensor, *, cfg: TrainingConfig,
          acfg: TrainingConfig, gen: torch.Generator, params: list, table: dict[int, list[int]] | None,
          alphas: list) -> torch.Tensor:
    """One batch of ``method``: the parameter gradients set (backward, or DDi-AT's combined gradient) and the loss
    reported; DDi-AT's alpha* is appended to ``alphas``."""
    if method == "base":
        loss = nn.functional.cross_entropy(model(**batch).logits, yb)
        loss.backward()
        return loss
    if method == "pgd":
        return pgd_loss(model, batch, yb, cfg, acfg, gen)
    if method == "ascc":
        assert table is not None
        return ascc_loss(model, batch, yb, table, cfg, gen)
    if method == "freelb":
        return freelb_loss(model, batch, yb, cfg, acfg, gen)
    loss, alpha = ddi_at_step(model, batch, yb, params, cfg, acfg, gen)  # ddi-at
    alphas.append(alpha)
    return loss


@renamed(classifier="model")
def adversarial_augmentation(
    model, texts: Sequence[str], labels, attack, *, seed: int = 0, progress: bool = False
) -> tuple[list[str], np.ndarray]:
    """The *aug* baseline's data (Sec. 5.1): the training set plus one adversarial example per sample that
    ``attack`` (the paper: DeepWordBug) finds on a normally trained ``model``. Re-train a fresh
    model on the returned set with ``train_classifier(..., method="base")``.
    """
    texts = check_texts("texts", texts)
    y = check_labels("labels", labels, length=len(texts))
    out = call_attack(model, texts, y, attack, seed=seed, progress=progress)
    keep = np.flatnonzero(out.success)
    aug_texts = list(texts) + [out.adversarial[i] for i in keep]
    return aug_texts, np.concatenate([y, y[keep]])
