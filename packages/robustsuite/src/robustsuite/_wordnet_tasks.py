"""WordNet 3.0 tasks for the Zéroe benchmark's other task types (Eger & Benz 2020, §4.1): sentence-pair
inference, multi-label classification and token (POS) tagging, built from Debian's ``wordnet-base`` files.

How the labels are derived (nothing is hand-labelled; ``tools/build_wordnet_tasks.py`` rebuilds everything):

* **Pairs** (``builtin:wordnet-pairs``, 2 classes ``not-hypernym`` / ``hypernym``): for a noun synset S with a
  hypernym H (pointer ``@``/``@i`` of ``data.noun``), premise = S's definition, hypothesis = H's definition,
  label 1 (the premise's concept *is a* hypothesis concept, an entailment); or hypothesis = the definition of a
  random noun synset from another lexicographer file that is not an ancestor of S, label 0. Classes balanced.
* **Multi-label** (``builtin:wordnet-multilabel``, the 8 topics of ``builtin:wordnet-topics``): a noun lemma's
  dictionary entry, ``"lemma: def 1; def 2; ..."`` (definitions of its noun senses that belong to one of the 8
  lexicographer files, in WordNet's sense order, at most 4), labelled with the set of those senses'
  lexicographer files (a 0/1 row of 8). Lemmas with several topics are drawn as often as single-topic ones.
* **Tagging** (``builtin:wordnet-pos``, tags NOUN / VERB / ADJ / ADV): the quoted example sentences of all
  synsets, split into word and punctuation tokens; a token gets a tag where its lower-cased form is a lemma of
  exactly one of ``index.noun``, ``index.verb``, ``index.adj``, ``index.adv`` (one unambiguous POS in WordNet's
  lexicon) and that is not an English function word (scikit-learn's ``ENGLISH_STOP_WORDS``: WordNet lists
  some of them as nouns, e.g. ``a`` = vitamin A, ``or`` = operating room). All other tokens — punctuation,
  function words, inflected forms that are not lemmas (``dogs``), forms listed under two or more POS
  (``run``) — carry tag -1: they stay in the sentence but are neither trained on nor scored. Sentences with fewer than 3 tagged tokens are excluded.

The splits are small and fixed (``resources_wordnet_tasks/wordnet_tasks.json.xz``); three tiny RoBERTa-style
models (the recipe of ``builtin:wordnet-roberta``, reusing its byte-level BPE tokenizer) are shipped as
safetensors beside it, with their own ``manifest.json`` (SHA-256 of every file, recipes, test accuracies).
"""

from __future__ import annotations

import json
import lzma
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch

from ._wordnet import CLASSES, LEXNAMES
from .errors import DatasetSpecError

RESOURCES = Path(__file__).parent / "resources_wordnet_tasks"
TASKS_FILE = RESOURCES / "wordnet_tasks.json.xz"
MODELS_DIR = RESOURCES / "models"
MANIFEST = RESOURCES / "manifest.json"
TOKENIZER_DIR = Path(__file__).parent / "resources" / "models" / "wordnet-roberta"  # reused, not copied
POS_FILES = ("noun", "verb", "adj", "adv")
POS_TAGS = ("NOUN", "VERB", "ADJ", "ADV")
PAIR_CLASSES = ("not-hypernym", "hypernym")
SIZES = {"pairs": {"train": 6000, "val": 400, "test": 1000},
         "multilabel": {"train": 5000, "val": 400, "test": 1000},
         "tagging": {"train": 5000, "val": 400, "test": 1000}}
TOKEN_RE = re.compile(r"\w+(?:[-']\w+)*|[^\w\s]", re.UNICODE)
IGNORE = -1


@dataclass(frozen=True)
class Synset:
    offset: int
    pos: str           # n, v, a, s, r
    lex: str           # lexicographer file name without its POS prefix (nouns only; "" otherwise)
    words: tuple[str, ...]
    hypernyms: tuple[int, ...]  # noun offsets (@ and @i)
    gloss: str


