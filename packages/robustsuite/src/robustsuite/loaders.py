"""Spec strings to objects: :func:`load_model` (:mod:`robustsuite.zoo`) and :func:`load_dataset`
(:mod:`robustsuite.data`), their listings, and the local file a spec reads (it enters unit identities)."""

from __future__ import annotations

from pathlib import Path

from .data import DATASET_SPECS, load_dataset
from .zoo import MODEL_SPECS, load_model

__all__ = ["DATASET_SPECS", "MODEL_SPECS", "load_dataset", "load_model", "local_path"]


def local_path(spec) -> Path | None:
    """The local file or directory behind a model or dataset spec, if it exists."""
    from . import data, zoo

    if not isinstance(spec, str) or ":" not in spec:
        return None
    return zoo.local_path(spec) or data.local_path(spec)
