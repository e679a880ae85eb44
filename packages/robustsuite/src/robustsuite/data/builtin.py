"""The builtin datasets (``builtin:<name>``): shipped real data and scikit-learn's bundled digits, offline.

Ids are the index in the original set (scikit-learn's ``load_digits``, the official Fashion-MNIST files, the
shipped corpus), WordNet synset offsets, or what :mod:`robustsuite.data.wordnet` says for the WordNet tasks.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from robustsuite_common.experiment import Split
from robustsuite_common.ood import photo_patches

from .dataset import Dataset, from_arrays, read_json_xz

if TYPE_CHECKING:
    import torch
CORPORA_FILE = Path(__file__).parents[1] / "resources" / "sentiment_corpora.json.xz"


def _digits_arrays() -> tuple[torch.Tensor, np.ndarray]:
    import torch
    from sklearn.datasets import load_digits

    d = load_digits()  # a Bunch (sklearn's stubs also allow the return_X_y tuple)
    x = torch.tensor(d.images / 16.0, dtype=torch.float32).unsqueeze(1)  # pyright: ignore[reportAttributeAccessIssue]
    return x, d.target.astype(np.int64)  # pyright: ignore[reportAttributeAccessIssue]


def digits() -> Dataset:
    """scikit-learn's bundled 8×8 handwritten digits (1,797 real images), split 60/20/20 stratified."""
    x, y = _digits_arrays()
    return from_arrays("builtin:digits", "vision", [str(i) for i in range(10)], x, y, source="scikit-learn digits")


def ood_patches(n: int = 360, seed: int = 0) -> torch.Tensor:
    """Out-of-distribution 8×8 grey images: random patches of scikit-learn's sample photographs
    (:func:`robustsuite_common.ood.photo_patches`, patches of 16–48 pixels, grey taken in float32)."""
    return photo_patches(n=n, seed=seed, sizes=(16, 49), grey="float32")


def _ood(x: torch.Tensor) -> Split:
    import torch
    return Split(x, torch.full((len(x),), -1, dtype=torch.int64), tuple(range(len(x))))


def digits_osr(known: int = 8) -> Dataset:
    """Open-set digits: classes ``0..known-1`` known; the rest held out as ``extras["open_set"]``.

    ``extras["ood"]`` holds photograph patches (:func:`ood_patches`) with label -1.
    """
    import torch
    x, y = _digits_arrays()
    keep = y < known
    classes = [str(i) for i in range(10)]
    kept, rest = np.flatnonzero(keep), np.flatnonzero(~keep)
    base = from_arrays("builtin:digits-osr", "vision", classes[:known], x[torch.as_tensor(kept)], y[keep],
                       ids=tuple(int(i) for i in kept))
    open_set = Split(x[torch.as_tensor(rest)], torch.as_tensor(y[rest]), tuple(int(i) for i in rest), tuple(classes))
    return Dataset(base.name, "vision", base.classes, base.train, base.val, base.test,
                   {"open_set": open_set, "ood": _ood(ood_patches())}, source="scikit-learn digits")


def _corpus(kind: str, name: str) -> Dataset:
    c = read_json_xz(CORPORA_FILE)[kind]
    return from_arrays(name, "text", c["classes"], c["text"], np.asarray(c["label"]),
                       source=f"shipped generated {kind} corpus ({len(c['text']):,} sentences)")


def sentiment_mini() -> Dataset:
    """4,000 generated binary sentiment sentences (negation, contrast, neither/nor; 4 % label noise), shipped."""
    return _corpus("sentiment", "builtin:sentiment-mini")


def sentiment_mini_multi() -> Dataset:
    """4,000 generated 4-class emotion sentences (joy, sadness, anger, fear), shipped."""
    return _corpus("emotion", "builtin:sentiment-mini-multi")


def fashion_mnist(root: str | Path | None = None, *, full: bool | None = None) -> Dataset:
    """Fashion-MNIST (Xiao et al. 2017, MIT licence), (N, 1, 28, 28) floats in [0, 1], 10 classes.

    The shipped stratified subset (9,000/1,000/2,000 train/val/test) is used unless the official IDX files are
    found (``root``, ``$ROBUSTSUITE_DATA`` or Debian's ``/usr/share/datasets/fashion-mnist``): then the full
    55,000/5,000/10,000 split, each split starting with the shipped subset in the same order, so
    ``split.head(n)`` is identical either way. ``full=False`` forces the subset, ``full=True`` requires the
    files. ``Dataset.source`` says which was used; ids are indices in the official files.
    """
    import torch

    from .fashion import CLASSES, load_arrays

    arrays, source = load_arrays(root, full=full)
    s = {name: Split(torch.from_numpy(x.astype(np.float32) / 255.0).unsqueeze(1), torch.from_numpy(y),
                     tuple(int(i) for i in ids), CLASSES) for name, (x, y, ids) in arrays.items()}
    return Dataset("builtin:fashion-mnist", "vision", CLASSES, s["train"], s["val"], s["test"], source=source)