def parse_data(path: str | Path) -> list[Synset]:
    """Every synset of a WordNet ``data.<pos>`` file (format wndb(5WN))."""
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("  ") or not line.strip():
                continue
            head, sep, gloss = line.partition(" | ")
            t = head.split()
            try:
                w_cnt = int(t[3], 16)
                words = tuple(t[4 + 2 * k] for k in range(w_cnt))
                j = 4 + 2 * w_cnt
                p_cnt = int(t[j])
                ptrs = [t[j + 1 + 4 * k: j + 5 + 4 * k] for k in range(p_cnt)]
            except (IndexError, ValueError) as e:
                raise DatasetSpecError(f"{path}:{lineno}: not a WordNet data line ({e})") from e
            if not sep:
                raise DatasetSpecError(f"{path}:{lineno}: no gloss")
            hyper = tuple(int(p[1]) for p in ptrs if p[0] in ("@", "@i") and p[2] == "n")
            lex = LEXNAMES.get(int(t[1]), "") if t[2] == "n" else ""
            out.append(Synset(int(t[0]), t[2], lex, words, hyper, gloss.strip()))
    return out


def split_gloss(gloss: str) -> tuple[str, list[str]]:
    """``(definition, quoted example sentences)`` of a gloss: the definition is the text before the first
    ``"``-quoted example, without trailing ``;``."""
    examples = re.findall(r'"([^"]+)"', gloss)
    definition = gloss.split('"', 1)[0].strip().rstrip(";").strip()
    return definition, [e.strip() for e in examples if e.strip()]


def parse_index(path: str | Path) -> set[str]:
    """The lemmas of a WordNet ``index.<pos>`` file (collocations keep their underscores)."""
    with open(path, encoding="utf-8") as f:
        return {line.split(" ", 1)[0] for line in f if not line.startswith("  ") and line.strip()}


def tokenize(sentence: str) -> list[str]:
    """Word tokens (letters/digits, inner hyphens and apostrophes) and single punctuation marks."""
    return TOKEN_RE.findall(sentence)


def _cut(rows: list, sizes: dict[str, int], rng: np.random.Generator) -> dict[str, list]:
    need = sum(sizes.values())
    if len(rows) < need:
        raise DatasetSpecError(f"only {len(rows)} candidates for {need} samples")
    pick = rng.choice(len(rows), need, replace=False)
    out, start = {}, 0
    for split, n in sizes.items():
        out[split] = [rows[i] for i in pick[start:start + n]]
        start += n
    return out


def build_pairs(nouns: list[Synset], seed: int = 0) -> dict:
    """Hypernym pairs (label 1) and pairs with an unrelated synset of another lexicographer file (label 0)."""
    rng = np.random.default_rng(seed)
    by_off = {s.offset: s for s in nouns}
    defs = {s.offset: split_gloss(s.gloss)[0] for s in nouns}

    def ancestors(off: int) -> set[int]:
        seen, stack = set(), [off]
        while stack:
            for h in by_off[stack.pop()].hypernyms:
                if h not in seen:
                    seen.add(h)
                    stack.append(h)
        return seen

    cands = sorted(s.offset for s in nouns if s.hypernyms and defs[s.offset])
    pool = sorted(s.offset for s in nouns if defs[s.offset])
    rows = []
    for off in cands:  # one candidate per synset; its label decided by a coin, so classes stay balanced
        s = by_off[off]
        if rng.random() < 0.5:
            h = s.hypernyms[int(rng.integers(len(s.hypernyms)))]
            if defs.get(h):
                rows.append((off, h, 1))
            continue
        anc = ancestors(off)
        while True:
            o = pool[int(rng.integers(len(pool)))]
            if o != off and o not in anc and by_off[o].lex != s.lex:
                break
        rows.append((off, o, 0))
    parts = _cut(rows, SIZES["pairs"], rng)
    out: dict = {"classes": list(PAIR_CLASSES)}
    for split, rs in parts.items():
        out[split] = {"premise": [defs[a] for a, _, _ in rs], "hypothesis": [defs[b] for _, b, _ in rs],
                      "label": [y for _, _, y in rs], "offsets": [[a, b] for a, b, _ in rs]}
    return out


