"""Datasets: the embedded defaults (no network); user-data loaders live in :mod:`robustsuite.userdata`.

A :class:`Dataset` has train/val/test :class:`Split`\\ s plus named extras (``open_set``, ``ood``).
Vision inputs are float32 tensors in [0, 1] of shape (N, C, H, W); text inputs are lists of strings;
labels are int64 tensors (-1 for out-of-distribution samples that belong to no class).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from robustsuite_common.experiment import Split  # inputs, labels, the user's row ids and label names

from . import _corpus

Modality = Literal["vision", "text"]


@dataclass(frozen=True)
class Dataset:
    name: str
    modality: Modality
    classes: tuple[str, ...]
    train: Split
    val: Split
    test: Split
    extras: Mapping[str, Split] = field(default_factory=dict)
    source: str = ""  # where the data came from (e.g. the shipped subset or a full local copy), for the report

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    def summary(self) -> dict:
        return {
            "name": self.name,
            "modality": self.modality,
            "num_classes": self.num_classes,
            "source": self.source,
            "sizes": {k: len(s) for k, s in {"train": self.train, "val": self.val, "test": self.test,
                                              **self.extras}.items()},
        }


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


def _take(x, y: np.ndarray, idx: np.ndarray) -> Split:
    xs = x[torch.as_tensor(idx)] if isinstance(x, torch.Tensor) else [x[i] for i in idx]
    return Split(xs, torch.as_tensor(y[idx], dtype=torch.int64))


def _from_arrays(name: str, modality: Modality, classes: Sequence[str], x, y: np.ndarray,
                 seed: int = 0) -> Dataset:
    tr, va, te = stratified_split(y, seed=seed)
    return Dataset(name, modality, tuple(classes), _take(x, y, tr), _take(x, y, va), _take(x, y, te))


# --- embedded vision data -------------------------------------------------------------------------

def _digits_arrays() -> tuple[torch.Tensor, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    x = torch.tensor(d.images / 16.0, dtype=torch.float32).unsqueeze(1)  # (1797, 1, 8, 8) in [0, 1]
    return x, d.target.astype(np.int64)


def digits() -> Dataset:
    """scikit-learn's bundled 8×8 handwritten digits (1,797 real images), split 60/20/20 stratified."""
    x, y = _digits_arrays()
    return _from_arrays("builtin:digits", "vision", [str(i) for i in range(10)], x, y)


def ood_patches(n: int = 360, seed: int = 0) -> torch.Tensor:
    """Out-of-distribution 8×8 grey images: random patches of scikit-learn's sample photographs.

    Patches of 16–48 pixels are cut from ``china.jpg`` and ``flower.jpg`` (bundled in the scikit-learn
    wheel), converted to grey, area-resized to 8×8 and min-max scaled to [0, 1] like the digits.
    """
    from sklearn.datasets import load_sample_images

    rng = np.random.default_rng(seed)
    images = [torch.tensor(im, dtype=torch.float32).mean(-1) / 255.0 for im in load_sample_images().images]
    out = torch.empty(n, 1, 8, 8)
    for i in range(n):
        img = images[i % len(images)]
        size = int(rng.integers(16, 49))
        top = int(rng.integers(0, img.shape[0] - size))
        left = int(rng.integers(0, img.shape[1] - size))
        patch = img[top:top + size, left:left + size][None, None]
        small = torch.nn.functional.interpolate(patch, size=(8, 8), mode="area")[0]
        lo, hi = small.min(), small.max()
        out[i] = (small - lo) / (hi - lo).clamp_min(1e-6)
    return out


def digits_osr(known: int = 8) -> Dataset:
    """Open-set digits: classes ``0..known-1`` known; the rest held out as ``extras["open_set"]``.

    ``extras["ood"]`` holds photograph patches (:func:`ood_patches`) with label -1.
    """
    x, y = _digits_arrays()
    keep = y < known
    base = _from_arrays("builtin:digits-osr", "vision", [str(i) for i in range(known)], x[torch.as_tensor(keep)],
                        y[keep])
    open_set = Split(x[torch.as_tensor(~keep)], torch.as_tensor(y[~keep]))
    ood_x = ood_patches()
    ood = Split(ood_x, torch.full((len(ood_x),), -1, dtype=torch.int64))
    return Dataset(base.name, "vision", base.classes, base.train, base.val, base.test,
                   {"open_set": open_set, "ood": ood})


