"""Build-time WordNet 3.0: the one parser of WordNet's ``data.<pos>`` / ``index.<pos>`` files (wndb(5WN)) and the
shipped WordNet data built from Debian's ``wordnet-base``: ``builtin:wordnet-topics`` (noun glosses labelled by 8
lexicographer files) and the Zéroe benchmark's other task types (Eger & Benz 2020, §4.1): sentence-pair
inference, multi-label classification and token (POS) tagging. The package reads the results with
``robustsuite.data.wordnet``; nothing here runs at run time.

How the labels are derived (nothing is hand-labelled; ``tools/build/build_wordnet_tasks.py`` rebuilds everything):

* **Pairs** (``builtin:wordnet-pairs``, 2 classes ``contradiction`` / ``entailment``; NLI-like topic claims): premise
  = the definition of a noun synset S of one of the 8 topics of :data:`CLASSES`, hypothesis = ``"It is <phrase>."``
  claiming a topic (:data:`CLAIMS`): S's own (label 1, entailment) or one of the 7 others drawn uniformly (label 0,
  contradiction), by a coin per premise; the same number of premises from each topic. (A first design paired S's
  definition with its hypernym's: the tiny model stayed 0.16 above chance, too little to rank attackers on.)
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

* **Topics** (``builtin:wordnet-topics``): each noun synset's gloss exactly as WordNet writes it (definition and
  quoted example sentences, cased), labelled by its lexicographer file; per class of :data:`CLASSES`,
  :data:`PER_CLASS` glosses drawn at random (glosses that occur twice are dropped).

The splits are small and fixed (``resources_wordnet_tasks/wordnet_tasks.json.xz``); three tiny RoBERTa-style
models (the recipe of ``builtin:wordnet-roberta``, reusing its byte-level BPE tokenizer) are shipped as
safetensors beside it, with their own ``manifest.json`` (SHA-256 of every file, recipes, test accuracies).
"""

from __future__ import annotations

import json
import lzma
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DEBIAN_DIR = Path("/usr/share/wordnet")
# lexicographer file numbers of the noun files (WordNet's lexnames(5WN) table, fixed since WordNet 1.5)
LEXNAMES = {3: "Tops", 4: "act", 5: "animal", 6: "artifact", 7: "attribute", 8: "body", 9: "cognition",
            10: "communication", 11: "event", 12: "feeling", 13: "food", 14: "group", 15: "location",
            16: "motive", 17: "object", 18: "person", 19: "phenomenon", 20: "plant", 21: "possession",
            22: "process", 23: "quantity", 24: "relation", 25: "shape", 26: "state", 27: "substance", 28: "time"}
CLASSES = ("artifact", "person", "plant", "animal", "act", "communication", "location", "food")
PER_CLASS = {"train": 1750, "val": 125, "test": 250}
POS_FILES = ("noun", "verb", "adj", "adv")
POS_TAGS = ("NOUN", "VERB", "ADJ", "ADV")
PAIR_CLASSES = ("contradiction", "entailment")
# the hypothesis of a topic-claim pair, "It is <phrase>.", per topic of CLASSES
CLAIMS = {"artifact": "a man-made object", "person": "a person", "plant": "a plant", "animal": "an animal",
          "act": "an act or action", "communication": "a form of communication", "location": "a place",
          "food": "a food"}
SIZES = {"pairs": {"train": 6000, "val": 400, "test": 1000},
         "multilabel": {"train": 5000, "val": 400, "test": 1000},
         "tagging": {"train": 5000, "val": 400, "test": 1000}}
TOKEN_RE = re.compile(r"\w+(?:[-']\w+)*|[^\w\s]", re.UNICODE)
IGNORE = -1


class WordNetError(ValueError):
    """A WordNet file that does not follow wndb(5WN), or too few candidates for a split."""


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
                raise WordNetError(f"{path}:{lineno}: not a WordNet data line ({e})") from e
            if not sep:
                raise WordNetError(f"{path}:{lineno}: no gloss")
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
        raise WordNetError(f"only {len(rows)} candidates for {need} samples")
    pick = rng.choice(len(rows), need, replace=False)
    out, start = {}, 0
    for split, n in sizes.items():
        out[split] = [rows[i] for i in pick[start:start + n]]
        start += n
    return out


