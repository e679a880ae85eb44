"""User datasets: CSV/JSONL, ``npz:``, ``imagefolder:``, ``idx:``, ``hf-disk:``, ``hf-datasets:``, CIFAR-10,
MNIST (spec syntax: :data:`robustsuite.data.DATASET_SPECS`).

Every loader validates what it reads before any work starts (shapes, value range, label set) and raises a
:class:`~robustsuite.errors.DatasetSpecError` naming the file and the problem. Options ride on the spec as a
query string: ``csv:reviews.csv?text=review&label=stars``, ``hf-disk:/data/sst2?split=validation``. Data
without fixed splits is split 60/20/20 stratified. Every split keeps each item's id in the user's data
(``Split.ids``): the 0-based data row of a CSV (header excluded) or JSONL file (non-empty lines), the index in
an npz array, IDX file, Hugging Face split or torchvision set, the file's path below the root of an image
folder; and the label names as written (``Split.label_names``).

Labels come in three kinds (:attr:`UserDataset.label_kind`):

- ``"index"``: integers, taken as class indices as they are;
- ``"name"``: strings (``"positive"``); indices are only assigned by :func:`align_labels`, through the model's
  own ``id2label`` or an explicit ``labels = [...]`` list — never by guessing (e.g. sorting);
- ``"ordered"``: names with a documented order (torchvision's ImageFolder: sorted folder names), used as
  is unless the model or the config names the labels.
"""

from __future__ import annotations

import csv
import functools
import io
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

from robustsuite_common.experiment import Split
from robustsuite_common.extras import optional_import

from ..errors import DatasetSpecError
from ..specs import parse_options as _parse_options
from .dataset import LabelKind, UserDataset, stratified_split, take

_SPLIT_ALIASES = {"train": {"train"}, "val": {"val", "valid", "validation", "dev"}, "test": {"test"}}
_IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp", ".ppm", ".pgm"}
_PARTS = ("train", "val", "test")


def parse_options(spec_value: str, allowed: Sequence[str], scheme: str) -> tuple[str, dict[str, str]]:
    return _parse_options(spec_value, allowed, scheme, DatasetSpecError)


MAX_CLASSES = 1_000_000  # integer labels at or above it cannot be class indices of any model's outputs


def _huge(v) -> bool:
    return abs(int(v)) >= 2**62


def _labels_to_index(raw: Sequence, where: str) -> tuple[np.ndarray, list[str], LabelKind]:
    """Integer labels stay indices; string labels keep their names (indices are provisional until aligned)."""
    if len(raw) == 0:
        raise DatasetSpecError(f"{where}: no labels")
    if all(isinstance(v, int | np.integer) or (isinstance(v, str) and v.strip().lstrip("-").isdigit()) for v in raw):
        ints = np.asarray([int(v) for v in raw], dtype=object if any(_huge(v) for v in raw) else np.int64)
        if ints.min() < 0:
            raise DatasetSpecError(f"{where}: integer labels must be >= 0 class indices, found {int(ints.min())}")
        if ints.max() >= MAX_CLASSES:  # before building one name per class (10**9 names: MemoryError)
            row = int(np.argmax(ints >= MAX_CLASSES))
            raise DatasetSpecError(f"{where}: row {row + 1} has label {int(ints[row])}: integer labels must be class "
                                   f"indices of the model's outputs (below {MAX_CLASSES:,})")
        return ints, [str(i) for i in range(int(ints.max()) + 1)], "index"
    if any(isinstance(v, float) for v in raw):
        raise DatasetSpecError(f"{where}: labels must be integers or names, found floats")
    classes = sorted({str(v) for v in raw})  # provisional order; align_labels maps names to the model's ids
    lookup = {c: i for i, c in enumerate(classes)}
    return np.asarray([lookup[str(v)] for v in raw], dtype=np.int64), classes, "name"