# --- embedded text data ---------------------------------------------------------------------------

def sentiment_mini(n: int = 4000) -> Dataset:
    """Binary sentiment corpus generated deterministically by :mod:`robustsuite._corpus` (4 % label noise)."""
    texts, labels = _corpus.generate("sentiment", n)
    return _from_arrays("builtin:sentiment-mini", "text", ["negative", "positive"], texts, np.asarray(labels))


def sentiment_mini_multi(n: int = 4000) -> Dataset:
    """Four-class emotion corpus (joy, sadness, anger, fear), generated like :func:`sentiment_mini`."""
    texts, labels = _corpus.generate("emotion", n)
    return _from_arrays("builtin:sentiment-mini-multi", "text", list(_corpus.EMOTIONS), texts,
                        np.asarray(labels))


# --- shipped real data: Fashion-MNIST and WordNet glosses -----------------------------------------

def _fashion_splits(root, full) -> tuple[dict[str, Split], str]:
    from . import _fashion_mnist

    arrays, source = _fashion_mnist.load_arrays(root, full=full)
    splits = {name: Split(torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1), torch.from_numpy(y))
              for name, (x, y) in arrays.items()}
    return splits, source


def fashion_mnist(root: str | Path | None = None, *, full: bool | None = None) -> Dataset:
    """Fashion-MNIST (Xiao et al. 2017, MIT licence), (N, 1, 28, 28) floats in [0, 1], 10 classes.

    The shipped stratified subset (9,000/1,000/2,000 train/val/test) is used unless the official IDX files are
    found (``root``, ``$ROBUSTSUITE_DATA`` or Debian's ``/usr/share/datasets/fashion-mnist``): then the full
    55,000/5,000/10,000 split, each split starting with the shipped subset in the same order, so
    ``split.head(n)`` is identical either way. ``full=False`` forces the subset, ``full=True`` requires the
    files. ``Dataset.source`` says which was used.
    """
    from ._fashion_mnist import CLASSES

    s, source = _fashion_splits(root, full)
    return Dataset("builtin:fashion-mnist", "vision", CLASSES, s["train"], s["val"], s["test"], source=source)


def _upsampled_digits(size: int = 28) -> torch.Tensor:
    x, _ = _digits_arrays()
    return torch.nn.functional.interpolate(x, size=(size, size), mode="bilinear", align_corners=False).clamp(0, 1)


def fashion_mnist_osr(root: str | Path | None = None, *, full: bool | None = None, known: int = 6) -> Dataset:
    """Open-set Fashion-MNIST: classes ``0..known-1`` (default 0–5) known; test images of the other classes
    as ``extras["open_set"]``; ``extras["ood"]`` = scikit-learn's 1,797 8×8 digits upsampled (bilinear) to
    28×28, label -1. Splits keep the order of :func:`fashion_mnist` (so ``head(n)`` is source-independent)."""
    from ._fashion_mnist import CLASSES

    if not isinstance(known, int) or not 2 <= known < len(CLASSES):
        raise ValueError(f"known must be an int in [2, {len(CLASSES) - 1}], got {known!r}")
    s, source = _fashion_splits(root, full)

    def keep(split: Split, mask: torch.Tensor) -> Split:
        return Split(split.x[mask], split.y[mask])

    parts = {k: keep(v, v.y < known) for k, v in s.items()}
    open_set = keep(s["test"], s["test"].y >= known)
    ood_x = _upsampled_digits()
    ood = Split(ood_x, torch.full((len(ood_x),), -1, dtype=torch.int64))
    return Dataset("builtin:fashion-mnist-osr", "vision", CLASSES[:known], parts["train"], parts["val"],
                   parts["test"], {"open_set": open_set, "ood": ood}, source=source)


