"""The shape every paper's experiment shares (ARCHITECTURE.md, "Each paper's experiment lives in its package").

A package's ``<pkg>.experiment`` module defines a typed ``Config`` (:mod:`robustsuite_common.config`), named
presets, and ``run(models, data, config, *, store=None, progress=True) -> Result``. This module holds what
those modules have in common:

- :class:`Split`: labelled inputs with the user's row ids and label names, so per-sample records can be traced;
- :class:`Store` (get/put bytes by key), :class:`MemoryStore`, :class:`DirStore` and :func:`cached`: the
  checkpoint protocol that lets a caller resume an interrupted experiment (without a store nothing is written);
- :class:`Metric`, :class:`Table` and :class:`ExperimentResult`: numbers with units, readable labels and
  intervals that are checked on construction (an interval excluding its estimate is refused), tables,
  per-sample records, a summary, and ``to_dict``/``from_dict``/``save``/``load``;
- :class:`Figure`: a named matplotlib figure an experiment's ``figures(result)`` returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .result import (
    HEADLINE_COLUMNS,
    ExperimentResult,
    Figure,
    Metric,
    Scalar,
    Table,
    ci_of,
    headline,
    json_safe,
)
from .store import JSON, NUMPY, TORCH, Codec, DirStore, MemoryStore, Store, cached

__all__ = [
    "Split",
    "Store",
    "MemoryStore",
    "DirStore",
    "Codec",
    "JSON",
    "TORCH",
    "NUMPY",
    "cached",
    "Metric",
    "Scalar",
    "Table",
    "Figure",
    "ExperimentResult",
    "chance_rate",
    "json_safe",
    "HEADLINE_COLUMNS",
    "headline",
    "ci_of",
]



# --------------------------------------------------------------------------------------------------------------
# data


@dataclass(frozen=True)
class Split:
    """Labelled inputs: ``x`` (a tensor ``(N, ...)``, a list of texts, of text pairs or of token lists), integer
    labels ``y`` (length N), the user's row ``ids`` (default ``0..N-1``) and ``label_names`` (index -> name as
    the user wrote it). Per-sample records carry ``ids[i]`` and ``label_names[y[i]]``."""

    x: Any
    y: Any
    ids: tuple[Any, ...] | None = None
    label_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        n = len(self.x)
        if len(self.y) != n:
            raise ValueError(f"y must have one label per input ({n}), got {len(self.y)}")
        if self.ids is not None and len(self.ids) != n:
            raise ValueError(f"ids must have one id per input ({n}), got {len(self.ids)}")

    def __len__(self) -> int:
        return len(self.x)

    def id_of(self, i: int) -> Any:
        return i if self.ids is None else self.ids[i]

    def name_of(self, label: int) -> str:
        """The user's name of class ``label`` (its index as a string when no names are known)."""
        label = int(label)
        if self.label_names is not None and 0 <= label < len(self.label_names):
            return str(self.label_names[label])
        return str(label)

    def select(self, index: Sequence[int] | np.ndarray) -> Split:
        """The items at ``index`` (ids and names kept)."""
        idx = np.asarray(index, dtype=np.int64)
        if hasattr(self.x, "index_select") or isinstance(self.x, np.ndarray):
            x = self.x[idx]
        else:
            x = [self.x[i] for i in idx]
        y = self.y[idx] if hasattr(self.y, "shape") else [self.y[i] for i in idx]
        ids = tuple(self.id_of(int(i)) for i in idx)
        return Split(x, y, ids, self.label_names)

    def head(self, n: int) -> Split:
        """The first ``n`` items (all of them when ``n`` exceeds the size)."""
        return self.select(np.arange(min(int(n), len(self))))


def chance_rate(y: Any, n_classes: int | None = None) -> float:
    """The accuracy of always answering the most frequent class of ``y`` (the chance level of an accuracy)."""
    arr = np.asarray(y.detach().cpu() if hasattr(y, "detach") else y).astype(np.int64).ravel()
    if arr.size == 0:
        raise ValueError("y must hold at least one label")
    return float(np.bincount(arr, minlength=n_classes or 0).max() / arr.size)