def _make(name, modality, classes, x, y, kind: LabelKind, split_of=None, where="", ids=None, named=True
          ) -> UserDataset:
    """Splits by the ``split_of`` column (train/val/test values), else a fixed stratified 60/20/20 split; row ``i``
    keeps the id ``ids[i]`` (default ``i``). ``named=False``: the data names no classes (``Split.label_names``
    stays ``None``; ``classes`` are the indices as strings)."""
    if split_of is not None:
        parts = [np.asarray([i for i, s in enumerate(split_of) if str(s) in _SPLIT_ALIASES[p]], dtype=np.int64)
                 for p in _PARTS]
        if len(parts[2]) == 0:
            raise DatasetSpecError(f"{where}: the split column has no 'test' rows (accepted values: "
                                   f"{ {k: sorted(v) for k, v in _SPLIT_ALIASES.items()} })")
    else:
        parts = stratified_split(y)
    names = classes if named else None
    train, val, test = (take(x, y, p, ids, names) for p in parts)
    return UserDataset(name, modality, tuple(classes), train, val, test, label_kind=kind)


def _fixed(name, modality, classes, parts: dict, kind: LabelKind, named: bool = True) -> UserDataset:
    """The given splits (``parts[split] = (x, y, ids or None)``); a missing train/val split is empty; ``named`` as in
    :func:`_make`."""
    test_x = parts["test"][0]
    empty = Split(torch.empty(0, *test_x.shape[1:]) if isinstance(test_x, torch.Tensor) else [],
                  torch.empty(0, dtype=torch.int64), ())
    for p, (_, y, _) in parts.items():
        if len(y) and (int(np.min(y)) < 0 or int(np.max(y)) >= len(classes)):
            raise DatasetSpecError(f"{name}: split {p!r} has labels outside 0..{len(classes) - 1} "
                                   f"(classes {list(classes)})")
    names = classes if named else None
    train, val, test = (take(parts[p][0], parts[p][1], np.arange(len(parts[p][1])), parts[p][2], names)
                        if p in parts else empty for p in _PARTS)
    return UserDataset(name, modality, tuple(classes), train, val, test, label_kind=kind)


def _existing_file(path_s: str, scheme: str) -> Path:
    path = Path(path_s)
    if not path.is_file():
        raise DatasetSpecError(f"{scheme}: file not found: {path}")
    return path


