"""Training for any Hugging Face sequence classifier (App. A-C): base, DDi-AT, embedding PGD-K, FreeLB,
and augmentation adversarial training.

Defaults follow Appendix C: AdamW (lr 1e-5, weight decay 0.01, betas (0.9, 0.999), eps 1e-8), batch 8,
5 epochs, no warm-up; embedding adversary (TextDefender conventions): 5 steps, step size 0.03, random
init magnitude 0.05, L2 max-norm 1.0; DDi-AT with M = 3 PGD starts of K = 3 steps.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
from torch import nn

from robustsuite_common.contract import renamed
from robustsuite_common.extras import optional_import

from ._validation import check_choice, check_int, check_labels, check_seed, check_texts
from .hf import HFTextClassifier
from .protocol import call_attack
from .temperature import _device_of

__all__ = [
    "TrainingConfig",
    "TrainingResult",
    "adversarial_augmentation",
    "ascc_perturbation",
    "mean_embedding_norm",
    "min_norm_simplex",
    "train_classifier",
]

METHODS = ("base", "ddi-at", "pgd", "freelb", "ascc")
NORMALIZATIONS = ("normalise", "clip", "none")
ADV_SCALES = ("absolute", "embedding")


@dataclass(frozen=True)
class TrainingConfig:
    """Hyper-parameters (Appendix C defaults). ``ddi_normalization`` is the Table 5 switch.

    ``adv_scale`` says how ``adv_init_mag``, ``adv_lr`` and ``adv_max_norm`` are read: ``"absolute"`` (the
    paper / TextDefender: plain L2 norms over the perturbed sequence of token embeddings, tuned for base-size
    models whose input-embedding vectors have norms of about 1) or ``"embedding"`` (the same numbers in units
    of the model's mean input-embedding-vector L2 norm, measured when training starts, so that one setting
    means the same relative perturbation for a base-size model and a tiny one; for a model whose mean
    embedding norm is 1 both readings coincide).
    """

    lr: float = 1e-5
    batch_size: int = 8
    epochs: int = 5
    warmup_steps: int = 0
    weight_decay: float = 0.01
    betas: tuple[float, float] = (0.9, 0.999)
    adam_eps: float = 1e-8
    max_length: int = 128
    adv_steps: int = 5
    adv_lr: float = 0.03
    adv_init_mag: float = 0.05
    adv_max_norm: float = 1.0
    ddi_m: int = 3
    ddi_k: int = 3
    ddi_normalization: str = "normalise"
    ddi_clip_norm: float = 1.0
    ddi_solver: str = "auto"
    # ASCC (Dong et al., 2021; the paper's other defense baseline): adversarial sparse convex combinations of
    # each word's synonym embeddings; their defaults: beta = 4 (KL weight), 10 ascent steps, entropy weight 10
    ascc_beta: float = 4.0
    ascc_steps: int = 10
    ascc_lr: float = 10.0
    ascc_entropy: float = 10.0
    ascc_max_synonyms: int = 8
    adv_scale: str = "absolute"

    def __post_init__(self):
        check_choice("ddi_normalization", self.ddi_normalization, NORMALIZATIONS)
        check_choice("adv_scale", self.adv_scale, ADV_SCALES)
        check_choice("ddi_solver", self.ddi_solver, ("auto", "exact", "cvxpy"))
        for name in ("batch_size", "epochs", "max_length", "adv_steps", "ddi_m", "ddi_k", "ascc_steps",
                     "ascc_max_synonyms"):
            check_int(name, getattr(self, name), ge=1)
        if self.ascc_beta < 0 or self.ascc_entropy < 0:
            raise ValueError("ascc_beta and ascc_entropy must be >= 0")
        for name in ("lr", "adv_lr", "ddi_clip_norm", "ascc_lr"):
            v = getattr(self, name)
            if not (v > 0 and math.isfinite(v)):
                raise ValueError(f"{name} must be a finite number > 0, got {v}")
        if self.adv_init_mag < 0 or self.adv_max_norm < 0:
            raise ValueError("adv_init_mag and adv_max_norm must be >= 0 (0 disables)")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["betas"] = list(self.betas)
        return d


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


def mean_embedding_norm(model: nn.Module) -> float:
    """Mean L2 norm of the rows of ``model``'s input-embedding matrix: the unit of
    ``TrainingConfig(adv_scale="embedding")`` (about 1 for BERT-base, ~0.1-0.3 for tiny models)."""
    if not isinstance(model, nn.Module) or not hasattr(model, "get_input_embeddings"):
        raise TypeError("model must be a transformers model (nn.Module with get_input_embeddings), got "
                        f"{type(model).__name__}")
    with torch.no_grad():
        w = model.get_input_embeddings().weight
        return float(w.double().norm(dim=1).mean())


def _forward(model: nn.Module, embeds: torch.Tensor, batch: dict) -> torch.Tensor:
    kwargs = {k: v for k, v in batch.items() if k in ("attention_mask", "token_type_ids")}
    return model(inputs_embeds=embeds, **kwargs).logits


def _init_delta(
    embeds: torch.Tensor, mask: torch.Tensor, cfg: TrainingConfig, gen: torch.Generator
) -> torch.Tensor:
    m = mask.unsqueeze(2).to(embeds.dtype)
    if cfg.adv_init_mag <= 0:
        return torch.zeros_like(embeds)
    u = (torch.rand(embeds.shape, generator=gen) * 2 - 1).to(embeds.device, embeds.dtype) * m
    dims = m.sum(dim=(1, 2)) * embeds.shape[-1]
    return u * (cfg.adv_init_mag / dims.sqrt()).view(-1, 1, 1)


def _ascend(delta: torch.Tensor, grad: torch.Tensor, cfg: TrainingConfig) -> torch.Tensor:
    b = delta.shape[0]
    gnorm = grad.reshape(b, -1).norm(dim=1).clamp_min(1e-8).view(-1, 1, 1)
    delta = delta + cfg.adv_lr * grad / gnorm
    if cfg.adv_max_norm > 0:
        dnorm = delta.reshape(b, -1).norm(dim=1).view(-1, 1, 1)
        delta = delta * torch.where(
            dnorm > cfg.adv_max_norm, cfg.adv_max_norm / dnorm.clamp_min(1e-12), torch.ones_like(dnorm)
        )
    return delta.detach()


def _pgd(model, batch, labels, steps, cfg, gen) -> torch.Tensor:
    """Embedding-space L2 PGD (TextDefender's PGD-K inner maximisation); returns the perturbation."""
    with torch.no_grad():
        embeds = model.get_input_embeddings()(batch["input_ids"])
    delta = _init_delta(embeds, batch["attention_mask"], cfg, gen)
    for _ in range(steps):
        delta.requires_grad_(True)
        loss = nn.functional.cross_entropy(_forward(model, embeds + delta, batch), labels)
        (g,) = torch.autograd.grad(loss, delta)
        delta = _ascend(delta, g, cfg)
    return delta


def _ascc_table(tokenizer, synonyms, k: int) -> dict[int, list[int]]:
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


def _ascc_candidates(input_ids: torch.Tensor, table: dict[int, list[int]], k: int):
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
    emb = model.get_input_embeddings()
    with torch.no_grad():
        ecand = emb(cand)  # (B, L, K1, d)
        p_clean = torch.softmax(model(**encoded).logits, dim=-1)
    w = (torch.rand(cand.shape, generator=generator) * 1e-2).to(ecand.device, ecand.dtype)
    neg = torch.finfo(ecand.dtype).min
    for _ in range(config.ascc_steps):
        w.requires_grad_(True)
        coef = torch.softmax(w.masked_fill(~mask, neg), dim=-1)
        adv = (coef.unsqueeze(-1) * ecand).sum(dim=-2)
        logp_adv = torch.log_softmax(_forward(model, adv, encoded), dim=-1)
        kl = nn.functional.kl_div(logp_adv, p_clean, reduction="batchmean")
        ent = -(coef * torch.log(coef.clamp_min(1e-12))).sum(-1).mean()
        (g,) = torch.autograd.grad(kl - config.ascc_entropy * ent / max(1, cand.shape[1]), w)
        w = (w + config.ascc_lr * g / g.norm().clamp_min(1e-12)).detach()
    return torch.softmax(w.masked_fill(~mask, neg), dim=-1).detach()


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
        table = _ascc_table(tokenizer, synonyms, cfg.ascc_max_synonyms)
        if not table:
            raise ValueError("synonyms: no word and substitute are whole tokens of the tokenizer's vocabulary")
    clf = HFTextClassifier(model, tokenizer, max_length=cfg.max_length)
    device = _device_of(model)
    params = [p for p in model.parameters() if p.requires_grad]
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
    n_steps = cfg.epochs * math.ceil(len(texts) / cfg.batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / cfg.warmup_steps) if cfg.warmup_steps else 1.0
    )
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
                if method == "base":
                    loss = nn.functional.cross_entropy(model(**batch).logits, yb)
                    loss.backward()
                elif method == "pgd":
                    delta = _pgd(model, batch, yb, cfg.adv_steps, acfg, gen)
                    emb = model.get_input_embeddings()(batch["input_ids"])
                    loss = nn.functional.cross_entropy(_forward(model, emb + delta, batch), yb)
                    loss.backward()
                elif method == "ascc":
                    cand, cmask = _ascc_candidates(batch["input_ids"], table, cfg.ascc_max_synonyms)
                    coef = ascc_perturbation(model, batch, cand, cmask, config=cfg, generator=gen)
                    logits = model(**batch).logits
                    adv = (coef.unsqueeze(-1) * model.get_input_embeddings()(cand)).sum(dim=-2)
                    kl = nn.functional.kl_div(torch.log_softmax(_forward(model, adv, batch), dim=-1),
                                              torch.softmax(logits, dim=-1), reduction="batchmean")
                    loss = nn.functional.cross_entropy(logits, yb) + cfg.ascc_beta * kl
                    loss.backward()
                elif method == "freelb":
                    with torch.no_grad():
                        emb0 = model.get_input_embeddings()(batch["input_ids"])
                    delta = _init_delta(emb0, batch["attention_mask"], acfg, gen)
                    loss_sum = 0.0
                    for _k in range(cfg.adv_steps):
                        delta.requires_grad_(True)
                        emb = model.get_input_embeddings()(batch["input_ids"])
                        lk = (
                            nn.functional.cross_entropy(_forward(model, emb + delta, batch), yb)
                            / cfg.adv_steps
                        )
                        lk.backward()
                        loss_sum += float(lk.detach())
                        delta = _ascend(delta, delta.grad, acfg)
                    loss = torch.tensor(loss_sum)
                else:  # ddi-at
                    vecs, losses = [], []
                    for _m in range(cfg.ddi_m):
                        delta = _pgd(model, batch, yb, cfg.ddi_k, acfg, gen)
                        emb = model.get_input_embeddings()(batch["input_ids"])
                        lm = nn.functional.cross_entropy(_forward(model, emb + delta, batch), yb)
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
                    alphas.append(alpha)
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
                    loss = torch.tensor(float(np.dot(alpha, losses)))
                opt.step()
                sched.step()
                step += 1
                total += float(loss.detach()) * len(idx)
                count += len(idx)
            epoch_losses.append(total / count)
    model.eval()
    del n_steps
    mean_alpha = tuple(float(v) for v in np.mean(alphas, axis=0)) if alphas else None
    return TrainingResult(method, step, tuple(epoch_losses), mean_alpha, cfg, float(unit))


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
    out = call_attack(attack, model, texts, y, seed=seed, progress=progress)
    keep = np.flatnonzero(out.success)
    aug_texts = list(texts) + [out.adversarial[i] for i in keep]
    return aug_texts, np.concatenate([y, y[keep]])