def wordnet_topics() -> Dataset:
    """WordNet 3.0 noun glosses (definition + example sentences, cased) labelled by 8 lexicographer files
    (artifact, person, plant, animal, act, communication, location, food); balanced 14,000/1,000/2,000
    train/val/test split shipped in the package (WordNet 3.0 licence)."""
    from . import _wordnet

    t = _wordnet.load_topics()
    splits = {s: Split(list(t[s]["text"]), torch.tensor(t[s]["label"], dtype=torch.int64))
              for s in ("train", "val", "test")}
    return Dataset("builtin:wordnet-topics", "text", tuple(t["classes"]), splits["train"], splits["val"],
                   splits["test"], source="shipped balanced subset of WordNet 3.0 noun glosses")


# --- WordNet task datasets of the Zéroe section (pairs / multi-label / POS); see robustsuite._wordnet_tasks ----

def _wordnet_task(task: str, name: str, source: str) -> Dataset:
    from . import _wordnet_tasks

    splits = {s: Split(*_wordnet_tasks.task_split(task, s)) for s in ("train", "val", "test")}
    return Dataset(f"builtin:{name}", "text", _wordnet_tasks.task_classes(task), splits["train"], splits["val"],
                   splits["test"], source=source)


def wordnet_pairs() -> Dataset:
    """WordNet 3.0 definition pairs: ``x`` = (premise, hypothesis) tuples, ``y`` = 1 when the hypothesis
    defines a hypernym of the premise's synset, 0 for an unrelated synset of another lexicographer file."""
    return _wordnet_task("pairs", "wordnet-pairs", "shipped WordNet 3.0 noun definition pairs (hypernym or not)")


def wordnet_multilabel() -> Dataset:
    """WordNet 3.0 noun lemma entries (``"lemma: def 1; def 2"``), ``y`` = (N, 8) 0/1 topic matrix (the
    lexicographer files of the lemma's senses among the 8 classes of :func:`wordnet_topics`)."""
    return _wordnet_task("multilabel", "wordnet-multilabel", "shipped WordNet 3.0 noun lemmas with their topics")


def wordnet_pos() -> Dataset:
    """WordNet 3.0 example sentences as token lists; ``y`` = (N, max_len) POS tag ids (NOUN, VERB, ADJ, ADV)
    padded with -1; -1 also marks tokens without one unambiguous POS in WordNet's lexicon (not scored)."""
    return _wordnet_task("tagging", "wordnet-pos", "shipped WordNet 3.0 example sentences, lexicon POS tags")


WORDNET_TASK_DATASETS = {
    "wordnet-pairs": (wordnet_pairs, "WordNet 3.0 definition pairs, hypernym vs unrelated (2 classes), 6k/400/1k "
                                     "(shipped; x = (premise, hypothesis))"),
    "wordnet-multilabel": (wordnet_multilabel, "WordNet 3.0 noun lemma entries, multi-label over 8 topics, "
                                               "5k/400/1k (shipped; y = 0/1 matrix)"),
    "wordnet-pos": (wordnet_pos, "WordNet 3.0 example sentences, POS tags from the lexicon (NOUN/VERB/ADJ/ADV), "
                                 "5k/400/1k (shipped; x = token lists, y = padded tags, -1 not scored)"),
}


BUILTIN_DATASETS = {
    "fashion-mnist": (fashion_mnist, "Fashion-MNIST, 10 classes, 28×28 (shipped 9k/1k/2k subset; full 55k/5k/10k "
                                     "when the IDX files are found)"),
    "fashion-mnist-osr": (fashion_mnist_osr, "Fashion-MNIST classes 0–5 known; 6–9 as extras['open_set']; "
                                             "upsampled 8×8 digits as extras['ood']"),
    "wordnet-topics": (wordnet_topics, "WordNet 3.0 noun glosses, 8 lexicographer-file topics, 14k/1k/2k "
                                       "(shipped)"),
    "digits": (digits, "scikit-learn 8×8 digits, 10 classes, 1,797 images (real data)"),
    "digits-osr": (digits_osr, "digits 0–7 known; 8–9 as extras['open_set']; photo patches as extras['ood']"),
    "sentiment-mini": (sentiment_mini, "4,000 generated binary sentiment sentences (4 % label noise)"),
    "sentiment-mini-multi": (sentiment_mini_multi, "4,000 generated 4-class emotion sentences"),
    **WORDNET_TASK_DATASETS,
}
