"""Datasets: the builtin data (:mod:`.builtin`: shipped Fashion-MNIST and WordNet, scikit-learn's digits), users'
dataset specs (:mod:`.user`), the one reader of the shipped WordNet files (:mod:`.wordnet`) and label alignment
(:mod:`.labels`). :func:`load_dataset` resolves a spec string; every failure is a
:class:`~robustsuite.errors.DatasetSpecError` saying what to put where."""

from __future__ import annotations

from pathlib import Path

from robustsuite_common.experiment import Split

from ..errors import DatasetSpecError
from ..specs import SpecInfo, split_spec
from .builtin import BUILTIN_DATASETS
from .dataset import Dataset, UserDataset, fingerprint

__all__ = ["Dataset", "UserDataset", "Split", "DATASET_SPECS", "load_dataset", "is_dataset_spec", "local_path",
           "fingerprint"]

USER_SCHEMES = ("csv", "jsonl", "npz", "imagefolder", "idx", "hf-disk", "hf-datasets", "cifar10", "mnist")
DATASET_SPECS = [SpecInfo(f"builtin:{k}", "text" if "sentiment" in k or "wordnet" in k else "vision", v[1])
                 for k, v in BUILTIN_DATASETS.items()] + [
    SpecInfo("csv:<path>[?text=COL&label=COL&split=COL]", "text",
             "CSV with a text and a label column (names or integers) and an optional train/val/test column"),
    SpecInfo("jsonl:<path>[?text=KEY&label=KEY&split=KEY]", "text", "JSON lines, fields as for csv"),
    SpecInfo("npz:<path>", "vision", "NumPy archive: x (N,[C,]H,W uint8 or floats in [0,1]) and y (int labels), "
             "or x_train/y_train + x_test/y_test; optional classes"),
    SpecInfo("imagefolder:<root>[?size=HxW]", "vision",
             "torchvision ImageFolder layout root/<class>/<image> (optionally root/{train,val,test}/...)"),
    SpecInfo("idx:<dir>", "vision", "MNIST-format IDX files (train-*/t10k-*, optionally .gz), e.g. "
             "/usr/share/datasets/fashion-mnist"),
    SpecInfo("hf-disk:<path>[?split=NAME&text=COL|image=COL&label=COL]", "text/vision",
             "datasets.load_from_disk directory; split = the split to evaluate"),
    SpecInfo("hf-datasets:<name>[?split=..&text=..&label=..]", "text/vision",
             "Hugging Face hub dataset (from the cache when offline)"),
    SpecInfo("cifar10:<root>", "vision", "CIFAR-10 from <root>/cifar-10-batches-py (never downloads)"),
    SpecInfo("mnist:<root>", "vision", "MNIST from <root>/MNIST/raw (never downloads)"),
]


def load_dataset(spec: str) -> Dataset:
    """Resolve a dataset spec to a :class:`Dataset` (user data validated on load)."""
    from . import user

    scheme, value = split_spec(spec, DatasetSpecError, DATASET_SPECS)
    if scheme == "builtin":
        if value not in BUILTIN_DATASETS:
            raise DatasetSpecError(f"unknown builtin dataset {value!r}; known: {sorted(BUILTIN_DATASETS)}")
        return BUILTIN_DATASETS[value][0]()
    if scheme not in USER_SCHEMES:
        raise DatasetSpecError(f"unknown dataset scheme {scheme!r} in {spec!r}; use one of "
                               f"{sorted(['builtin', *USER_SCHEMES])}")
    return user.LOADERS[scheme](value)


def is_dataset_spec(spec) -> bool:
    """Whether a string names a dataset (``builtin:digits``, ``csv:...``), not a model (``builtin:digits-cnn``)."""
    if not isinstance(spec, str) or ":" not in spec:
        return False
    scheme, _, value = spec.partition(":")
    return scheme in USER_SCHEMES or (scheme == "builtin" and value in BUILTIN_DATASETS)


def local_path(spec: str) -> Path | None:
    """The local file or directory a user dataset spec reads (``csv:P?...``, ``imagefolder:DIR``), if it exists."""
    scheme, _, value = spec.partition(":")
    if scheme not in USER_SCHEMES or scheme == "hf-datasets":
        return None
    path = Path(value.split("?", 1)[0])
    return path if path.exists() else None
