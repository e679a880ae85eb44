"""What :func:`certcal.overview.run` takes: the model and the split described, checked before any work."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from robustsuite_common.checks import check_float
from robustsuite_common.experiment import Split

__all__ = ["Data", "Models", "Split"]


def _name(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise TypeError(f"{where} must be a non-empty string, got {value!r}")
    return value


@dataclass(frozen=True)
class Models:
    """The model described: a vision ``torch.nn.Module`` ((N, C, H, W) images in [0, 1] -> logits (N, K)) or a text
    classifier (a callable ``list[str] -> (N, K)`` logits, the TextAttack ``ModelWrapper`` contract).

    ``name`` names it in titles and figure files (the umbrella passes its model spec). ``adversarial_eps``: the L∞ ε
    it was adversarially trained at (``None``: not adversarially trained); with ``robust_accuracy = "auto"`` such a
    model is attacked at that ε unless the config gives one. The model comes back as it was (evaluated in eval
    mode, its mode restored)."""

    model: Any
    name: str = "model"
    adversarial_eps: float | None = None

    def __post_init__(self) -> None:
        if not callable(self.model):
            raise TypeError("models.model must be a torch.nn.Module or a text classifier (list[str] -> logits), got "
                            f"{type(self.model).__name__}")
        _name("models.name", self.name)
        if self.adversarial_eps is not None:
            eps = check_float("models.adversarial_eps", self.adversarial_eps, gt=0.0, le=1.0)
            object.__setattr__(self, "adversarial_eps", eps)

    @property
    def vision(self) -> bool:
        return isinstance(self.model, torch.nn.Module)


@dataclass(frozen=True)
class Data:
    """The split described: a :class:`~robustsuite_common.experiment.Split` (``x`` a float tensor (N, C, H, W) of
    images in [0, 1] for a vision model, a list of texts for a text classifier; integer labels ``y``; the user's row
    ``ids`` and ``label_names``, carried into the per-sample records).

    ``name`` names the dataset in titles and figure files (the umbrella passes its dataset spec); ``sizes`` (samples
    per split of the whole dataset; empty: this split's) and ``source`` (where the data came from) are reported as
    they are."""

    split: Split
    name: str = "data"
    sizes: Mapping[str, int] = field(default_factory=dict)
    source: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.split, Split):
            raise TypeError("data.split must be a robustsuite_common.experiment.Split, got "
                            f"{type(self.split).__name__}")
        _name("data.name", self.name)
        if not isinstance(self.sizes, Mapping) or not all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
                for k, v in self.sizes.items()):
            raise TypeError(f"data.sizes must map split names to sample counts, got {self.sizes!r}")
        if not isinstance(self.source, str):
            raise TypeError(f"data.source must be a string, got {type(self.source).__name__}")
        object.__setattr__(self, "sizes", dict(self.sizes))