def build_multilabel(nouns: list[Synset], index_noun: Path, seed: int = 0) -> dict:
    """Noun lemma entries labelled with the set of topics (of :data:`CLASSES`) of their senses."""
    rng = np.random.default_rng(seed)
    by_off = {s.offset: s for s in nouns}
    single, multi = [], []
    with open(index_noun, encoding="utf-8") as f:
        for line in f:
            if line.startswith("  ") or not line.strip():
                continue
            t = line.split()
            lemma, n_senses = t[0], int(t[2])
            offs = [int(o) for o in t[-n_senses:]]
            senses = [by_off[o] for o in offs if by_off[o].lex in CLASSES][:4]
            if not senses:
                continue
            defs = [split_gloss(s.gloss)[0] for s in senses]
            text = f"{lemma.replace('_', ' ')}: " + "; ".join(defs)
            labels = sorted({CLASSES.index(s.lex) for s in senses})
            (multi if len(labels) > 1 else single).append((lemma, text, labels))
    need = sum(SIZES["multilabel"].values())
    half = min(need // 2, len(multi))
    rows = [multi[i] for i in sorted(rng.choice(len(multi), half, replace=False))]
    rows += [single[i] for i in sorted(rng.choice(len(single), need - half, replace=False))]
    rows = [rows[i] for i in rng.permutation(len(rows))]
    parts, start = {}, 0
    for split, n in SIZES["multilabel"].items():
        parts[split] = rows[start:start + n]
        start += n
    out: dict = {"classes": list(CLASSES)}
    for split, rs in parts.items():
        out[split] = {"lemma": [r[0] for r in rs], "text": [r[1] for r in rs], "labels": [r[2] for r in rs]}
    return out


def build_tagging(synsets: list[Synset], lemmas: dict[str, set[str]], seed: int = 0) -> dict:
    """Example sentences tokenised, each token tagged with its one POS in WordNet's lexicon or -1."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    rng = np.random.default_rng(seed)
    seen, rows = set(), []
    for s in synsets:
        for ex in split_gloss(s.gloss)[1]:
            if ex in seen:
                continue
            seen.add(ex)
            toks = tokenize(ex)
            tags = []
            for tok in toks:
                low = tok.lower()
                hits = [] if low in ENGLISH_STOP_WORDS else [k for k, pos in enumerate(POS_FILES) if low in lemmas[pos]]
                tags.append(hits[0] if len(hits) == 1 else IGNORE)
            if sum(t >= 0 for t in tags) >= 3 and len(toks) <= 40:
                rows.append((toks, tags))
    parts = _cut(rows, SIZES["tagging"], rng)
    out: dict = {"classes": list(POS_TAGS)}
    for split, rs in parts.items():
        out[split] = {"tokens": [r[0] for r in rs], "tags": [r[1] for r in rs]}
    return out


def build_tasks(directory: str | Path, seed: int = 0) -> dict:
    d = Path(directory)
    data = {pos: parse_data(d / f"data.{pos}") for pos in POS_FILES}
    lemmas = {pos: parse_index(d / f"index.{pos}") for pos in POS_FILES}
    return {"source": "WordNet 3.0 (data.* and index.* files)", "seed": seed,
            "pairs": build_pairs(data["noun"], seed),
            "multilabel": build_multilabel(data["noun"], d / "index.noun", seed),
            "tagging": build_tagging([s for pos in POS_FILES for s in data[pos]], lemmas, seed)}


def encode(tasks: dict) -> bytes:
    blob = json.dumps(tasks, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return lzma.compress(blob, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=9)


def write_tasks(tasks: dict, out: Path = TASKS_FILE) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_bytes(encode(tasks))
    os.replace(tmp, out)
    return out


_CACHE: dict[Path, dict] = {}


def load_tasks(path: Path = TASKS_FILE) -> dict:
    path = Path(path)
    if path not in _CACHE:
        _CACHE[path] = json.loads(lzma.decompress(path.read_bytes()).decode("utf-8"))
    return _CACHE[path]


def pad_tags(tags: Sequence[Sequence[int]]) -> torch.Tensor:
    """Ragged tag lists as an (N, max_len) int64 tensor padded with -1 (not scored)."""
    width = max((len(t) for t in tags), default=0)
    out = torch.full((len(tags), width), IGNORE, dtype=torch.int64)
    for i, t in enumerate(tags):
        out[i, :len(t)] = torch.as_tensor(t, dtype=torch.int64)
    return out


def unpad_tags(y: torch.Tensor, tokens: Sequence[Sequence[str]]) -> list[list[int]]:
    return [y[i, :len(t)].tolist() for i, t in enumerate(tokens)]


# --- models ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class TaskRecipe:
    """A tiny RoBERTa (the ``builtin:wordnet-roberta`` architecture) fine-tuned on one WordNet task.

    ``init_from``: the encoder starts from that shipped model's weights (our stand-in for the paper's pre-trained
    RoBERTa: trained on 14,000 WordNet glosses, so it knows the vocabulary and the topics); the task head is new.
    """

    name: str
    task: str                  # "pairs" | "multilabel" | "tagging"
    init_from: str | None = "wordnet-roberta"
    hidden_size: int = 64
    layers: int = 2
    heads: int = 2
    intermediate_size: int = 128
    max_length: int = 64       # = builtin:wordnet-roberta's (its position embeddings are reused)
    epochs: int = 4
    lr: float = 1e-3
    batch_size: int = 32
    n_train: int = 4000        # the first n_train items of the shipped train split (CPU budget of the build)
    seed: int = 0


TASK_RECIPES = {
    "wordnet-pairs-roberta": TaskRecipe("wordnet-pairs-roberta", "pairs"),
    "wordnet-multilabel-roberta": TaskRecipe("wordnet-multilabel-roberta", "multilabel"),
    "wordnet-pos-roberta": TaskRecipe("wordnet-pos-roberta", "tagging"),
}
TASK_DATASETS = {"pairs": "wordnet-pairs", "multilabel": "wordnet-multilabel", "tagging": "wordnet-pos"}


def shared_tokenizer(max_length: int):
    """The byte-level BPE tokenizer of ``builtin:wordnet-roberta`` (cased, accents and look-alikes kept)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(TOKENIZER_DIR), local_files_only=True)
    tok.model_max_length = max_length
    return tok


