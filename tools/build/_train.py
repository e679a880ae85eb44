"""Training of the shipped models, at build time only: the two CNN loops (Fashion-MNIST: AdamW one-cycle with
noise or PGD augmentation; 8×8 digits: Adam with a cosine schedule, PGD adversarial training), the one
tiny-transformer loop (:func:`fit`) that every shipped text model is trained with, and the deterministic tokenizers.

Deterministic by construction: one intra-op thread (the build scripts set it), fixed seeds, explicit generators,
dropout draws kept off the global random stream. Re-running a recipe on the same machine gives the same bytes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn

from robustsuite.zoo.nets import DigitsCNN, FashionCNN
from robustsuite_common.text import TextClassifier
from zeroe_perturb.hf import TASK_WRAPPERS

SPECIAL_TOKENS = ("<s>", "<pad>", "</s>", "<unk>")


def pgd_linf(model: nn.Module, x: torch.Tensor, y: torch.Tensor, *, eps: float, steps: int, step_size: float,
             generator: torch.Generator | None = None) -> torch.Tensor:
    """Untargeted L∞ PGD with a random start (Madry et al.) used for adversarial training."""
    delta = (torch.rand(x.shape, generator=generator, device=x.device) * 2 - 1) * eps
    x_adv = (x + delta).clamp(0, 1)
    for _ in range(steps):
        x_adv.requires_grad_(True)
        loss = nn.functional.cross_entropy(model(x_adv), y)
        (grad,) = torch.autograd.grad(loss, x_adv)
        x_adv = torch.min(torch.max(x_adv.detach() + step_size * grad.sign(), x - eps), x + eps).clamp(0, 1)
    return x_adv.detach()


def _one_cycle(params, lr: float, weight_decay: float, total_steps: int, pct_start: float = 0.2):
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    return opt, torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=total_steps, pct_start=pct_start)


@torch.enable_grad()
def train_fashion(recipe, x: torch.Tensor, y: torch.Tensor, init_state: dict | None = None,
                  log: Callable[[str], None] | None = None) -> nn.Module:
    """Train a :class:`~robustsuite.zoo.nets.FashionCNN` by ``recipe`` on ``(x, y)`` (deterministic)."""
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


@torch.enable_grad()
def train_digits(recipe, dataset, log: Callable[[str], None] | None = None) -> nn.Module:
    """Train a :class:`~robustsuite.zoo.nets.DigitsCNN` by ``recipe`` (standard or PGD adversarial training) on a
    builtin dataset; deterministic (the loop the first-use training of these models ran)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.seed)
        model = DigitsCNN(dataset.num_classes)
    gen = torch.Generator().manual_seed(recipe.seed)
    opt = torch.optim.Adam(model.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, recipe.epochs)
    x, y = dataset.train.x, dataset.train.y
    for epoch in range(recipe.epochs):
        model.train()
        perm = torch.randperm(len(y), generator=gen)
        for i in range(0, len(y), recipe.batch_size):
            idx = perm[i:i + recipe.batch_size]
            xb, yb = x[idx], y[idx]
            if recipe.adversarial:
                model.eval()
                xb = pgd_linf(model, xb, yb, eps=recipe.eps, steps=recipe.pgd_steps,
                              step_size=recipe.pgd_step_size, generator=gen)
                model.train()
            loss = nn.functional.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        sched.step()
        if log:
            log(f"{recipe.name}: epoch {epoch + 1}/{recipe.epochs}")
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


def save_vision(model: nn.Module, path, architecture: str) -> None:
    from safetensors.torch import save_file

    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(path), metadata={"architecture": architecture})


# --- the one tiny-transformer loop ----------------------------------------------------------------------------

