"""Embedded models, trained on first use and cached, plus the text-classifier wrapper.

Cache layout: ``<cache>/models/<name>-<recipe hash>/`` holding the weights and ``manifest.json`` with the
SHA-256 of every file. The hash covers the training recipe, so a changed recipe trains a new model; a
missing, partial or corrupt entry (manifest absent or a hash mismatch) is rebuilt. A file lock keeps two
processes from training the same model at once.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn

from . import _shipped
from . import data as _data
from ._io import cache_dir, sha256_file, stable_hash, write_json

# --- vision ---------------------------------------------------------------------------------------


class DigitsCNN(nn.Module):
    """Small CNN for 8×8 grey digits in [0, 1]; input normalisation lives inside (RobustBench style)."""

    def __init__(self, num_classes: int = 10, width: int = 32):
        super().__init__()
        self.register_buffer("mean", torch.tensor(0.30))
        self.register_buffer("std", torch.tensor(0.40))
        self.features = nn.Sequential(
            nn.Conv2d(1, width, 3, padding=1), nn.ReLU(),
            nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(2 * width * 16, 128), nn.ReLU(),
        )
        self.head = nn.Linear(128, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features((x - self.mean) / self.std))


class FashionCNN(nn.Module):
    """Three-conv CNN with BatchNorm for grey or colour images of any size ≥ 4×4 (adaptive pooling), in [0, 1];
    input normalisation inside (RobustBench style). ~157k parameters for 1 channel and 10 classes. The
    BatchNorm layers are what DENT adapts (transduct-attack)."""

    def __init__(self, num_classes: int = 10, in_channels: int = 1, widths: tuple[int, int, int] = (16, 32, 64),
                 mean: float = 0.286, std: float = 0.353):
        super().__init__()
        self.register_buffer("mean", torch.tensor(float(mean)))
        self.register_buffer("std", torch.tensor(float(std)))
        a, b, c = widths
        self.features = nn.Sequential(
            nn.Conv2d(in_channels, a, 3, padding=1), nn.BatchNorm2d(a), nn.ReLU(), nn.MaxPool2d(2, ceil_mode=True),
            nn.Conv2d(a, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU(), nn.MaxPool2d(2, ceil_mode=True),
            nn.Conv2d(b, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(),
            nn.AdaptiveAvgPool2d(4), nn.Flatten(),
            nn.Linear(16 * c, 128), nn.ReLU(),
        )
        self.head = nn.Linear(128, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features((x - self.mean) / self.std))


ARCHITECTURES: dict[str, Callable[..., nn.Module]] = {"digits-cnn": DigitsCNN, "fashion-cnn": FashionCNN}


@dataclass(frozen=True)
class VisionRecipe:
    """How a builtin vision model is trained (every field enters the cache key)."""

    name: str
    dataset: str = "digits"   # a key of robustsuite.data.BUILTIN_DATASETS
    epochs: int = 40
    lr: float = 2e-3
    batch_size: int = 64
    weight_decay: float = 5e-4
    adversarial: bool = False
    eps: float = 0.1          # L∞ budget for PGD adversarial training (inputs in [0, 1])
    pgd_steps: int = 7
    pgd_step_size: float = 0.03
    seed: int = 0
    version: int = 2  # 2: trained single-threaded (bit-identical across machines)


VISION_RECIPES = {
    "digits-cnn": VisionRecipe("digits-cnn"),
    "digits-cnn-at": VisionRecipe("digits-cnn-at", epochs=40, adversarial=True),
    # open-set recognition: trained on the known classes 0–7 of builtin:digits-osr only
    "digits-osr-cnn": VisionRecipe("digits-osr-cnn", dataset="digits-osr"),
}


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


@torch.enable_grad()  # builtin models train on first use, possibly from a caller inside torch.no_grad()
def train_vision(recipe: VisionRecipe, dataset: _data.Dataset, progress: Callable[[int, int], None] | None = None
                 ) -> nn.Module:
    """Train a :class:`DigitsCNN` by ``recipe`` (standard or PGD adversarial training); deterministic."""
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
        if progress:
            progress(epoch + 1, recipe.epochs)
    return model.eval()


# --- text -----------------------------------------------------------------------------------------


class TextClassifier:
    """A Hugging Face sequence classifier as the text-classifier contract: ``list[str] -> (N, K)`` logits.

    It has TextAttack's ``ModelWrapper`` shape (``__call__``, ``model``, ``tokenizer``, ``get_grad``), so
    TextAttack recipes accept it directly.
    """

    def __init__(self, model, tokenizer, *, max_length: int | None = None, batch_size: int = 64,
                 max_length_cap: int = 512):
        self.model = model.eval()
        self.tokenizer = tokenizer
        if max_length is None:  # the tokenizer's own limit; "unset" tokenizers report a huge sentinel
            limit = getattr(tokenizer, "model_max_length", None)
            positions = getattr(model.config, "max_position_embeddings", None) or getattr(model.config, "n_positions", None)
            candidates = [v for v in (limit, positions, max_length_cap) if isinstance(v, int) and v > 0]
            max_length = min(candidates)
        if not isinstance(max_length, int) or max_length < 1:
            raise ValueError(f"max_length must be a positive integer, got {max_length!r}")
        self.max_length = max_length
        self.batch_size = batch_size
        if tokenizer.pad_token is None:  # GPT-2 family: pad with EOS (the model reads the last non-pad token)
            if tokenizer.eos_token is None:
                raise ValueError("tokenizer has neither a pad token nor an EOS token to pad batches with; "
                                 "set tokenizer.pad_token before wrapping it")
            tokenizer.pad_token = tokenizer.eos_token
        if getattr(model.config, "pad_token_id", None) is None:
            model.config.pad_token_id = tokenizer.pad_token_id

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def labels(self) -> list[str] | None:
        """The model's class names in id order (``config.id2label``), or ``None`` when they are only
        transformers' placeholders ``LABEL_0, LABEL_1, ...``."""
        id2label = getattr(self.model.config, "id2label", None) or {}
        names = [str(id2label.get(i, id2label.get(str(i), ""))) for i in range(self.num_classes)]
        if not all(names) or names == [f"LABEL_{i}" for i in range(self.num_classes)]:
            return None
        return names

    @property
    def num_classes(self) -> int:
        return int(self.model.config.num_labels)

    def encode(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        enc = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_length,
                             return_tensors="pt")
        return {k: v.to(self.device) for k, v in enc.items()}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("texts must be a list of strings, not a single string")
        texts = list(texts)
        out = []
        with torch.no_grad():
            for i in range(0, len(texts), self.batch_size):
                out.append(self.model(**self.encode(texts[i:i + self.batch_size])).logits.float().cpu())
        if not out:
            return np.zeros((0, self.num_classes), dtype=np.float32)
        return torch.cat(out).numpy()

    def get_grad(self, text: str) -> dict:
        """Gradient of the loss w.r.t. the word embeddings (TextAttack's ``ModelWrapper.get_grad``)."""
        emb_layer = self.model.get_input_embeddings()
        store: dict = {}

        def hook(_module, _inp, out):
            out.retain_grad()
            store["emb"] = out

        handle = emb_layer.register_forward_hook(hook)
        try:
            enc = self.encode([text])
            logits = self.model(**enc).logits
            loss = nn.functional.cross_entropy(logits, logits.argmax(-1))
            loss.backward()
        finally:
            handle.remove()
            self.model.zero_grad()
        return {"ids": enc["input_ids"][0].tolist(), "gradient": store["emb"].grad[0].cpu().numpy()}


