"""The dataset type every loader returns, fixed stratified splits, and a content fingerprint for unit identities.

A :class:`Dataset` has train/val/test :class:`~robustsuite_common.experiment.Split`\\ s plus named extras
(``open_set``, ``ood``). Vision inputs are float32 tensors in [0, 1] of shape (N, C, H, W); text inputs are lists of
strings (or of text pairs, or of token lists); labels are int64 tensors (-1 for out-of-distribution samples).
Every split carries the user's row ids (``Split.ids``: the row of a CSV/JSONL file, the file name in an image
folder, the index in the original set of builtin data — never the position in a shuffled split) and the label
names (``Split.label_names``) as the user wrote them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import lzma
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import numpy as np

from robustsuite_common.experiment import Split

if TYPE_CHECKING:
    pass

Modality = Literal["vision", "text"]
LabelKind = Literal["index", "name", "ordered"]


@dataclass(frozen=True)
class Dataset:
    """``label_kind``: ``"index"`` (integers, class indices as they are), ``"name"`` (strings, mapped onto a model's
    classes only through its ``id2label`` or explicit ``labels``), ``"ordered"`` (names in a documented order)."""

    name: str
    modality: Modality
    classes: tuple[str, ...]
    train: Split
    val: Split
    test: Split
    extras: Mapping[str, Split] = field(default_factory=dict)
    source: str = ""  # where the data came from (e.g. the shipped subset or a full local copy), for the report
    label_kind: LabelKind = "ordered"

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    def splits(self) -> dict[str, Split]:
        return {"train": self.train, "val": self.val, "test": self.test, **self.extras}

    def summary(self) -> dict:
        return {"name": self.name, "modality": self.modality, "num_classes": self.num_classes, "source": self.source,
                "sizes": {k: len(s) for k, s in self.splits().items()}}


@dataclass(frozen=True)
class UserDataset(Dataset):
    """A :class:`Dataset` read from the user's files (:mod:`robustsuite.data.user`)."""


def fingerprint(ds: Dataset) -> str:
    """SHA-256 of what was loaded: every split's inputs, labels, ids and label names, and the classes. Two
    different copies of "the same" dataset (the shipped Fashion-MNIST subset and the full set) differ."""
    import torch
    h = hashlib.sha256(json.dumps([ds.modality, list(ds.classes)]).encode())
    for name, s in sorted(ds.splits().items()):
        h.update(name.encode())
        for part in (s.x, s.y):
            if isinstance(part, torch.Tensor):
                t = part.detach().cpu().contiguous()
                h.update(f"{t.dtype}{tuple(t.shape)}".encode() + t.numpy().tobytes())
            else:
                h.update(json.dumps(list(part), ensure_ascii=False, default=str).encode())
        h.update(json.dumps([s.ids, s.label_names], default=str).encode())
    return h.hexdigest()


@functools.lru_cache(maxsize=4)
def read_json_xz(path: Path) -> dict:
    """The JSON content of a shipped ``.json.xz`` file (read once per process)."""
    return json.loads(lzma.decompress(Path(path).read_bytes()).decode("utf-8"))


def stratified_split(y: np.ndarray, fractions=(0.6, 0.2, 0.2), seed: int = 0) -> list[np.ndarray]:
    """Index arrays for a fixed stratified split (per class: shuffle, then cut by ``fractions``)."""
    rng = np.random.default_rng(seed)
    parts: list[list[int]] = [[] for _ in fractions]
    bounds = np.cumsum(fractions)[:-1]
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        rng.shuffle(idx)
        cuts = np.round(bounds * len(idx)).astype(int)
        for part, chunk in zip(parts, np.split(idx, cuts), strict=True):
            part.extend(chunk.tolist())
    return [rng.permutation(np.asarray(p, dtype=np.int64)) for p in parts]


def take(x, y: np.ndarray, idx: np.ndarray, ids: Sequence | None = None, names: Sequence[str] | None = None) -> Split:
    """The items ``idx`` of ``(x, y)``; their ids are ``ids[idx]`` (default: ``idx`` itself, the row in ``x``)."""
    import torch
    xs = x[torch.as_tensor(idx)] if isinstance(x, torch.Tensor) else [x[i] for i in idx]
    row_ids = tuple(int(i) for i in idx) if ids is None else tuple(ids[int(i)] for i in idx)
    return Split(xs, torch.as_tensor(np.asarray(y)[idx], dtype=torch.int64), row_ids,
                 None if names is None else tuple(names))


def from_arrays(name: str, modality: Modality, classes: Sequence[str], x, y: np.ndarray, *, ids: Sequence | None = None,
                seed: int = 0, **kw) -> Dataset:
    """A dataset split 60/20/20 stratified (fixed ``seed``); row ``i`` of ``x`` has id ``ids[i]`` (default ``i``)."""
    tr, va, te = stratified_split(np.asarray(y), seed=seed)
    cls = kw.pop("dataset_type", Dataset)
    return cls(name, modality, tuple(classes), *(take(x, y, p, ids, classes) for p in (tr, va, te)), **kw)
