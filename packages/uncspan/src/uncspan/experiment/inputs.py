"""What :func:`uncspan.experiment.run` takes: the models (:class:`Models`) and the data (:class:`Data`), checked
before any work."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import torch
from torch import nn

from robustsuite_common.checks import check_images, check_labels
from robustsuite_common.experiment import Split
from robustsuite_common.models import check_model

__all__ = ["Models", "Data"]


@dataclass(frozen=True)
class Models:
    """The classifiers (``torch.nn.Module``, inputs (N, C, H, W) in [0, 1], logits out; tuples, dicts with
    ``"logits"`` and ``ModelOutput`` accepted; each comes back exactly as it was given).

    ``ranked``: name -> model, ranked together in Table IV on ``Data.test`` (in the given order before sorting by
    MUS). ``adversarially_trained``: name (of a ranked or an ``osr`` model) -> whether that model was adversarially
    trained (declared, never guessed from a name; absent or ``None``: not stated, left out of the AT-vs-standard
    comparison and of the Table V effects, which read the adversarially trained open-set model as the paper's C9).
    ``osr``: name -> model of Table V, trained on the known classes of ``Data.osr`` (a model with more outputs is
    restricted to them)."""

    ranked: Mapping[str, nn.Module]
    adversarially_trained: Mapping[str, bool | None] = field(default_factory=dict)
    osr: Mapping[str, nn.Module] = field(default_factory=dict)

    def check(self) -> None:
        if not isinstance(self.ranked, Mapping) or not self.ranked:
            raise TypeError("models.ranked must be a non-empty mapping name -> torch.nn.Module")
        if not isinstance(self.osr, Mapping):
            raise TypeError("models.osr must be a mapping name -> torch.nn.Module")
        for group in ("ranked", "osr"):
            for name, m in getattr(self, group).items():
                if not isinstance(name, str) or not name:
                    raise TypeError(f"models.{group} must be keyed by model names (non-empty strings), got {name!r}")
                check_model(f"models.{group}[{name!r}]", m)
        flags = self.adversarially_trained
        if not isinstance(flags, Mapping) or not set(flags) <= set(self.ranked) | set(self.osr):
            raise ValueError("models.adversarially_trained must map names of models.ranked or models.osr to true, "
                             "false or None")
        for name, v in flags.items():
            if v is not None and not isinstance(v, bool):
                raise TypeError(f"models.adversarially_trained[{name!r}] must be true, false or None, got {v!r}")


@dataclass(frozen=True)
class Data:
    """Labelled image splits (:class:`robustsuite_common.experiment.Split`: ``x`` a float tensor (N, C, H, W) in
    [0, 1], ``y`` integer labels, the user's row ``ids`` and ``label_names``, which the per-sample records carry).

    ``test``: in-distribution test points of the ranked models (Table IV, the ε-sweep: the first ``n`` of them).
    ``osr``: in-distribution test points of the Table V models, labelled with their known classes. ``open_set``:
    outliers of unknown classes (Table V, OSR); leave it ``None`` and set ``ood.open_set_classes`` to hold classes
    of ``osr`` out instead. ``ood``: out-of-distribution outliers (Table V, OOD; resized to ``osr``'s image shape
    when it differs, with a note). Without ``osr`` (or without OSR models) Table V is skipped."""

    test: Split
    osr: Split | None = None
    open_set: Split | None = None
    ood: Split | None = None

    def named(self, test_names: Sequence[str] | None = None, osr_names: Sequence[str] | None = None) -> Data:
        """A copy whose splits without ``label_names`` carry their dataset's class names: ``test_names`` for
        ``test``, ``osr_names`` for ``osr`` and ``open_set`` (the OOD split has no classes of its own)."""
        def fill(split: Split | None, names: Sequence[str] | None) -> Split | None:
            if split is None or split.label_names is not None or names is None:
                return split
            return Split(split.x, split.y, split.ids, tuple(names))

        test = fill(self.test, test_names)
        assert test is not None
        return replace(self, test=test, osr=fill(self.osr, osr_names), open_set=fill(self.open_set, osr_names))

    def check(self) -> None:
        for name in ("test", "osr", "open_set", "ood"):
            s = getattr(self, name)
            if s is None:
                if name == "test":
                    raise TypeError("data.test must be a robustsuite_common.experiment.Split, got None")
                continue
            if not isinstance(s, Split):
                raise TypeError(f"data.{name} must be a robustsuite_common.experiment.Split, got {type(s).__name__}")
            check_images(f"data.{name}.x", s.x)
            if name in ("test", "osr"):
                check_labels(f"data.{name}.y", s.y, length=len(s))
        for name in ("open_set", "ood"):
            s = getattr(self, name)
            if s is not None and self.osr is not None and s.x.shape[1] != self.osr.x.shape[1] \
                    and 1 not in (s.x.shape[1], self.osr.x.shape[1]):
                raise ValueError(f"data.{name}.x has {s.x.shape[1]} channels, data.osr.x {self.osr.x.shape[1]}: "
                                 "they cannot be matched")


def labels(split: Split) -> torch.Tensor:
    """The split's labels as an int64 tensor (lists and arrays accepted)."""
    return torch.as_tensor(check_labels("y", split.y))
