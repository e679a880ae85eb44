"""Datasets: the embedded defaults (no network); user-data loaders live in :mod:`robustsuite.userdata`.

A :class:`Dataset` has train/val/test :class:`Split`\\ s plus named extras (``open_set``, ``ood``).
Vision inputs are float32 tensors in [0, 1] of shape (N, C, H, W); text inputs are lists of strings;
labels are int64 tensors (-1 for out-of-distribution samples that belong to no class).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch

from . import _corpus

Modality = Literal["vision", "text"]


@dataclass(frozen=True)
class Split:
    """Inputs ``x`` (tensor or list of strings) with int64 labels ``y``."""

    x: torch.Tensor | list[str]
    y: torch.Tensor

    def __post_init__(self) -> None:
        if len(self.x) != len(self.y):
            raise ValueError(f"x and y lengths differ: {len(self.x)} != {len(self.y)}")

    def __len__(self) -> int:
        return len(self.y)

    def head(self, n: int) -> Split:
        """The first ``n`` samples (the split's order is already shuffled and stratified)."""
        return Split(self.x[:n], self.y[:n])


@dataclass(frozen=True)
class Dataset:
    name: str
    modality: Modality
    classes: tuple[str, ...]
    train: Split
    val: Split
    test: Split
    extras: Mapping[str, Split] = field(default_factory=dict)

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    def summary(self) -> dict:
        return {
            "name": self.name,
            "modality": self.modality,
            "num_classes": self.num_classes,
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


BUILTIN_DATASETS = {
    "digits": (digits, "scikit-learn 8×8 digits, 10 classes, 1,797 images (real data)"),
    "digits-osr": (digits_osr, "digits 0–7 known; 8–9 as extras['open_set']; photo patches as extras['ood']"),
    "sentiment-mini": (sentiment_mini, "4,000 generated binary sentiment sentences (4 % label noise)"),
    "sentiment-mini-multi": (sentiment_mini_multi, "4,000 generated 4-class emotion sentences"),
}
