"""Fashion-MNIST (Xiao, Rasul & Vollgraf 2017, MIT licence) for ``builtin:fashion-mnist(-osr)``.

The package ships a stratified subset (``resources/fashion_mnist_subset.npz``: 9,000 train, 1,000 val and
2,000 test images as uint8) together with the index order of the *full* split into the four official IDX
files. When the IDX files are found (an explicit ``root``, ``$ROBUSTSUITE_DATA``, or Debian's
``dataset-fashion-mnist`` path) the full data is used: 55,000 train / 5,000 val / 10,000 test, each split
starting with the shipped subset in the same order, so ``split.head(n)`` is the same data either way.
The subset and index order are written by ``tools/build/build_builtin.py``. Each image's id is its index in
the official file it comes from (train/val: the training file, test: the t10k file).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

from ..errors import DatasetSpecError
from .idx import find_idx, read_idx

CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
           "Ankle boot")
RESOURCES = Path(__file__).parents[1] / "resources"
SUBSET_FILE = RESOURCES / "fashion_mnist_subset.npz"
DEBIAN_DIR = Path("/usr/share/datasets/fashion-mnist")
_STEMS = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
          "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
SPLITS = ("train", "val", "test")


def idx_dir(root: str | Path | None = None) -> Path | None:
    """The directory holding the Fashion-MNIST IDX files: ``root``, else ``$ROBUSTSUITE_DATA`` (itself or its
    ``fashion-mnist`` subfolder), else Debian's path; ``None`` when none has them. An explicit ``root`` without
    the files raises :class:`DatasetSpecError`."""
    if root is not None:
        root = Path(root)
        for cand in (root, root / "fashion-mnist"):
            if _has_idx(cand):
                return cand
        raise DatasetSpecError(f"root={str(root)!r} holds no Fashion-MNIST IDX files (train-images-idx3-ubyte[.gz], "
                               "train-labels-idx1-ubyte[.gz], t10k-images-idx3-ubyte[.gz], t10k-labels-idx1-ubyte[.gz])")
    env = os.environ.get("ROBUSTSUITE_DATA")
    candidates = [Path(env), Path(env) / "fashion-mnist"] if env else []
    for cand in [*candidates, DEBIAN_DIR]:
        if _has_idx(cand):
            return cand
    return None


def _has_idx(directory: Path) -> bool:
    try:
        for stems in _STEMS.values():
            for stem in stems:
                find_idx(directory, stem)
    except DatasetSpecError:
        return False
    return True


def read_official(directory: str | Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{"train": (images uint8 (60000, 28, 28), labels), "test": (..., (10000,))}`` from the IDX files
    (read-only arrays, cached per directory and file modification time)."""
    directory = Path(directory)
    stamp = tuple(find_idx(directory, stem).stat().st_mtime_ns for stems in _STEMS.values() for stem in stems)
    return _read_official(directory.resolve(), stamp)


@functools.lru_cache(maxsize=2)
def _read_official(directory: Path, _stamp: tuple) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    out = {}
    for part, (img_stem, lab_stem) in _STEMS.items():
        x = read_idx(find_idx(directory, img_stem))
        y = read_idx(find_idx(directory, lab_stem)).astype(np.int64)
        if x.ndim != 3 or x.shape[1:] != (28, 28) or x.dtype != np.uint8 or len(x) != len(y):
            raise DatasetSpecError(f"{directory}: {img_stem} is not a uint8 (N, 28, 28) image file matching its labels")
        x.setflags(write=False)
        y.setflags(write=False)
        out[part] = (x, y)
    return out


def load_shipped(path: Path = SUBSET_FILE) -> dict[str, np.ndarray]:
    """The arrays of the shipped file (read-only, cached per file and modification time)."""
    path = Path(path)
    return _load_shipped(path.resolve(), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=2)
def _load_shipped(path: Path, _stamp: int) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        out = {k: z[k] for k in z.files}
    for v in out.values():
        v.setflags(write=False)
    return out


def load_arrays(root: str | Path | None = None, *, full: bool | None = None, shipped_file: Path = SUBSET_FILE
                ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], str]:
    """Per split ``(uint8 images (N, 28, 28), int64 labels, ids)`` and a sentence naming the source used (ids: the
    index of each image in the official file).

    ``full=None`` uses the full data when the IDX files are found, ``True`` requires them, ``False`` uses the
    shipped subset only.
    """
    if full not in (None, True, False):
        raise TypeError(f"full must be None, True or False, got {full!r}")
    shipped = load_shipped(shipped_file)
    directory = idx_dir(root) if full is not False else None
    if directory is None:
        if full:
            raise DatasetSpecError("full=True but no Fashion-MNIST IDX files were found: pass root=, set "
                                   f"$ROBUSTSUITE_DATA, or install Debian's dataset-fashion-mnist ({DEBIAN_DIR})")
        sizes = "/".join(f"{len(shipped[f'{s}_y']):,}" for s in SPLITS)
        return ({s: (shipped[f"{s}_x"], shipped[f"{s}_y"].astype(np.int64),
                     shipped[f"{s}_index"][:len(shipped[f"{s}_y"])].astype(np.int64)) for s in SPLITS},
                f"shipped stratified subset of Fashion-MNIST ({sizes} train/val/test images)")
    official = read_official(directory)
    out = {}
    for split in SPLITS:
        x, y = official["test" if split == "test" else "train"]
        idx = shipped[f"{split}_index"].astype(np.int64)
        n_ship = len(shipped[f"{split}_y"])
        if len(x) <= idx.max():
            raise DatasetSpecError(f"{directory}: the {split} IDX file has {len(x):,} images; the official "
                                   f"Fashion-MNIST file has {idx.max() + 1:,} (not the official files?)")
        if not np.array_equal(x[idx[:n_ship]], shipped[f"{split}_x"]):
            raise DatasetSpecError(f"{directory}: the IDX images differ from the shipped Fashion-MNIST subset "
                                   "(not the official Fashion-MNIST files?)")
        out[split] = (x[idx], y[idx], idx)
    sizes = "/".join(f"{len(out[s][1]):,}" for s in SPLITS)
    return out, f"full Fashion-MNIST from {directory} ({sizes} train/val/test images)"