def _upsampled_digits(size: int = 28) -> torch.Tensor:
    import torch
    x, _ = _digits_arrays()
    return torch.nn.functional.interpolate(x, size=(size, size), mode="bilinear", align_corners=False).clamp(0, 1)


def fashion_mnist_osr(root: str | Path | None = None, *, full: bool | None = None, known: int = 6) -> Dataset:
    """Open-set Fashion-MNIST: classes ``0..known-1`` (default 0–5) known; test images of the other classes
    as ``extras["open_set"]``; ``extras["ood"]`` = scikit-learn's 1,797 8×8 digits upsampled (bilinear) to
    28×28, label -1. Splits keep the order of :func:`fashion_mnist` (so ``head(n)`` is source-independent)."""
    from robustsuite_common.checks import check_int

    from .fashion import CLASSES

    check_int("known", known, ge=2, le=len(CLASSES) - 1)
    base = fashion_mnist(root, full=full)

    def keep(split: Split, mask: torch.Tensor, names: tuple[str, ...]) -> Split:
        return dataclasses.replace(split.select(np.flatnonzero(mask.numpy())), label_names=names)

    t, names = base.test, tuple(base.classes[:known])
    return Dataset("builtin:fashion-mnist-osr", "vision", names, keep(base.train, base.train.y < known, names),
                   keep(base.val, base.val.y < known, names), keep(t, t.y < known, names),
                   {"open_set": keep(t, t.y >= known, tuple(CLASSES)), "ood": _ood(_upsampled_digits())},
                   source=base.source)


def wordnet_topics() -> Dataset:
    """WordNet 3.0 noun glosses (definition + example sentences, cased) labelled by 8 lexicographer files
    (artifact, person, plant, animal, act, communication, location, food); balanced 14,000/1,000/2,000
    train/val/test split shipped in the package (WordNet 3.0 licence); ids are synset offsets."""
    import torch

    from .wordnet import topics

    t = topics()
    classes = tuple(t["classes"])
    s = {k: Split(list(t[k]["text"]), torch.tensor(t[k]["label"], dtype=torch.int64), tuple(t[k]["offset"]), classes)
         for k in ("train", "val", "test")}
    return Dataset("builtin:wordnet-topics", "text", classes, s["train"], s["val"], s["test"],
                   source="shipped balanced subset of WordNet 3.0 noun glosses")


def _wordnet_task(task: str, name: str, source: str) -> Dataset:
    from .wordnet import task_classes, task_split

    classes = task_classes(task)
    s = {k: Split(*task_split(task, k), classes) for k in ("train", "val", "test")}
    return Dataset(f"builtin:{name}", "text", classes, s["train"], s["val"], s["test"], source=source)


BUILTIN_DATASETS = {
    "fashion-mnist": (fashion_mnist, "Fashion-MNIST, 10 classes, 28×28 (shipped 9k/1k/2k subset; full 55k/5k/10k "
                                     "when the IDX files are found)"),
    "fashion-mnist-osr": (fashion_mnist_osr, "Fashion-MNIST classes 0–5 known; 6–9 as extras['open_set']; "
                                             "upsampled 8×8 digits as extras['ood']"),
    "wordnet-topics": (wordnet_topics, "WordNet 3.0 noun glosses, 8 lexicographer-file topics, 14k/1k/2k "
                                       "(shipped)"),
    "wordnet-pairs": (lambda: _wordnet_task("pairs", "wordnet-pairs", "shipped WordNet 3.0 noun definitions with "
                                            "topic claims (entailed or contradicted)"),
                      "WordNet 3.0 topic claims: a noun definition and 'It is <topic>.', entailment vs "
                      "contradiction (2 classes), 6k/400/1k (shipped; x = (premise, hypothesis))"),
    "wordnet-multilabel": (lambda: _wordnet_task("multilabel", "wordnet-multilabel", "shipped WordNet 3.0 noun lemmas "
                                                 "with their topics"),
                           "WordNet 3.0 noun lemma entries, multi-label over 8 topics, 5k/400/1k (shipped; y = 0/1 "
                           "matrix)"),
    "wordnet-pos": (lambda: _wordnet_task("tagging", "wordnet-pos", "shipped WordNet 3.0 example sentences, lexicon "
                                          "POS tags"),
                    "WordNet 3.0 example sentences, POS tags from the lexicon (NOUN/VERB/ADJ/ADV), 5k/400/1k "
                    "(shipped; x = token lists, y = padded tags, -1 not scored)"),
    "digits": (digits, "scikit-learn 8×8 digits, 10 classes, 1,797 images (real data)"),
    "digits-osr": (digits_osr, "digits 0–7 known; 8–9 as extras['open_set']; photo patches as extras['ood']"),
    "sentiment-mini": (sentiment_mini, "4,000 generated binary sentiment sentences (4 % label noise; shipped)"),
    "sentiment-mini-multi": (sentiment_mini_multi, "4,000 generated 4-class emotion sentences (shipped)"),
}