@dataclass(frozen=True)
class TextRecipe:
    name: str
    dataset: str = "sentiment-mini"
    vocab_size: int = 2000
    hidden_size: int = 64
    layers: int = 2
    heads: int = 2
    intermediate_size: int = 128
    max_length: int = 48
    epochs: int = 10
    lr: float = 2e-3
    batch_size: int = 32
    seed: int = 0
    version: int = 3  # 2: deterministic WordPiece vocabulary; 3: trained single-threaded


TEXT_RECIPES = {"text-tiny": TextRecipe("text-tiny")}


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


@torch.enable_grad()
def train_text(recipe: TextRecipe, dataset: _data.Dataset, progress: Callable[[int, int], None] | None = None
               ) -> TextClassifier:
    """Train a tiny ``BertForSequenceClassification`` from scratch on ``dataset`` (deterministic)."""
    from transformers import BertConfig, BertForSequenceClassification

    tokenizer = train_tokenizer(list(dataset.train.x), recipe.vocab_size)
    config = BertConfig(vocab_size=len(tokenizer), hidden_size=recipe.hidden_size,
                        num_hidden_layers=recipe.layers, num_attention_heads=recipe.heads,
                        intermediate_size=recipe.intermediate_size, max_position_embeddings=recipe.max_length + 2,
                        num_labels=dataset.num_classes, id2label=dict(enumerate(dataset.classes)),
                        label2id={c: i for i, c in enumerate(dataset.classes)})
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.seed)
        model = BertForSequenceClassification(config)
    clf = TextClassifier(model, tokenizer, max_length=recipe.max_length)
    gen = torch.Generator().manual_seed(recipe.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=recipe.lr, weight_decay=0.01)
    texts, labels = list(dataset.train.x), dataset.train.y
    steps = recipe.epochs * ((len(texts) + recipe.batch_size - 1) // recipe.batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=recipe.lr, total_steps=steps, pct_start=0.1)
    for epoch in range(recipe.epochs):
        model.train()
        perm = torch.randperm(len(texts), generator=gen).tolist()
        for i in range(0, len(texts), recipe.batch_size):
            idx = perm[i:i + recipe.batch_size]
            with torch.random.fork_rng(devices=[]):  # dropout draws stay off the global stream
                torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
                out = model(**clf.encode([texts[j] for j in idx]), labels=labels[idx])
            opt.zero_grad()
            out.loss.backward()
            opt.step()
            sched.step()
        if progress:
            progress(epoch + 1, recipe.epochs)
    model.eval()
    return clf


def load_text_dir(path: Path, *, max_length: int = 64) -> TextClassifier:
    """A directory written by ``save_pretrained`` (model + tokenizer) as a :class:`TextClassifier`."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(str(path), local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    return TextClassifier(model, tokenizer, max_length=max_length)


# --- cache ----------------------------------------------------------------------------------------


def _entry_dir(recipe) -> Path:
    return cache_dir() / "models" / f"{recipe.name}-{stable_hash(asdict(recipe))}"


def _entry_ok(entry: Path) -> bool:
    manifest = entry / "manifest.json"
    if not manifest.is_file():
        return False
    try:
        files = json.loads(manifest.read_text())["files"]
        return all((entry / name).is_file() and sha256_file(entry / name) == digest
                   for name, digest in files.items())
    except (ValueError, KeyError, OSError):
        return False


def _publish(entry: Path, build: Callable[[Path], dict]) -> None:
    """Build into a temporary sibling directory, write the manifest, then swap it into place."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{entry.name}.", dir=entry.parent))
    try:
        meta = build(tmp)
        files = {p.name: sha256_file(p) for p in sorted(tmp.iterdir()) if p.is_file()}
        write_json(tmp / "manifest.json", {"files": files, **meta})
        if entry.exists():
            shutil.rmtree(entry)
        tmp.rename(entry)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _single_threaded(build: Callable[[Path], dict]) -> Callable[[Path], dict]:
    """Run ``build`` with one intra-op thread, then restore: float reductions then happen in the same order
    on every machine, so a builtin model is bit-identical wherever it is trained (measured: 1 and 2 threads
    gave text-tiny test accuracies of 90.5 % and 89.4 % from the same seed)."""

    def wrapped(tmp: Path) -> dict:
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return build(tmp)
        finally:
            torch.set_num_threads(before)

    return wrapped


