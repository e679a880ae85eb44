"""WordNet 3.0 noun glosses labelled by lexicographer file, for ``builtin:wordnet-topics``.

Each sample is a noun synset's gloss exactly as WordNet writes it (definition and its quoted example
sentences, cased), labelled by the lexicographer file the synset belongs to (``noun.artifact`` ...). A
balanced subset of :data:`CLASSES` is shipped (``resources/wordnet_topics.json.xz``, WordNet 3.0 licence in
``resources/LICENSE-WordNet``) and rebuilt from Debian's ``wordnet-base`` files by ``tools/build_builtin.py``
(:func:`build_topics`).
"""

from __future__ import annotations

import json
import lzma
import os
from pathlib import Path

import numpy as np

from .errors import DatasetSpecError

RESOURCES = Path(__file__).parent / "resources"
TOPICS_FILE = RESOURCES / "wordnet_topics.json.xz"
DEBIAN_DIR = Path("/usr/share/wordnet")
# lexicographer file numbers of the noun files (WordNet's lexnames(5WN) table, fixed since WordNet 1.5)
LEXNAMES = {3: "Tops", 4: "act", 5: "animal", 6: "artifact", 7: "attribute", 8: "body", 9: "cognition",
            10: "communication", 11: "event", 12: "feeling", 13: "food", 14: "group", 15: "location",
            16: "motive", 17: "object", 18: "person", 19: "phenomenon", 20: "plant", 21: "possession",
            22: "process", 23: "quantity", 24: "relation", 25: "shape", 26: "state", 27: "substance", 28: "time"}
CLASSES = ("artifact", "person", "plant", "animal", "act", "communication", "location", "food")
PER_CLASS = {"train": 1750, "val": 125, "test": 250}


def parse_noun_glosses(path: str | Path) -> list[tuple[int, str, str]]:
    """``(synset offset, lexicographer file name, gloss)`` for every synset of a WordNet ``data.noun`` file.

    Format (wndb(5WN)): ``offset lex_filenum ss_type w_cnt word lex_id ... | gloss``; licence lines start
    with two spaces.
    """
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.startswith("  ") or not line.strip():
                continue
            head, sep, gloss = line.partition(" | ")
            fields = head.split()
            if not sep or len(fields) < 4 or not fields[0].isdigit() or not fields[1].isdigit():
                raise DatasetSpecError(f"{path}:{lineno}: not a WordNet data.noun line")
            lex = LEXNAMES.get(int(fields[1]))
            if lex is None:
                raise DatasetSpecError(f"{path}:{lineno}: lexicographer file {fields[1]} is not a noun file")
            out.append((int(fields[0]), lex, gloss.strip()))
    return out


def topics_from_glosses(glosses: list[tuple[int, str, str]], seed: int = 0) -> dict:
    """The balanced split: per class of :data:`CLASSES`, :data:`PER_CLASS` glosses drawn at random (synsets
    sorted by offset first; glosses that occur twice are dropped), each split shuffled."""
    counts: dict[str, int] = {}
    for _, _, g in glosses:
        counts[g] = counts.get(g, 0) + 1
    rng = np.random.default_rng(seed)
    need = sum(PER_CLASS.values())
    parts: dict[str, list[tuple[int, str, int]]] = {s: [] for s in PER_CLASS}
    for label, name in enumerate(CLASSES):
        pool = sorted((off, g) for off, lex, g in glosses if lex == name and counts[g] == 1)
        if len(pool) < need:
            raise DatasetSpecError(f"noun.{name} has {len(pool)} unique glosses, fewer than {need}")
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


def wordnet_dir() -> Path | None:
    """``$ROBUSTSUITE_WORDNET`` or Debian's ``/usr/share/wordnet`` if it holds ``data.noun``."""
    for cand in (os.environ.get("ROBUSTSUITE_WORDNET"), DEBIAN_DIR):
        if cand and (Path(cand) / "data.noun").is_file():
            return Path(cand)
    return None


def encode(topics: dict) -> bytes:
    """Canonical bytes of the shipped file (sorted keys, UTF-8, xz): same content, same SHA-256."""
    blob = json.dumps(topics, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return lzma.compress(blob, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=9)


def build_topics(directory: str | Path, out: Path = TOPICS_FILE, seed: int = 0) -> Path:
    """Rebuild the shipped file from ``<directory>/data.noun``."""
    topics = topics_from_glosses(parse_noun_glosses(Path(directory) / "data.noun"), seed=seed)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    tmp.write_bytes(encode(topics))
    os.replace(tmp, out)
    return out


def load_topics(path: Path = TOPICS_FILE) -> dict:
    return json.loads(lzma.decompress(path.read_bytes()).decode("utf-8"))