@torch.enable_grad()
def fit(model: nn.Module, n: int, batch: Callable[[list[int]], dict], *, epochs: int, lr: float, batch_size: int,
        seed: int, pct_start: float, weight_decay: float = 0.01, log: Callable[[str], None] | None = None,
        name: str = "") -> nn.Module:
    """Train a transformers model on ``n`` items: per epoch a random order (``seed``'s generator), batches of
    ``batch_size`` items whose model inputs (with ``labels``) ``batch(indices)`` builds; AdamW with a one-cycle
    schedule peaking at ``lr``; every batch's dropout seeded from the same generator."""
    gen = torch.Generator().manual_seed(seed)
    steps = epochs * ((n + batch_size - 1) // batch_size)
    opt, sched = _one_cycle(model.parameters(), lr, weight_decay, steps, pct_start)
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(n, generator=gen).tolist()
        total = 0.0
        for i in range(0, n, batch_size):
            idx = perm[i:i + batch_size]
            inputs = batch(idx)
            with torch.random.fork_rng(devices=[]):  # dropout draws stay off the global stream
                torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
                out = model(**inputs)
            opt.zero_grad()
            out.loss.backward()
            opt.step()
            sched.step()
            total += out.loss.item() * len(idx)
        if log:
            log(f"{name}: epoch {epoch + 1}/{epochs} loss {total / n:.4f}")
    return model.eval()


def _seeded(seed: int, make: Callable[[], nn.Module]) -> nn.Module:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return make()


def train_text_tiny(recipe, texts: Sequence[str], labels: torch.Tensor, classes: Sequence[str],
                    log: Callable[[str], None] | None = None) -> TextClassifier:
    """``builtin:text-tiny``: a tiny ``BertForSequenceClassification`` from scratch, WordPiece tokenizer."""
    from transformers import BertConfig, BertForSequenceClassification

    texts = list(texts)
    tokenizer = train_tokenizer(texts, recipe.vocab_size)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=recipe.hidden_size,
                        num_hidden_layers=recipe.layers, num_attention_heads=recipe.heads,
                        intermediate_size=recipe.intermediate_size, max_position_embeddings=recipe.max_length + 2,
                        num_labels=len(classes), id2label=dict(enumerate(classes)),
                        label2id={c: i for i, c in enumerate(classes)})
    model = _seeded(recipe.seed, lambda: BertForSequenceClassification(config))
    clf = TextClassifier(model, tokenizer, max_length=recipe.max_length)
    fit(model, len(texts), lambda idx: {**clf.encode([texts[j] for j in idx]), "labels": labels[idx]},
        epochs=recipe.epochs, lr=recipe.lr, batch_size=recipe.batch_size, seed=recipe.seed, pct_start=0.1, log=log,
        name=recipe.name)
    return clf


def _roberta_config(recipe, tokenizer, classes: Sequence[str], **extra):
    from transformers import RobertaConfig

    return RobertaConfig(vocab_size=len(tokenizer), hidden_size=recipe.hidden_size,
                         num_hidden_layers=recipe.layers, num_attention_heads=recipe.heads,
                         intermediate_size=recipe.intermediate_size,
                         max_position_embeddings=recipe.max_length + tokenizer.pad_token_id + 1,
                         type_vocab_size=1, pad_token_id=tokenizer.pad_token_id,
                         bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                         num_labels=len(classes), id2label=dict(enumerate(classes)),
                         label2id={c: i for i, c in enumerate(classes)}, **extra)


def train_roberta(recipe, texts: Sequence[str], labels: torch.Tensor, classes: Sequence[str],
                  log: Callable[[str], None] | None = None) -> TextClassifier:
    """``builtin:wordnet-roberta``: a tiny ``RobertaForSequenceClassification`` from scratch, byte-level BPE."""
    from transformers import RobertaForSequenceClassification

    texts = list(texts)
    tokenizer = byte_bpe_tokenizer(texts, recipe.vocab_size, recipe.max_length)
    config = _roberta_config(recipe, tokenizer, classes)
    model = _seeded(recipe.seed, lambda: RobertaForSequenceClassification(config))
    clf = TextClassifier(model, tokenizer, max_length=recipe.max_length)
    fit(model, len(texts), lambda idx: {**clf.encode([texts[j] for j in idx]), "labels": labels[idx]},
        epochs=recipe.epochs, lr=recipe.lr, batch_size=recipe.batch_size, seed=recipe.seed, pct_start=0.2, log=log,
        name=recipe.name)
    return clf


