"""Fashion-MNIST (Xiao, Rasul & Vollgraf 2017, MIT licence) for ``builtin:fashion-mnist(-osr)``.

The package ships a stratified subset (``resources/fashion_mnist_subset.npz``: 9,000 train, 1,000 val and
2,000 test images as uint8) together with the index order of the *full* split into the four official IDX
files. When the IDX files are found (an explicit ``root``, ``$ROBUSTSUITE_DATA``, or Debian's
``dataset-fashion-mnist`` path) the full data is used: 55,000 train / 5,000 val / 10,000 test, each split
starting with the shipped subset in the same order, so ``split.head(n)`` is the same data either way.
The subset and index order are written by ``tools/build_builtin.py`` (:func:`build_subset`).
"""

from __future__ import annotations

import functools
import os
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ._idx import find_idx, read_idx
from .errors import DatasetSpecError

CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
           "Ankle boot")
RESOURCES = Path(__file__).parent / "resources"
SUBSET_FILE = RESOURCES / "fashion_mnist_subset.npz"
DEBIAN_DIR = Path("/usr/share/datasets/fashion-mnist")
# per class: shipped train / shipped val / full val (shipped val included); test: shipped per class
SHIPPED_TRAIN, SHIPPED_VAL, FULL_VAL, SHIPPED_TEST = 900, 100, 500, 200
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
    import io

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


def build_subset(directory: str | Path, out: Path = SUBSET_FILE, seed: int = 0) -> Path:
    """Write the shipped subset file from the official IDX files in ``directory``."""
    write_npz(out, subset_arrays(read_official(directory), seed=seed))
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
                ) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], str]:
    """Per split ``(uint8 images (N, 28, 28), int64 labels)`` and a sentence naming the source used.

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
        return ({s: (shipped[f"{s}_x"], shipped[f"{s}_y"].astype(np.int64)) for s in SPLITS},
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
        out[split] = (x[idx], y[idx])
    sizes = "/".join(f"{len(out[s][1]):,}" for s in SPLITS)
    return out, f"full Fashion-MNIST from {directory} ({sizes} train/val/test images)"