def _cached(recipe, build: Callable[[Path], dict], load: Callable[[Path], object]):
    from filelock import FileLock

    entry = _entry_dir(recipe)
    entry.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(entry) + ".lock"):
        if not _entry_ok(entry):
            _publish(entry, _single_threaded(build))
    return load(entry)


def builtin_vision(name: str, *, progress: Callable[[int, int], None] | None = None) -> nn.Module:
    """``builtin:digits-cnn`` / ``builtin:digits-cnn-at``: trained on first use, then loaded from cache."""
    recipe = VISION_RECIPES[name]

    def build(tmp: Path) -> dict:
        ds = _data.BUILTIN_DATASETS[recipe.dataset][0]()
        model = train_vision(recipe, ds, progress)
        torch.save(model.state_dict(), tmp / "model.pt")
        with torch.no_grad():
            acc = (model(ds.test.x).argmax(1) == ds.test.y).double().mean().item()
        return {"recipe": asdict(recipe), "test_accuracy": acc, "num_classes": ds.num_classes}

    def load(entry: Path) -> nn.Module:
        model = DigitsCNN(json.loads((entry / "manifest.json").read_text())["num_classes"])
        model.load_state_dict(torch.load(entry / "model.pt", weights_only=True, map_location="cpu"))
        return model.eval()

    return _cached(recipe, build, load)