def claim(topic: str) -> str:
    """The hypothesis claiming ``topic`` (one of :data:`CLASSES`)."""
    return f"It is {CLAIMS[topic]}."


def build_pairs(nouns: list[Synset], seed: int = 0) -> dict:
    """Topic-claim pairs: a definition and a claim of its own topic (label 1) or of another (label 0)."""
    rng = np.random.default_rng(seed)
    defs = {s.offset: split_gloss(s.gloss)[0] for s in nouns}
    lex = {s.offset: s.lex for s in nouns}
    per = -(-sum(SIZES["pairs"].values()) // len(CLASSES))
    rows = []
    for topic in CLASSES:
        offsets = sorted(s.offset for s in nouns if s.lex == topic and defs[s.offset])
        for off in rng.choice(offsets, per, replace=False).tolist():
            if rng.random() < 0.5:
                rows.append((off, topic, 1))
            else:
                others = [c for c in CLASSES if c != topic]
                rows.append((off, others[int(rng.integers(len(others)))], 0))
    assert all((lex[o] == c) == bool(y) for o, c, y in rows)
    parts = _cut(rows, SIZES["pairs"], rng)
    out: dict = {"classes": list(PAIR_CLASSES)}
    for split, rs in parts.items():
        out[split] = {"premise": [defs[o] for o, _, _ in rs], "hypothesis": [claim(c) for _, c, _ in rs],
                      "label": [y for _, _, y in rs], "offset": [o for o, _, _ in rs], "claim": [c for _, c, _ in rs]}
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


def encode(obj: dict) -> bytes:
    """Canonical bytes of a shipped ``.json.xz`` file (sorted keys, UTF-8, xz): same content, same SHA-256."""
    blob = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return lzma.compress(blob, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=9)


def write_xz(obj: dict, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_bytes(encode(obj))
    os.replace(tmp, out)
    return out


def topics_from_glosses(glosses: list[tuple[int, str, str]], seed: int = 0) -> dict:
    """The balanced split: per class of :data:`CLASSES`, :data:`PER_CLASS` glosses drawn at random (synsets
    sorted by offset first; glosses that occur twice are dropped), each split shuffled."""
    """(The synsets' ``(offset, lexicographer file, gloss)`` come from :func:`parse_data` of ``data.noun``.)"""
    counts: dict[str, int] = {}
    for _, _, g in glosses:
        counts[g] = counts.get(g, 0) + 1
    rng = np.random.default_rng(seed)
    need = sum(PER_CLASS.values())
    parts: dict[str, list[tuple[int, str, int]]] = {s: [] for s in PER_CLASS}
    for label, name in enumerate(CLASSES):
        pool = sorted((off, g) for off, lex, g in glosses if lex == name and counts[g] == 1)
        if len(pool) < need:
            raise WordNetError(f"noun.{name} has {len(pool)} unique glosses, fewer than {need}")
        picked = rng.choice(len(pool), need, replace=False)
        start = 0
        for split, n in PER_CLASS.items():
            parts[split] += [(pool[i][0], pool[i][1], label) for i in picked[start:start + n]]
            start += n
    out: dict = {"classes": list(CLASSES), "source": "WordNet 3.0 data.noun"}
    for split, rows in parts.items():
        order = rng.permutation(len(rows))
        out[split] = {"offset": [rows[i][0] for i in order], "text": [rows[i][1] for i in order],
                      "label": [rows[i][2] for i in order]}
    return out


def build_topics(directory: str | Path, seed: int = 0) -> dict:
    """The content of ``resources/wordnet_topics.json.xz`` from ``<directory>/data.noun``."""
    return topics_from_glosses([(s.offset, s.lex, s.gloss) for s in parse_data(Path(directory) / "data.noun")], seed)
