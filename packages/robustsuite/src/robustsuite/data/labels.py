"""Which class index a dataset label means: the model's own label names (``id2label``) or the config's explicit
``labels = [...]`` — never a guess (such as alphabetical order), and never both when they disagree."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import torch

from robustsuite_common.experiment import Split

from ..errors import DatasetSpecError
from .dataset import Dataset


def label_order(explicit: Sequence | None, model_names: Sequence[str] | None, model: str | None
                ) -> tuple[list[str] | None, str]:
    """The class names in index order and where they come from: the model's ``id2label``, else the config's
    ``labels``; both given and different (another order, other names) is refused with both lists shown."""
    ours = None if explicit is None else [str(v) for v in explicit]
    if model_names is not None:
        theirs = [str(v) for v in model_names]
        if ours is not None and ours != theirs:
            raise DatasetSpecError(f"the config's labels {ours} contradict the label names model {model} declares "
                                   f"(id2label, in class-index order): {theirs}; remove `labels` or make it equal")
        return theirs, f"model {model} (id2label)"
    return (ours, "the config's labels") if ours is not None else (None, "the model")


def _remap(split: Split, old_to_new: np.ndarray, names: tuple[str, ...]) -> Split:
    y = split.y.numpy()
    keep = y >= 0  # -1 marks out-of-distribution samples; they stay -1
    new = y.copy()
    new[keep] = old_to_new[y[keep]]
    return Split(split.x, torch.as_tensor(new, dtype=torch.int64), split.ids, names)


def align_labels(ds: Dataset, model_labels: Sequence[str] | None, *, source: str = "the model") -> Dataset:
    """Map a dataset's class indices onto the model's: ``y_new = model_labels.index(ds.classes[y])``.

    ``model_labels`` is the model's ``id2label`` in id order or the config's explicit ``labels`` list (``None``
    when neither exists). Named labels without such a list are an error (never guessed); a dataset class the
    model does not know is an error listing both label sets. Ids and label names are kept.
    """
    kind = ds.label_kind
    if model_labels is None:
        if kind == "name":
            raise DatasetSpecError(
                f"{ds.name} has named labels {list(ds.classes)} but the model declares no label names (id2label); "
                "give their order in the config: labels = [\"name of class 0\", \"name of class 1\", ...]")
        return ds
    model_labels = [str(v) for v in model_labels]
    if len(set(model_labels)) != len(model_labels):
        raise DatasetSpecError(f"labels of {source} are not unique: {model_labels}")
    present = set()
    for s in (ds.train, ds.val, ds.test):
        present |= {ds.classes[i] for i in s.y.unique().tolist() if 0 <= i < len(ds.classes)}
    if kind == "index" or (kind == "ordered" and not present & set(model_labels)):
        k = max((int(s.y.max()) for s in (ds.train, ds.val, ds.test) if len(s)), default=-1) + 1
        if k > len(model_labels):
            raise DatasetSpecError(f"{ds.name} has class indices up to {k - 1}, but {source} knows only "
                                   f"{len(model_labels)} labels {model_labels}")
        return ds
    unknown = sorted(present - set(model_labels))
    if unknown:
        raise DatasetSpecError(f"{ds.name}: dataset labels {unknown} are unknown to {source}. Dataset labels: "
                               f"{sorted(present)}; labels of {source}: {model_labels}")
    pos = {c: i for i, c in enumerate(model_labels)}
    old_to_new = np.asarray([pos.get(c, -2) for c in ds.classes], dtype=np.int64)
    names = tuple(model_labels)
    return replace(ds, classes=names, train=_remap(ds.train, old_to_new, names), val=_remap(ds.val, old_to_new, names),
                   test=_remap(ds.test, old_to_new, names), label_kind="index")