class _Wrapped:
    """Common parts: ``.model``, ``.tokenizer``, ``.device``, ``.to(device)``, batched no-grad calls."""

    def __init__(self, model, tokenizer, *, max_length: int, batch_size: int = 64):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    @property
    def num_classes(self) -> int:
        return int(self.model.config.num_labels)

    @property
    def labels(self) -> list[str]:
        return [str(self.model.config.id2label[i]) for i in range(self.num_classes)]

    def to(self, device) -> _Wrapped:
        self.model.to(device)
        return self


class PairClassifier(_Wrapped):
    """``list[(premise, hypothesis)] -> (N, K)`` logits (RoBERTa pair input ``<s> A </s></s> B </s>``)."""

    def encode(self, pairs: Sequence[tuple[str, str]]) -> dict[str, torch.Tensor]:
        enc = self.tokenizer([a for a, _ in pairs], [b for _, b in pairs], padding=True, truncation=True,
                             max_length=self.max_length, return_tensors="pt")
        return {k: v.to(self.device) for k, v in enc.items()}

    def __call__(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if isinstance(pairs, str):
            raise TypeError("pairs must be a list of (premise, hypothesis) tuples")
        pairs = list(pairs)
        out = [np.zeros((0, self.num_classes), np.float32)]
        with torch.no_grad():
            for i in range(0, len(pairs), self.batch_size):
                out.append(self.model(**self.encode(pairs[i:i + self.batch_size])).logits.float().cpu().numpy())
        return np.concatenate(out)


class MultiLabelClassifier(_Wrapped):
    """``list[str] -> (N, K)`` logits, one independent sigmoid per label (trained with BCE)."""

    def encode(self, texts: Sequence[str]) -> dict[str, torch.Tensor]:
        enc = self.tokenizer(list(texts), padding=True, truncation=True, max_length=self.max_length,
                             return_tensors="pt")
        return {k: v.to(self.device) for k, v in enc.items()}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("texts must be a list of strings, not a single string")
        texts = list(texts)
        out = [np.zeros((0, self.num_classes), np.float32)]
        with torch.no_grad():
            for i in range(0, len(texts), self.batch_size):
                out.append(self.model(**self.encode(texts[i:i + self.batch_size])).logits.float().cpu().numpy())
        return np.concatenate(out)


class TokenTagger(_Wrapped):
    """``list[list[str]] -> list[(n_i, K) logits]``: the tokens are joined by single spaces, and each token
    is read at its first sub-word (found from the tokenizer's character offsets), so a token that an attack
    split with a space (intrude) or that is cut off by ``max_length`` still gets exactly one row (cut-off
    tokens: zero logits, i.e. a uniform guess)."""

    def encode(self, sentences: Sequence[Sequence[str]]) -> tuple[dict[str, torch.Tensor], list[list[int]]]:
        texts, spans = [], []
        for toks in sentences:
            pos, sp = 0, []
            for t in toks:
                sp.append((pos, pos + len(t)))
                pos += len(t) + 1
            texts.append(" ".join(toks))
            spans.append(sp)
        enc = self.tokenizer(texts, padding=True, truncation=True, max_length=self.max_length,
                             return_tensors="pt", return_offsets_mapping=True)
        offsets = enc.pop("offset_mapping").tolist()
        firsts = []
        for sp, off in zip(spans, offsets, strict=True):
            first = [-1] * len(sp)
            w = 0
            for j, (a, b) in enumerate(off):
                if b <= a:  # special or padding token
                    continue
                while w < len(sp) and a >= sp[w][1]:
                    w += 1
                if w < len(sp) and first[w] < 0 and b > sp[w][0]:
                    first[w] = j
            firsts.append(first)
        return {k: v.to(self.device) for k, v in enc.items()}, firsts

    def __call__(self, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
        if isinstance(sentences, str) or any(isinstance(s, str) for s in sentences):
            raise TypeError("sentences must be a list of token lists")
        sents = [list(s) for s in sentences]
        out: list[np.ndarray] = []
        with torch.no_grad():
            for i in range(0, len(sents), self.batch_size):
                enc, firsts = self.encode(sents[i:i + self.batch_size])
                logits = self.model(**enc).logits.float().cpu().numpy()
                for z, first in zip(logits, firsts, strict=True):
                    rows = np.zeros((len(first), self.num_classes), np.float32)
                    ok = [k for k, j in enumerate(first) if j >= 0]
                    rows[ok] = z[[first[k] for k in ok]]
                    out.append(rows)
        return out


_WRAPPERS = {"pairs": PairClassifier, "multilabel": MultiLabelClassifier, "tagging": TokenTagger}


def _hf_model(recipe: TaskRecipe, tokenizer, classes: Sequence[str]):
    from transformers import RobertaConfig, RobertaForSequenceClassification, RobertaForTokenClassification

    config = RobertaConfig(vocab_size=len(tokenizer), hidden_size=recipe.hidden_size,
                           num_hidden_layers=recipe.layers, num_attention_heads=recipe.heads,
                           intermediate_size=recipe.intermediate_size,
                           max_position_embeddings=recipe.max_length + tokenizer.pad_token_id + 1,
                           type_vocab_size=1, pad_token_id=tokenizer.pad_token_id,
                           bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                           num_labels=len(classes), id2label=dict(enumerate(classes)),
                           label2id={c: i for i, c in enumerate(classes)},
                           problem_type="multi_label_classification" if recipe.task == "multilabel" else None)
    cls = RobertaForTokenClassification if recipe.task == "tagging" else RobertaForSequenceClassification
    return cls(config)


def task_split(task: str, split: str) -> tuple[list, torch.Tensor]:
    """``(inputs, targets)`` of a shipped split: pairs → (premise, hypothesis) tuples and class ids;
    multilabel → texts and an (N, 8) 0/1 matrix; tagging → token lists and padded tags (-1 = not scored)."""
    t = load_tasks()[task][split]
    if task == "pairs":
        return list(zip(t["premise"], t["hypothesis"], strict=True)), torch.tensor(t["label"], dtype=torch.int64)
    if task == "multilabel":
        y = torch.zeros(len(t["text"]), len(CLASSES), dtype=torch.int64)
        for i, labels in enumerate(t["labels"]):
            y[i, labels] = 1
        return list(t["text"]), y
    if task == "tagging":
        return [list(x) for x in t["tokens"]], pad_tags(t["tags"])
    raise ValueError(f"task must be one of {sorted(_WRAPPERS)}; got {task!r}")


def task_classes(task: str) -> tuple[str, ...]:
    return tuple(load_tasks()[task]["classes"])


@torch.enable_grad()
def train_task(recipe: TaskRecipe, log: Callable[[str], None] | None = None):
    """Train a task model from scratch (deterministic: fixed seeds, explicit generators); returns the wrapper."""
    from ._shipped import _one_cycle

    tokenizer = shared_tokenizer(recipe.max_length)
    x, y = task_split(recipe.task, "train")
    x, y = x[:recipe.n_train], y[:recipe.n_train]
    classes = task_classes(recipe.task)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.seed)
        model = _hf_model(recipe, tokenizer, classes)
    if recipe.init_from is not None:  # the encoder of a shipped model; the task head stays freshly initialised
        from safetensors.torch import load_file

        state = load_file(str(TOKENIZER_DIR.parent / recipe.init_from / "model.safetensors"))
        encoder = {k: v for k, v in state.items() if k.startswith("roberta.")}
        missing, unexpected = model.load_state_dict(encoder, strict=False)
        if unexpected or any(k.startswith("roberta.") for k in missing):
            raise ValueError(f"{recipe.init_from} does not match the task architecture: missing {missing}, "
                             f"unexpected {unexpected}")
    wrapper = _WRAPPERS[recipe.task](model, tokenizer, max_length=recipe.max_length)
    gen = torch.Generator().manual_seed(recipe.seed)
    steps = recipe.epochs * ((len(x) + recipe.batch_size - 1) // recipe.batch_size)
    opt, sched = _one_cycle(model.parameters(), recipe.lr, 0.01, steps)
    for epoch in range(recipe.epochs):
        model.train()
        perm = torch.randperm(len(x), generator=gen).tolist()
        total = 0.0
        for i in range(0, len(x), recipe.batch_size):
            idx = perm[i:i + recipe.batch_size]
            batch = [x[j] for j in idx]
            if recipe.task == "tagging":
                enc, firsts = wrapper.encode(batch)
                target = torch.full(enc["input_ids"].shape, -100, dtype=torch.int64)
                for r, (j, first) in enumerate(zip(idx, firsts, strict=True)):
                    for k, pos in enumerate(first):
                        if pos >= 0 and int(y[j, k]) >= 0:
                            target[r, pos] = y[j, k]
            else:
                enc = wrapper.encode(batch)
                target = y[idx].float() if recipe.task == "multilabel" else y[idx]
            with torch.random.fork_rng(devices=[]):  # dropout draws stay off the global stream
                torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
                out = model(**enc, labels=target)
            opt.zero_grad()
            out.loss.backward()
            opt.step()
            sched.step()
            total += out.loss.item() * len(idx)
        if log:
            log(f"{recipe.name}: epoch {epoch + 1}/{recipe.epochs} loss {total / len(x):.4f}")
    model.eval()
    return wrapper


def save_task_model(wrapper: _Wrapped, directory: Path) -> None:
    """``config.json`` + ``model.safetensors`` (the tokenizer is ``builtin:wordnet-roberta``'s)."""
    directory.mkdir(parents=True, exist_ok=True)
    wrapper.model.save_pretrained(directory, safe_serialization=True)


def load_task_model(name: str, directory: Path = MODELS_DIR) -> _Wrapped:
    """A shipped task model (safetensors; nothing trained at load time)."""
    from transformers import AutoModelForSequenceClassification, AutoModelForTokenClassification

    if name not in TASK_RECIPES:
        raise KeyError(f"no shipped WordNet task model {name!r}; known: {sorted(TASK_RECIPES)}")
    recipe = TASK_RECIPES[name]
    auto = AutoModelForTokenClassification if recipe.task == "tagging" else AutoModelForSequenceClassification
    model = auto.from_pretrained(str(directory / name), local_files_only=True)
    return _WRAPPERS[recipe.task](model, shared_tokenizer(recipe.max_length), max_length=recipe.max_length)


def correct_total(name: str, wrapper: _Wrapped, split: str = "test") -> tuple[int, int]:
    """Correct / scored counts on a shipped split: pairs: accuracy; multilabel: exact match (all 8 decisions
    sigmoid > 0.5 right); tagging: token accuracy over the tagged tokens (tag ≥ 0)."""
    task = TASK_RECIPES[name].task
    x, y = task_split(task, split)
    out = wrapper(x)
    if task == "pairs":
        return int((torch.as_tensor(out).argmax(1) == y).sum()), len(y)
    if task == "multilabel":
        return int(((torch.as_tensor(out) > 0).long() == y).all(1).sum()), len(y)
    right = total = 0
    for z, t in zip(out, unpad_tags(y, x), strict=True):
        t = np.asarray(t)
        m = t >= 0
        right += int((z.argmax(1)[m] == t[m]).sum())
        total += int(m.sum())
    return right, total


def recipe_dict(name: str) -> dict:
    return asdict(TASK_RECIPES[name])


def manifest(path: Path = MANIFEST) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))
