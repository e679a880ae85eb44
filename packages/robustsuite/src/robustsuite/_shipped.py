"""Builtin models shipped as weights: their recipes, their training (run only by ``tools/build_builtin.py``)
and their loading (safetensors; nothing is trained at load time).

Every machine evaluates the same parameters. ``resources/manifest.json`` records the SHA-256 of every
shipped file and, per model, the recipe and the accuracy the build measured on the shipped test subset
(correct / n), which the tests compare against with a Clopper-Pearson interval.

Training is deterministic: one intra-op thread, fixed seeds, explicit generators; re-running the build on
the same machine reproduces the files byte for byte.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

RESOURCES = Path(__file__).parent / "resources"
MODELS_DIR = RESOURCES / "models"
MANIFEST = RESOURCES / "manifest.json"


# --- vision ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FashionRecipe:
    """How a shipped Fashion-MNIST model is trained (recorded in its ``<name>.json``)."""

    name: str
    init_from: str | None = None   # fine-tune from this shipped model's weights (None: from scratch); a head
                                   # of another class count is re-initialised
    known: int = 10                # classes 0..known-1 (6 for the open-set model)
    epochs: int = 5
    lr: float = 3e-3               # peak of a one-cycle schedule, AdamW
    batch_size: int = 128
    weight_decay: float = 5e-4
    noise_sigma: float = 0.0       # Gaussian data augmentation N(0, σ²I) (Cohen et al. 2019, Sec. 3)
    eps: float = 0.0               # > 0: PGD adversarial training, L∞ (Madry et al. 2018)
    pgd_steps: int = 3
    pgd_step_size: float = 0.04
    seed: int = 0


# The build must fit a shared 2-core machine, so the derived models fine-tune the standard one (Departures:
# Madry et al. train PGD-AT from scratch with many steps; here 1 epoch of 2-step PGD with a random start and
# step 0.06 = 0.6 ε, close to Wong et al. 2020's FGSM-RS. Cohen et al. train the noise models from scratch.)
FASHION_RECIPES = {
    "fashion-cnn": FashionRecipe("fashion-cnn", epochs=3),
    "fashion-cnn-at": FashionRecipe("fashion-cnn-at", init_from="fashion-cnn", epochs=1, lr=1e-3, eps=0.1,
                                    pgd_steps=2, pgd_step_size=0.06),
    "fashion-cnn-noise-0.25": FashionRecipe("fashion-cnn-noise-0.25", init_from="fashion-cnn", epochs=1, lr=1e-3,
                                            noise_sigma=0.25),
    "fashion-cnn-noise-0.5": FashionRecipe("fashion-cnn-noise-0.5", init_from="fashion-cnn", epochs=1, lr=1e-3,
                                           noise_sigma=0.5),
    "fashion-osr-cnn": FashionRecipe("fashion-osr-cnn", init_from="fashion-cnn", known=6, epochs=2, lr=2e-3),
}


def _one_cycle(params, lr: float, weight_decay: float, total_steps: int):
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    return opt, torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=total_steps, pct_start=0.2)


@torch.enable_grad()
def train_fashion(recipe: FashionRecipe, x: torch.Tensor, y: torch.Tensor, init_state: dict | None = None,
                  log: Callable[[str], None] | None = None) -> nn.Module:
    """Train a :class:`~robustsuite.models.FashionCNN` by ``recipe`` on ``(x, y)`` (deterministic)."""
    from .models import FashionCNN, pgd_linf

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.seed)
        model = FashionCNN(recipe.known, in_channels=x.shape[1])
    if init_state is not None:
        if init_state["head.weight"].shape[0] != recipe.known:  # other classes: keep the fresh head
            init_state = {k: v for k, v in init_state.items() if not k.startswith("head.")}
            init_state.update({k: v for k, v in model.state_dict().items() if k.startswith("head.")})
        model.load_state_dict(init_state)
    gen = torch.Generator().manual_seed(recipe.seed)
    steps_per_epoch = (len(y) + recipe.batch_size - 1) // recipe.batch_size
    opt, sched = _one_cycle(model.parameters(), recipe.lr, recipe.weight_decay, recipe.epochs * steps_per_epoch)
    for epoch in range(recipe.epochs):
        perm = torch.randperm(len(y), generator=gen)
        total = 0.0
        for i in range(0, len(y), recipe.batch_size):
            idx = perm[i:i + recipe.batch_size]
            xb, yb = x[idx], y[idx]
            if recipe.eps > 0:
                model.eval()
                xb = pgd_linf(model, xb, yb, eps=recipe.eps, steps=recipe.pgd_steps,
                              step_size=recipe.pgd_step_size, generator=gen)
            if recipe.noise_sigma > 0:
                xb = xb + recipe.noise_sigma * torch.randn(xb.shape, generator=gen)
            model.train()
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item() * len(idx)
        if log:
            log(f"{recipe.name}: epoch {epoch + 1}/{recipe.epochs} loss {total / len(y):.4f}")
    return model.eval()


@torch.no_grad()
def correct_count(model: Callable, x, y: torch.Tensor, batch_size: int = 500) -> int:
    """Number of correct argmax predictions of a vision model or text classifier over ``(x, y)``."""
    correct = 0
    for i in range(0, len(y), batch_size):
        out = model(x[i:i + batch_size])
        pred = torch.as_tensor(np.asarray(out) if not isinstance(out, torch.Tensor) else out).argmax(1)
        correct += int((pred == y[i:i + batch_size]).sum())
    return correct


def save_vision(model: nn.Module, path: Path) -> None:
    from safetensors.torch import save_file

    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(path), metadata={"architecture": "fashion-cnn"})


def load_vision(name: str, directory: Path = MODELS_DIR) -> nn.Module:
    """A shipped Fashion-MNIST model from ``<directory>/<name>.safetensors`` (no pickle involved)."""
    from safetensors.torch import load_file

    from .models import FashionCNN

    state = load_file(str(directory / f"{name}.safetensors"))
    model = FashionCNN(state["head.weight"].shape[0], in_channels=state["features.0.weight"].shape[1])
    model.load_state_dict(state)
    return model.eval()


# --- text: tiny RoBERTa with a byte-level BPE ------------------------------------------------------

@dataclass(frozen=True)
class RobertaRecipe:
    name: str = "wordnet-roberta"
    vocab_size: int = 4096
    hidden_size: int = 64
    layers: int = 2
    heads: int = 2
    intermediate_size: int = 128
    max_length: int = 64
    epochs: int = 8
    lr: float = 2e-3
    batch_size: int = 32
    seed: int = 0


TEXT_RECIPES = {"wordnet-roberta": RobertaRecipe()}
SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>")


def bpe_merges(texts: Sequence[str], vocab_size: int) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Byte-level BPE (Sennrich et al. 2016; GPT-2/RoBERTa byte alphabet) learnt from ``texts``: vocabulary
    (special tokens, the 256 byte symbols, one token per merge, ``<mask>`` last) and merges.

    Deterministic by construction: the most frequent pair wins, ties go to the lexicographically smallest
    pair. (``tokenizers``' ``BpeTrainer`` gave identical results in three processes here, but its tie order
    is unspecified, and its WordPiece trainer did vary per process, see ``models.wordpiece_vocab``.)
    """
    from tokenizers import pre_tokenizers

    pre = pre_tokenizers.ByteLevel(add_prefix_space=False)
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(w for w, _ in pre.pre_tokenize_str(text))
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    words = [list(w) for w in sorted(counts)]
    freq = [counts[w] for w in sorted(counts)]
    pairs: Counter[tuple[str, str]] = Counter()
    where: dict[tuple[str, str], set[int]] = {}
    for wi, sym in enumerate(words):
        for p in zip(sym, sym[1:], strict=False):
            pairs[p] += freq[wi]
            where.setdefault(p, set()).add(wi)
    merges: list[tuple[str, str]] = []
    budget = vocab_size - len(SPECIAL_TOKENS) - len(alphabet) - 1
    while len(merges) < budget and pairs:
        best, n = min(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
        if n < 2:
            break
        merges.append(best)
        a, b = best
        for wi in sorted(where.pop(best, ())):
            sym = words[wi]
            for p in zip(sym, sym[1:], strict=False):
                pairs[p] -= freq[wi]
                if pairs[p] <= 0:
                    del pairs[p]
            out, i = [], 0
            while i < len(sym):
                if i + 1 < len(sym) and sym[i] == a and sym[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(sym[i])
                    i += 1
            words[wi] = out
            for p in zip(out, out[1:], strict=False):
                pairs[p] += freq[wi]
                where.setdefault(p, set()).add(wi)
        pairs.pop(best, None)
    tokens = [*SPECIAL_TOKENS, *alphabet]
    seen = set(tokens)
    for a, b in merges:
        if a + b not in seen:
            tokens.append(a + b)
            seen.add(a + b)
    tokens.append("<mask>")
    return {t: i for i, t in enumerate(tokens)}, merges


def byte_bpe_tokenizer(texts: Sequence[str], vocab_size: int, max_length: int):
    """A RoBERTa-style fast tokenizer (byte-level BPE, cased, no normalisation: accents and look-alike
    characters reach the model as their UTF-8 bytes)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import RobertaTokenizerFast

    vocab, merges = bpe_merges(texts, vocab_size)
    tok = Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.RobertaProcessing(("</s>", vocab["</s>"]), ("<s>", vocab["<s>"]),
                                                      trim_offsets=True, add_prefix_space=False)
    return RobertaTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", sep_token="</s>",
                                cls_token="<s>", unk_token="<unk>", pad_token="<pad>", mask_token="<mask>",
                                model_max_length=max_length)


@torch.enable_grad()
def train_roberta(recipe: RobertaRecipe, texts: Sequence[str], labels: torch.Tensor, classes: Sequence[str],
                  log: Callable[[str], None] | None = None):
    """A tiny ``RobertaForSequenceClassification`` trained from scratch (deterministic), as a
    :class:`~robustsuite.models.TextClassifier`."""
    from transformers import RobertaConfig, RobertaForSequenceClassification

    from .models import TextClassifier

    tokenizer = byte_bpe_tokenizer(texts, recipe.vocab_size, recipe.max_length)
    config = RobertaConfig(vocab_size=len(tokenizer), hidden_size=recipe.hidden_size,
                           num_hidden_layers=recipe.layers, num_attention_heads=recipe.heads,
                           intermediate_size=recipe.intermediate_size,
                           max_position_embeddings=recipe.max_length + tokenizer.pad_token_id + 1,
                           type_vocab_size=1, pad_token_id=tokenizer.pad_token_id,
                           bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                           num_labels=len(classes), id2label=dict(enumerate(classes)),
                           label2id={c: i for i, c in enumerate(classes)})
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.seed)
        model = RobertaForSequenceClassification(config)
    clf = TextClassifier(model, tokenizer, max_length=recipe.max_length)
    gen = torch.Generator().manual_seed(recipe.seed)
    steps = recipe.epochs * ((len(texts) + recipe.batch_size - 1) // recipe.batch_size)
    opt, sched = _one_cycle(model.parameters(), recipe.lr, 0.01, steps)
    texts = list(texts)
    for epoch in range(recipe.epochs):
        model.train()
        perm = torch.randperm(len(texts), generator=gen).tolist()
        total = 0.0
        for i in range(0, len(texts), recipe.batch_size):
            idx = perm[i:i + recipe.batch_size]
            with torch.random.fork_rng(devices=[]):  # dropout draws stay off the global stream
                torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
                out = model(**clf.encode([texts[j] for j in idx]), labels=labels[idx])
            opt.zero_grad()
            out.loss.backward()
            opt.step()
            sched.step()
            total += out.loss.item() * len(idx)
        if log:
            log(f"{recipe.name}: epoch {epoch + 1}/{recipe.epochs} loss {total / len(texts):.4f}")
    model.eval()
    return clf


def load_text(name: str, directory: Path = MODELS_DIR):
    """A shipped text model directory (safetensors + tokenizer.json) as a TextClassifier."""
    from .models import load_text_dir

    return load_text_dir(directory / name, max_length=TEXT_RECIPES[name].max_length)


# --- registry and manifest ------------------------------------------------------------------------

SHIPPED_MODELS = {
    "fashion-cnn": ("vision", "fashion-mnist"),
    "fashion-cnn-at": ("vision", "fashion-mnist"),
    "fashion-cnn-noise-0.25": ("vision", "fashion-mnist"),
    "fashion-cnn-noise-0.5": ("vision", "fashion-mnist"),
    "fashion-osr-cnn": ("vision", "fashion-mnist-osr"),
    "wordnet-roberta": ("text", "wordnet-topics"),
}


def recipe_dict(name: str) -> dict:
    return asdict(FASHION_RECIPES[name] if name in FASHION_RECIPES else TEXT_RECIPES[name])


def load(name: str):
    """Load the shipped model ``name`` (a key of :data:`SHIPPED_MODELS`)."""
    if name not in SHIPPED_MODELS:
        raise KeyError(f"no shipped model {name!r}; known: {sorted(SHIPPED_MODELS)}")
    return load_vision(name) if SHIPPED_MODELS[name][0] == "vision" else load_text(name)


def manifest(path: Path = MANIFEST) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