def train_task(recipe, tokenizer, x: list, y: torch.Tensor, classes: Sequence[str], init_state: dict | None,
               log: Callable[[str], None] | None = None):
    """A WordNet task model (pairs / multi-label / tagging): the ``builtin:wordnet-roberta`` architecture whose
    encoder starts from ``init_state`` (that model's weights), a new task head; returns the package's wrapper."""
    from transformers import RobertaForSequenceClassification, RobertaForTokenClassification

    x, y = x[:recipe.n_train], y[:recipe.n_train]
    config = _roberta_config(recipe, tokenizer, classes,
                             problem_type="multi_label_classification" if recipe.task == "multilabel" else None)
    cls = RobertaForTokenClassification if recipe.task == "tagging" else RobertaForSequenceClassification
    model = _seeded(recipe.seed, lambda: cls(config))
    if init_state is not None:  # the encoder of a shipped model; the task head stays freshly initialised
        encoder = {k: v for k, v in init_state.items() if k.startswith("roberta.")}
        missing, unexpected = model.load_state_dict(encoder, strict=False)
        if unexpected or any(k.startswith("roberta.") for k in missing):
            raise ValueError(f"{recipe.init_from} does not match the task architecture: missing {missing}, "
                             f"unexpected {unexpected}")
    wrapper = TASK_WRAPPERS[recipe.task](model, tokenizer, max_length=recipe.max_length)

    def batch(idx: list[int]) -> dict:
        items = [x[j] for j in idx]
        if recipe.task != "tagging":
            return {**wrapper.encode(items), "labels": y[idx].float() if recipe.task == "multilabel" else y[idx]}
        enc, firsts = wrapper.encode(items)
        target = torch.full(enc["input_ids"].shape, -100, dtype=torch.int64)
        for r, (j, first) in enumerate(zip(idx, firsts, strict=True)):
            for k, pos in enumerate(first):
                if pos >= 0 and int(y[j, k]) >= 0:
                    target[r, pos] = y[j, k]
        return {**enc, "labels": target}

    fit(model, len(x), batch, epochs=recipe.epochs, lr=recipe.lr, batch_size=recipe.batch_size, seed=recipe.seed,
        pct_start=0.2, log=log, name=recipe.name)
    return wrapper


# --- deterministic tokenizers ---------------------------------------------------------------------------------

def wordpiece_vocab(texts: Sequence[str], vocab_size: int) -> dict[str, int]:
    """A WordPiece vocabulary from corpus counts: special tokens, every character (plain and ``##``
    continuation), then whole words by descending frequency, ties broken alphabetically.

    Deterministic by construction. ``tokenizers``' own ``WordPieceTrainer`` is not used because its
    tie-breaking follows Rust hash-map order, which changes from process to process: measured here, three
    trainings on the same corpus gave three different vocabularies, and so different models.
    """
    from collections import Counter

    from tokenizers import normalizers, pre_tokenizers

    norm, pre = normalizers.BertNormalizer(lowercase=True), pre_tokenizers.BertPreTokenizer()
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(w for w, _ in pre.pre_tokenize_str(norm.normalize_str(text)))
    chars = sorted({c for w in counts for c in w})
    tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *(f"##{c}" for c in chars)]
    words = [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])) if len(w) > 1]
    tokens += words[: max(0, vocab_size - len(tokens))]
    return {t: i for i, t in enumerate(tokens)}


def train_tokenizer(texts: Sequence[str], vocab_size: int):
    """A WordPiece tokenizer built locally with ``tokenizers`` (vocabulary: :func:`wordpiece_vocab`),
    wrapped as ``BertTokenizerFast``; unseen or misspelt words fall back to character pieces."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from transformers import BertTokenizerFast

    vocab = wordpiece_vocab(texts, vocab_size)
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    tok.decoder = decoders.WordPiece()
    return BertTokenizerFast(tokenizer_object=tok, do_lower_case=True)


def bpe_merges(texts: Sequence[str], vocab_size: int) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """Byte-level BPE (Sennrich et al. 2016; GPT-2/RoBERTa byte alphabet) learnt from ``texts``: vocabulary
    (special tokens, the 256 byte symbols, one token per merge, ``<mask>`` last) and merges.

    Deterministic by construction: the most frequent pair wins, ties go to the lexicographically smallest
    pair. (``tokenizers``' ``BpeTrainer`` gave identical results in three processes here, but its tie order
    is unspecified, and its WordPiece trainer did vary per process, see :func:`wordpiece_vocab`.)
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
