"""Build-time data: the shipped Fashion-MNIST subset (with the full split's index order into the official IDX files)
and the generated sentiment corpora (:mod:`_corpus`), written so that a rebuild gives the same bytes."""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path

import _corpus
import numpy as np

from robustsuite.data.fashion import CLASSES, SPLITS, read_official

# per class: shipped train / shipped val / full val (shipped val included); test: shipped per class
SHIPPED_TRAIN, SHIPPED_VAL, FULL_VAL, SHIPPED_TEST = 900, 100, 500, 200
CORPORA = {"sentiment": ("negative", "positive"), "emotion": _corpus.EMOTIONS}


def _stratified_take(y: np.ndarray, per_class: int, rng: np.random.Generator) -> np.ndarray:
    """``per_class`` random indices of every class, shuffled together."""
    picked = [rng.choice(np.flatnonzero(y == c), per_class, replace=False) for c in range(len(CLASSES))]
    return rng.permutation(np.concatenate(picked))


def subset_arrays(official: Mapping[str, tuple[np.ndarray, np.ndarray]], seed: int = 0) -> dict[str, np.ndarray]:
    """The arrays of the shipped file: for each split the shipped images/labels, plus the full split's index
    order into the official files (``<split>_index``; train/val index the training file, test the test file),
    whose first entries are the shipped images."""
    rng = np.random.default_rng(seed)
    y_tr = official["train"][1]
    y_te = official["test"][1]
    pool = _stratified_take(y_tr, SHIPPED_TRAIN + SHIPPED_VAL, rng)
    val_mask = np.zeros(len(pool), dtype=bool)
    for c in range(len(CLASSES)):
        val_mask[np.flatnonzero(y_tr[pool] == c)[:SHIPPED_VAL]] = True
    ship_tr, ship_va = pool[~val_mask], pool[val_mask]
    rest = np.setdiff1d(np.arange(len(y_tr)), pool)
    extra_va = []
    for c in range(len(CLASSES)):
        extra_va.append(rng.choice(rest[y_tr[rest] == c], FULL_VAL - SHIPPED_VAL, replace=False))
    extra_va = rng.permutation(np.concatenate(extra_va))
    extra_tr = rng.permutation(np.setdiff1d(rest, extra_va))
    ship_te = _stratified_take(y_te, SHIPPED_TEST, rng)
    extra_te = rng.permutation(np.setdiff1d(np.arange(len(y_te)), ship_te))
    index = {"train": np.concatenate([ship_tr, extra_tr]), "val": np.concatenate([ship_va, extra_va]),
             "test": np.concatenate([ship_te, extra_te])}
    shipped = {"train": ship_tr, "val": ship_va, "test": ship_te}
    out: dict[str, np.ndarray] = {}
    for split in SPLITS:
        x, y = official["test" if split == "test" else "train"]
        out[f"{split}_x"] = x[shipped[split]]
        out[f"{split}_y"] = y[shipped[split]].astype(np.uint8)
        out[f"{split}_index"] = index[split].astype(np.uint16)
    return out


def write_npz(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """An ``.npz`` (LZMA-compressed zip) whose bytes depend only on ``arrays``: fixed entry timestamps and
    order, so rebuilding gives the same SHA-256 (``numpy.savez_compressed`` stamps the current time)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        for name in sorted(arrays):
            buf = io.BytesIO()
            np.lib.format.write_array(buf, np.ascontiguousarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_LZMA
            info.external_attr = 0o644 << 16
            zf.writestr(info, buf.getvalue())
    os.replace(tmp, path)


def build_subset(directory: str | Path, out: Path, seed: int = 0) -> Path:
    """Write the shipped subset file from the official IDX files in ``directory``."""
    write_npz(out, subset_arrays(read_official(directory), seed=seed))
    return out


def corpora(n: int = 4000) -> dict:
    """The content of ``resources/sentiment_corpora.json.xz``: per kind its classes, texts and labels."""
    out = {}
    for kind, classes in CORPORA.items():
        texts, labels = _corpus.generate(kind, n)
        out[kind] = {"classes": list(classes), "text": texts, "label": labels}
    return out
