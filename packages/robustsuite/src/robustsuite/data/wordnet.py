"""The one reader of the shipped WordNet 3.0 data (WordNet licence in ``resources/LICENSE-WordNet``).

- ``resources/wordnet_topics.json.xz``: ``builtin:wordnet-topics``, noun glosses (definition and example
  sentences, cased, as WordNet writes them) labelled by 8 lexicographer files; ids are the synsets' offsets;
- ``resources_wordnet_tasks/wordnet_tasks.json.xz``: the Zéroe section's other task types, ``builtin:wordnet-pairs``
  (a definition and a claim of its topic, entailed or contradicted; ids ``"<premise offset>/<claimed topic>"``),
  ``builtin:wordnet-multilabel`` (lemma entries and the topics of their senses; ids are the lemmas) and
  ``builtin:wordnet-pos`` (example sentences as tokens, lexicon POS tags, -1 = not scored; ids are positions in
  the shipped split).

Both are written from Debian's ``wordnet-base`` by ``tools/build/`` (``_wordnet.py`` documents how every label
is derived); nothing here parses WordNet's own files.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .dataset import read_json_xz

if TYPE_CHECKING:
    import torch
ROOT = Path(__file__).parents[1]
TOPICS_FILE = ROOT / "resources" / "wordnet_topics.json.xz"
TASKS_FILE = ROOT / "resources_wordnet_tasks" / "wordnet_tasks.json.xz"
IGNORE = -1  # a token without one unambiguous POS: kept in the sentence, never scored


def topics(path: Path = TOPICS_FILE) -> dict:
    """``{"classes": [...], "train": {"offset", "text", "label"}, "val": ..., "test": ...}``."""
    return read_json_xz(path)


def tasks(path: Path = TASKS_FILE) -> dict:
    return read_json_xz(path)


def pad_tags(tags: Sequence[Sequence[int]]) -> torch.Tensor:
    """Ragged tag lists as an (N, max_len) int64 tensor padded with -1 (not scored)."""
    import torch
    width = max((len(t) for t in tags), default=0)
    out = torch.full((len(tags), width), IGNORE, dtype=torch.int64)
    for i, t in enumerate(tags):
        out[i, :len(t)] = torch.as_tensor(t, dtype=torch.int64)
    return out


def task_split(task: str, split: str, path: Path = TASKS_FILE) -> tuple[list, torch.Tensor, tuple]:
    """``(inputs, targets, ids)`` of a shipped split: pairs → (premise, hypothesis) tuples and class ids;
    multilabel → texts and an (N, 8) 0/1 matrix; tagging → token lists and padded tags (-1 = not scored)."""
    import torch
    t = tasks(path)[task][split]
    if task == "pairs":
        return (list(zip(t["premise"], t["hypothesis"], strict=True)), torch.tensor(t["label"], dtype=torch.int64),
                tuple(f"{o}/{c}" for o, c in zip(t["offset"], t["claim"], strict=True)))
    if task == "multilabel":
        y = torch.zeros(len(t["text"]), len(task_classes(task, path)), dtype=torch.int64)
        for i, labels in enumerate(t["labels"]):
            y[i, labels] = 1
        return list(t["text"]), y, tuple(t["lemma"])
    if task == "tagging":
        return [list(x) for x in t["tokens"]], pad_tags(t["tags"]), tuple(range(len(t["tokens"])))
    raise ValueError(f"task must be one of ['multilabel', 'pairs', 'tagging'], got {task!r}")


def task_classes(task: str, path: Path = TASKS_FILE) -> tuple[str, ...]:
    return tuple(tasks(path)[task]["classes"])
