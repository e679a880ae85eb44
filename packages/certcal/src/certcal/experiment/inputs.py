"""What :func:`certcal.experiment.run` takes: the models and the data, checked before any work."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import torch

from robustsuite_common.checks import check_labels
from robustsuite_common.experiment import Split
from robustsuite_common.models import evaluating

from .._validation import check_images, check_model, num_classes

__all__ = ["Data", "Models", "Split"]


@dataclass(frozen=True)
class Models:
    """The models of the experiment (vision models: (N, C, H, W) images in [0, 1] -> logits (N, K)).

    ``base``: the model the β-ACE attacks target, and the start of Gaussian-noise fine-tuning for any σ without a
    smoothing model. ``noise``: smoothing base models by σ (trained with Gaussian noise of that σ, e.g. the
    shipped ``fashion-cnn-noise-0.25``); a σ of the config missing here is fine-tuned from ``base``. None of
    them is changed: every fine-tune works on a copy, every evaluation restores the caller's mode."""

    base: torch.nn.Module
    noise: Mapping[float, torch.nn.Module] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_model(self.base, "models.base")
        if not isinstance(self.noise, Mapping):
            raise TypeError(f"models.noise must map sigma -> model, got {type(self.noise).__name__}")
        clean = {}
        for s, m in self.noise.items():
            if isinstance(s, bool) or not isinstance(s, int | float) or not s > 0:
                raise ValueError(f"models.noise keys must be sigmas > 0, got {s!r}")
            clean[float(s)] = check_model(m, f"models.noise[{s!r}]")
        object.__setattr__(self, "noise", clean)

    def smoothing(self, sigma: float) -> torch.nn.Module | None:
        """The smoothing model of ``sigma`` (None: fine-tune ``base``)."""
        return self.noise.get(float(sigma))


@dataclass(frozen=True)
class Data:
    """Images with labels: ``train`` (noise fine-tuning and ACT) and ``test`` (certified and attacked, from the
    first ``test_samples``; ``train`` may be ``None`` when nothing is fine-tuned, e.g. with the ``audit`` preset).
    Each a :class:`~robustsuite_common.experiment.Split`: ``x`` a float tensor
    (N, C, H, W) in [0, 1], ``y`` integer labels, optionally the user's row ``ids`` and ``label_names`` (carried
    into the per-sample records). ``label_names``: the dataset's class names, given to each split that has none
    of its own."""

    train: Split | None
    test: Split
    label_names: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for name in ("train", "test"):
            if name == "train" and self.train is None:
                continue
            if not isinstance(getattr(self, name), Split):
                raise TypeError(f"data.{name} must be a robustsuite_common.experiment.Split, got "
                                f"{type(getattr(self, name)).__name__}")
        if self.label_names is not None:
            names = tuple(str(v) for v in self.label_names)
            object.__setattr__(self, "label_names", names)
            for name in ("train", "test"):
                split = getattr(self, name)
                if split is not None and split.label_names is None:
                    object.__setattr__(self, name, replace(split, label_names=names))


def check_split(name: str, split: Split, n: int | None = None) -> tuple[torch.Tensor, np.ndarray]:
    """``(x, y)`` of the first ``n`` items of ``split``, checked: images in [0, 1], integer labels."""
    part = split if n is None else split.head(n)
    x = check_images(f"{name}.x", part.x)
    y = check_labels(f"{name}.y", part.y, length=int(x.shape[0]))
    return x, y


def check_classes(name: str, model: torch.nn.Module, x: torch.Tensor, y: np.ndarray) -> int:
    """The model's number of classes (one forward pass on two inputs); labels beyond it are refused."""
    with evaluating(model):
        k = num_classes(model, x)
    if y.size and int(y.max()) >= k:
        raise ValueError(f"{name}.y must be class indices < the {k} classes of the model, got {int(y.max())}")
    return k


def as_inputs(models: Any, data: Any) -> tuple[Models, Data]:
    if not isinstance(models, Models):
        raise TypeError(f"models must be a certcal.experiment.Models, got {type(models).__name__}")
    if not isinstance(data, Data):
        raise TypeError(f"data must be a certcal.experiment.Data, got {type(data).__name__}")
    return models, data