def _read_utf8(path: Path) -> str:
    """The file's text as UTF-8, a byte-order mark dropped (spreadsheets write one); any other encoding is refused
    with the first offending line and how to convert it, not a UnicodeDecodeError."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise DatasetSpecError(f"{path}:{line}: not UTF-8 (byte 0x{raw[e.start]:02x} at offset {e.start}); save "
                               f"the file as UTF-8, e.g. `iconv -f latin1 -t utf-8 {path.name} > utf8.csv`") from None


def _load_table(value: str | Path, scheme: str) -> UserDataset:
    """``csv:`` / ``jsonl:``: a text and a label column (``?text=COL&label=COL``), optionally a split column
    holding train/val/test (``?split=COL``)."""
    path_s, opts = parse_options(str(value), ("text", "label", "split"), scheme)
    path = _existing_file(path_s, scheme)
    text_col, label_col, split_col = (opts.get(k, k) for k in ("text", "label", "split"))
    f = io.StringIO(_read_utf8(path), newline="")
    if scheme == "csv":
        records = list(csv.DictReader(f))
    else:
        records = []
        for lineno, line in enumerate(f, 1):
            try:
                records += [json.loads(line)] if line.strip() else []
            except json.JSONDecodeError as e:
                raise DatasetSpecError(f"{path}:{lineno}: not valid JSON ({e.msg})") from e
    if not records:
        raise DatasetSpecError(f"{path} holds no records")
    missing = {text_col, label_col} - set(records[0])
    if missing:
        raise DatasetSpecError(f"{path} needs columns {text_col!r} and {label_col!r} (choose them with ?text="
                               f"COLUMN&label=COLUMN); missing {sorted(missing)}, found {sorted(records[0])}")
    for i, r in enumerate(records):
        if r.get(text_col) in (None, "") or r.get(label_col) in (None, ""):
            raise DatasetSpecError(f"{path}: row {i + 1} has an empty {text_col!r} or {label_col!r}")
    y, classes, kind = _labels_to_index([r[label_col] for r in records], str(path))
    split_of = [r.get(split_col) for r in records] if split_col in records[0] else None
    return _make(f"{scheme}:{value}", "text", classes, [str(r[text_col]) for r in records], y, kind, split_of,
                 str(path))


# --- images -----------------------------------------------------------------------------------------


def images_to_tensor(x: np.ndarray, where: str) -> torch.Tensor:
    """Validate an image array and return float32 (N, C, H, W) in [0, 1].

    Accepted: (N, H, W) or (N, C, H, W) with C in {1, 3, 4}; uint8 (scaled by 1/255) or floats already in [0, 1].
    """
    x = np.asarray(x)
    if x.ndim == 3:
        x = x[:, None]
    if x.ndim != 4 or x.shape[1] not in (1, 3, 4):
        raise DatasetSpecError(f"{where}: images must have shape (N, H, W) or (N, C, H, W) with C in 1/3/4 channels "
                               f"first; got {tuple(np.asarray(x).shape)} (transpose NHWC arrays to NCHW)")
    if x.shape[0] == 0:
        raise DatasetSpecError(f"{where}: no images")
    if x.dtype == np.uint8:
        return torch.from_numpy(x.astype(np.float32) / 255.0)
    if not np.issubdtype(x.dtype, np.floating):
        raise DatasetSpecError(f"{where}: images must be uint8 (0-255) or floats in [0, 1], got dtype {x.dtype}")
    if not np.isfinite(x).all():
        raise DatasetSpecError(f"{where}: images contain NaN or inf")
    lo, hi = float(x.min()), float(x.max())
    if lo < 0.0 or hi > 1.0:
        raise DatasetSpecError(f"{where}: float images must lie in [0, 1] (models normalise inside), found values in "
                               f"[{lo:.4g}, {hi:.4g}]; divide 0-255 data by 255; for data normalised for the model, give the "
                               "raw [0, 1] images and declare the normalisation on the model spec (?mean=..&std=..)")
    return torch.from_numpy(x.astype(np.float32))


def _int_labels(y: np.ndarray, n: int, where: str) -> np.ndarray:
    y = np.asarray(y)
    if y.ndim != 1 or len(y) != n:
        raise DatasetSpecError(f"{where}: labels must be a 1-D array with one label per image ({n}), got shape {y.shape}")
    if not np.issubdtype(y.dtype, np.integer):
        if not (np.issubdtype(y.dtype, np.floating) and np.all(y == np.round(y))):
            raise DatasetSpecError(f"{where}: labels must be integer class indices, got dtype {y.dtype}")
    if y.min() < 0:
        raise DatasetSpecError(f"{where}: labels must be >= 0, found {int(y.min())}")
    return y.astype(np.int64)


def load_npz(value: str | Path) -> UserDataset:
    """``npz:PATH``: a NumPy archive with ``x`` (images) and ``y`` (integer labels), split 60/20/20 stratified; or
    ``x_train``/``y_train``, ``x_val``/``y_val`` (optional), ``x_test``/``y_test``. An optional ``classes`` array
    names the classes."""
    path = _existing_file(parse_options(str(value), (), "npz")[0], "npz")
    where = f"npz:{path}"
    try:
        arch = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as e:
        raise DatasetSpecError(f"npz: {path} is not a readable .npz archive ({e})") from e
    with arch:
        keys = set(arch.files)
        suffixes = [""] if {"x", "y"} <= keys else [f"_{p}" for p in _PARTS if f"x_{p}" in keys]
        if "" not in suffixes and not {"x_test", "y_test"} <= keys:
            raise DatasetSpecError(f"{where} needs arrays 'x' and 'y' (or x_test/y_test [+ x_train/y_train]); "
                                   f"has {sorted(keys)}")
        parts = {}
        for s in suffixes:
            x = images_to_tensor(arch[f"x{s}"], f"{where} ['x{s}']")
            parts[s[1:] or "all"] = (x, _int_labels(arch[f"y{s}"], len(x), f"{where} ['y{s}']"), None)
        names = [str(c) for c in arch["classes"]] if "classes" in keys else None
    shapes = {tuple(p[0].shape[1:]) for p in parts.values()}
    if len(shapes) != 1:
        raise DatasetSpecError(f"{where}: splits have different image shapes {sorted(shapes)}")
    classes = names or [str(i) for i in range(max(int(p[1].max()) + 1 for p in parts.values()))]
    if "all" not in parts:
        return _fixed(where, "vision", classes, parts, "index", named=names is not None)
    x, y, _ = parts["all"]
    if int(y.max()) >= len(classes):
        raise DatasetSpecError(f"{where}: label {int(y.max())} is outside the {len(classes)} named classes "
                               f"{list(classes)}")
    return _make(where, "vision", classes, x, y, "index", named=names is not None)


def _read_folder(root: Path, size: tuple[int, int] | None, where: str, base: Path
                 ) -> tuple[torch.Tensor, np.ndarray, list[str], list[str]]:
    from PIL import Image

    classes = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not classes:
        raise DatasetSpecError(f"{where}: no class folders under {root} (ImageFolder layout: ROOT/<class>/<image>)")
    files, labels = [], []
    for i, c in enumerate(classes):
        found = sorted(p for p in (root / c).rglob("*") if p.suffix.lower() in _IMAGE_SUFFIXES)
        files += found
        labels += [i] * len(found)
    if not files:
        raise DatasetSpecError(f"{where}: no image files ({sorted(_IMAGE_SUFFIXES)}) under {root}")
    images = []
    for f in files:
        with Image.open(f) as im:
            images.append(im.convert("RGB") if im.mode not in ("L", "1", "I;16", "I") else im.convert("L"))
    mode = "RGB" if any(im.mode == "RGB" for im in images) else "L"
    images = [im.convert(mode) for im in images]
    if size is not None:
        images = [im.resize((size[1], size[0]), Image.Resampling.BILINEAR) for im in images]
    sizes = {im.size for im in images}
    if len(sizes) != 1:
        raise DatasetSpecError(f"{where}: images have different sizes {sorted(sizes)[:4]}; resize them with "
                               "?size=HxW (e.g. imagefolder:/data/pets?size=32x32)")
    arr = np.stack([np.asarray(im, dtype=np.uint8) for im in images])
    arr = arr[:, None] if arr.ndim == 3 else arr.transpose(0, 3, 1, 2)
    return (images_to_tensor(arr, where), np.asarray(labels, dtype=np.int64), classes,
            [f.relative_to(base).as_posix() for f in files])


def load_imagefolder(value: str | Path) -> UserDataset:
    """``imagefolder:ROOT[?size=HxW]``: torchvision's ImageFolder layout ``ROOT/<class>/<image>`` (class index =
    position of the folder name in sorted order, torchvision's convention), split 60/20/20 stratified; or
    ``ROOT/{train,val,test}/<class>/<image>`` for fixed splits. Grey images stay 1-channel, any colour image
    makes the set RGB."""
    path_s, opts = parse_options(str(value), ("size",), "imagefolder")
    root = Path(path_s)
    where = f"imagefolder:{path_s}"
    if not root.is_dir():
        raise DatasetSpecError(f"imagefolder: directory not found: {root}")
    size = None
    if "size" in opts:
        try:
            h, w = (int(v) for v in opts["size"].lower().split("x"))
            size = (h, w)
        except ValueError as e:
            raise DatasetSpecError(f"imagefolder: size must look like HxW (e.g. 32x32), got {opts['size']!r}") from e
    if not (root / "test").is_dir():
        x, y, classes, files = _read_folder(root, size, where, root)
        return _make(where, "vision", classes, x, y, "ordered", ids=files)
    parts = {p: _read_folder(root / p, size, f"{where}/{p}", root) for p in _PARTS if (root / p).is_dir()}
    classes = parts["test"][2]
    for p, (_, _, cls, _) in parts.items():
        if cls != classes:
            raise DatasetSpecError(f"{where}: split {p!r} has class folders {cls}, test has {classes}")
    parts = {p: (x, y, ids) for p, (x, y, _, ids) in parts.items()}
    return _fixed(where, "vision", classes, parts, "ordered")


def load_idx(value: str | Path) -> UserDataset:
    """``idx:DIR``: the four MNIST-format IDX files (``train-images-idx3-ubyte``, ``train-labels-idx1-ubyte``,
    ``t10k-images-idx3-ubyte``, ``t10k-labels-idx1-ubyte``, optionally ``.gz``), e.g. Debian's
    ``/usr/share/datasets/fashion-mnist``. Train is split 90/10 (stratified) into train/val; t10k is the test split."""
    from .idx import find_idx, read_idx

    path_s, _ = parse_options(str(value), (), "idx")
    root = Path(path_s)
    where = f"idx:{path_s}"
    if not root.is_dir():
        raise DatasetSpecError(f"idx: directory not found: {root}")
    arrays = []
    for stem in ("train", "t10k"):
        x = images_to_tensor(read_idx(find_idx(root, f"{stem}-images-idx3-ubyte")), f"{where} {stem} images")
        y = read_idx(find_idx(root, f"{stem}-labels-idx1-ubyte"))
        arrays += [x, _int_labels(y, len(x), f"{where} {stem} labels")]
    if arrays[0].shape[1:] != arrays[2].shape[1:]:
        raise DatasetSpecError(f"{where}: train and t10k images differ in shape")
    k = int(max(arrays[1].max(), arrays[3].max())) + 1
    return _train_val_test(where, tuple(str(i) for i in range(k)), *arrays, named=False)  # IDX files name no class


def _train_val_test(name: str, classes, x, y, x_test, y_test, named: bool = True) -> UserDataset:
    """The train set split 90/10 (stratified) into train/val, and the test set; ids = index in each set."""
    tr, va = stratified_split(y, fractions=(0.9, 0.1))
    n = classes if named else None
    return UserDataset(name, "vision", tuple(classes), take(x, y, tr, None, n), take(x, y, va, None, n),
                       take(x_test, y_test, np.arange(len(y_test)), None, n), label_kind="index")


# --- Hugging Face datasets --------------------------------------------------------------------------


def _datasets():
    return optional_import("datasets", extra="robustsuite[datasets]",
                           feature="Hugging Face datasets (hf-disk:, hf-datasets:)")


def _from_hf(dd, name: str, opts: dict[str, str]) -> UserDataset:
    """A ``datasets.Dataset``/``DatasetDict`` as a :class:`UserDataset` (text or image column + label column);
    the chosen ``split`` is the test split, the other standard splits are kept around it."""
    datasets = _datasets()
    if isinstance(dd, datasets.Dataset):
        dd = datasets.DatasetDict({"all": dd})
    chosen = opts.get("split")
    if chosen is not None and chosen not in dd:
        raise DatasetSpecError(f"{name}: no split {chosen!r}; splits: {sorted(dd)}")
    first = dd[chosen or next(iter(dd))]
    cols = first.column_names
    label_col = opts.get("label", "label")
    x_col = opts.get("text") or opts.get("image") or next(
        (c for c in ("text", "sentence", "content", "image", "img", "pixel_values") if c in cols), None)
    if x_col is None or x_col not in cols or label_col not in cols:
        raise DatasetSpecError(f"{name} needs an input column (choose it with ?text=COLUMN or ?image=COLUMN) and a "
                               f"label column (?label=COLUMN); has {cols}")
    vision = (isinstance(first.features[x_col], datasets.Image) or "image" in opts
              or x_col in ("image", "img", "pixel_values"))
    modality = "vision" if vision else "text"
    names = getattr(first.features[label_col], "names", None)

    def columns(part) -> tuple:
        if not vision:
            return [str(t) for t in part[x_col]], list(part[label_col])
        arr = np.stack([np.asarray(im, dtype=None if isinstance(im, np.ndarray) else np.uint8)
                        for im in part[x_col]])
        if arr.ndim == 4 and arr.shape[-1] in (1, 3, 4) and arr.shape[1] not in (1, 3, 4):
            arr = arr.transpose(0, 3, 1, 2)
        return images_to_tensor(arr, f"{name} column {x_col!r}"), list(part[label_col])

    if chosen is not None:
        val = next((s for s in dd if s in _SPLIT_ALIASES["val"]), None)
        mapping = {"test": chosen} | {a: s for a, s in (("train", "train"), ("val", val)) if s in dd and s != chosen}
    else:
        mapping = {a: next((s for s in dd if s in aliases), None) for a, aliases in _SPLIT_ALIASES.items()}
        mapping = {k: v for k, v in mapping.items() if v is not None}
    if "test" in mapping:
        parts = {alias: columns(dd[split]) for alias, split in mapping.items()}
    else:  # no test split: a fixed stratified split of everything
        parts = {"all": columns(datasets.concatenate_datasets([dd[s] for s in dd]))}
    raw = [v for _, part in parts.values() for v in part]
    y, classes, kind = _labels_to_index(raw, name) if names is None else (
        np.asarray(raw, dtype=np.int64), list(names), "name")
    if "all" in parts:
        return _make(name, modality, classes, parts["all"][0], y, kind)
    ys = np.split(y, np.cumsum([len(part) for _, part in parts.values()])[:-1])
    return _fixed(name, modality, classes, {a: (x, part_y, None) for (a, (x, _)), part_y in
                                            zip(parts.items(), ys, strict=True)}, kind)


def load_hf_disk(value: str | Path) -> UserDataset:
    """``hf-disk:PATH[?split=NAME&text=COL|image=COL&label=COL]``: a dataset written by ``save_to_disk``, read
    with ``datasets.load_from_disk``. ``split`` names the split to evaluate (the test split of the report)."""
    path_s, opts = parse_options(str(value), ("split", "text", "image", "label"), "hf-disk")
    if not Path(path_s).is_dir():
        raise DatasetSpecError(f"hf-disk: directory not found: {path_s}")
    try:
        dd = _datasets().load_from_disk(path_s)
    except (FileNotFoundError, ValueError) as e:
        raise DatasetSpecError(f"hf-disk: {path_s} is not a save_to_disk directory ({e})") from e
    return _from_hf(dd, f"hf-disk:{path_s}", opts)


def load_hf_dataset(value: str) -> UserDataset:
    """``hf-datasets:NAME[?split=..&text=..&label=..]``: ``datasets.load_dataset(NAME)`` (the cache when offline)."""
    name, opts = parse_options(value, ("split", "text", "image", "label"), "hf-datasets")
    try:
        dd = _datasets().load_dataset(name)
    except Exception as e:  # the hub raises many types (ConnectionError, FileNotFoundError, ...)
        raise DatasetSpecError(
            f"hf-datasets:{name} could not be loaded ({type(e).__name__}: {e}). Offline, the dataset must be "
            f"in the Hugging Face cache (run `datasets.load_dataset({name!r})` once with network, or set "
            f"HF_DATASETS_OFFLINE=1 with a populated HF_HOME); or save it with save_to_disk and use hf-disk:PATH."
        ) from e
    return _from_hf(dd, f"hf-datasets:{name}", opts)


def _torchvision(root: str | Path, scheme: str, cls_name: str, expected: str) -> UserDataset:
    """CIFAR-10 / MNIST from a local torchvision root (``ROOT/<expected>``); never downloads."""
    torchvision = optional_import("torchvision", extra="robustsuite[robustbench]",
                                  feature="cifar10:/mnist: datasets")
    name, root = f"{scheme}:{root}", Path(root)
    try:
        cls = getattr(torchvision.datasets, cls_name)
        sets = [cls(str(root), train=train, download=False) for train in (True, False)]
    except RuntimeError as e:
        raise DatasetSpecError(
            f"{name}: no {cls_name} data under {root} ({e}). Put the extracted files at {root / expected} "
            f"(on a machine with network: torchvision.datasets.{cls_name}({str(root)!r}, download=True))."
        ) from e
    arrays = []
    for ds in sets:
        x = torch.tensor(np.asarray(ds.data), dtype=torch.float32) / 255.0
        x = x.permute(0, 3, 1, 2) if x.ndim == 4 else x.unsqueeze(1)
        arrays += [x.contiguous(), np.asarray(ds.targets, dtype=np.int64)]
    return _train_val_test(name, sets[0].classes, *arrays)


LOADERS = {"csv": functools.partial(_load_table, scheme="csv"),
           "jsonl": functools.partial(_load_table, scheme="jsonl"), "npz": load_npz,
           "imagefolder": load_imagefolder, "idx": load_idx, "hf-disk": load_hf_disk,
           "hf-datasets": load_hf_dataset,
           "cifar10": functools.partial(_torchvision, scheme="cifar10", cls_name="CIFAR10",
                                        expected="cifar-10-batches-py"),
           "mnist": functools.partial(_torchvision, scheme="mnist", cls_name="MNIST", expected="MNIST/raw")}