def builtin_text(name: str, *, progress: Callable[[int, int], None] | None = None) -> TextClassifier:
    """``builtin:text-tiny``: a tiny BERT trained on ``builtin:sentiment-mini``, cached via ``save_pretrained``."""
    recipe = TEXT_RECIPES[name]

    def build(tmp: Path) -> dict:
        ds = _data.BUILTIN_DATASETS[recipe.dataset][0]()
        clf = train_text(recipe, ds, progress)
        clf.model.save_pretrained(tmp, safe_serialization=True)
        clf.tokenizer.save_pretrained(tmp)
        acc = float((clf(list(ds.test.x)).argmax(1) == ds.test.y.numpy()).mean())
        return {"recipe": asdict(recipe), "test_accuracy": acc}

    return _cached(recipe, build, lambda entry: load_text_dir(entry, max_length=recipe.max_length))


SHIPPED_MODELS = _shipped.SHIPPED_MODELS

# --- WordNet task models of the Zéroe section (pairs / multi-label / POS tagger), weights in
# resources_wordnet_tasks/ with their own manifest; see robustsuite._wordnet_tasks and tools/build_wordnet_tasks.py
WORDNET_TASK_MODELS = ("wordnet-pairs-roberta", "wordnet-multilabel-roberta", "wordnet-pos-roberta")
SHIPPED_MODELS = {**SHIPPED_MODELS, **{n: ("text", n) for n in WORDNET_TASK_MODELS}}


def load_shipped(name: str) -> nn.Module | TextClassifier:
    """A builtin model shipped as weights in ``robustsuite/resources/models`` (``builtin:fashion-cnn`` ...,
    ``builtin:wordnet-roberta``), loaded from safetensors; see :mod:`robustsuite._shipped` for the recipes."""
    if name in WORDNET_TASK_MODELS:
        from . import _wordnet_tasks

        return _wordnet_tasks.load_task_model(name)
    return _shipped.load(name)


def builtin_manifest(name: str) -> dict | None:
    """The manifest (recipe, measured test accuracy) of a builtin model: for a shipped model its record in
    ``resources/manifest.json``; for a model trained on first use its cache entry's, if it has been trained."""
    if name in WORDNET_TASK_MODELS:
        from . import _wordnet_tasks

        return _wordnet_tasks.manifest()["models"].get(name)
    if name in SHIPPED_MODELS:
        return _shipped.manifest()["models"].get(name)
    recipe = VISION_RECIPES.get(name) or TEXT_RECIPES.get(name)
    if recipe is None:
        raise KeyError(name)
    entry = _entry_dir(recipe)
    return json.loads((entry / "manifest.json").read_text()) if _entry_ok(entry) else None
