"""The experiment's inputs: the two base models (:class:`Models`) and the train/test images (:class:`Data`), checked
together with the config before any work (:func:`check_inputs`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import torch

from robustsuite_common.experiment import Split

from ._common import fingerprint
from .config import Config

__all__ = ["Models", "Data", "check_inputs", "prepared"]


@dataclass(frozen=True)
class Models:
    """The two input models (vision contract: ``(N, C, H, W)`` in [0, 1] → logits ``(N, K)``; a dict, tuple or
    ``ModelOutput`` output is read as logits): ``standard`` (the standard base of RMC row 1, DANN and URejectron)
    and ``adversarial`` (the adversarially trained base of RMC row 2, trained at ``threat.at_model_eps``)."""

    standard: torch.nn.Module
    adversarial: torch.nn.Module


@dataclass(frozen=True)
class Data:
    """``train`` (D: RMC's neighbours, DANN's source, TADV's and DENT's training set, URejectron's P) and
    ``test`` (the test stream) as :class:`Split` s of images in [0, 1]; ``name`` is shown in figure titles."""

    train: Split
    test: Split
    name: str = field(default="")

    @classmethod
    def from_dataset(cls, dataset: Any, *, name: str = "") -> Data:
        """The ``train`` and ``test`` splits of ``dataset`` (anything with those attributes, e.g. a loaded
        ``robustsuite`` dataset), each split without label names given the dataset's ``classes`` (if any)."""
        classes = getattr(dataset, "classes", None)
        names = tuple(classes) if classes else None

        def named(split: Split) -> Split:
            return split if split.label_names is not None or names is None else replace(split, label_names=names)

        return cls(train=named(dataset.train), test=named(dataset.test), name=name)


def check_inputs(models: Any, data: Any, cfg: Any) -> None:
    """Every input against the config, before any work: types, images and labels, the points each selected table
    needs, the audit's requirements, and (last: one forward pass) the labels against the model's classes."""
    from robustsuite_common.checks import check_images, check_labels
    from robustsuite_common.models import check_model

    from .._validate import n_classes
    from .audit import check_audit

    if not isinstance(cfg, Config):
        raise TypeError(f"config must be a transduct_attack.experiment.Config (see preset()), got {type(cfg).__name__}")
    if not isinstance(models, Models):
        raise TypeError(f"models must be a transduct_attack.experiment.Models, got {type(models).__name__}")
    check_model("models.standard", models.standard)
    check_model("models.adversarial", models.adversarial)
    if not isinstance(data, Data):
        raise TypeError(f"data must be a transduct_attack.experiment.Data, got {type(data).__name__}")
    for name in ("train", "test"):
        split = getattr(data, name)
        if not isinstance(split, Split):
            raise TypeError(f"data.{name} must be a Split, got {type(split).__name__}")
        check_images(f"data.{name}.x", split.x)
        check_labels(f"data.{name}.y", split.y, length=split.x.shape[0])
    n_test, n_train = data.test.x.shape[0], data.train.x.shape[0]
    used = {"rmc": ("rmc", "rmc_seeds"), "dann": ("dann",), "tadv": ("tadv",), "dent": ("dent",),
            "urejectron": ("urejectron",)}
    if cfg.audit.enabled and cfg.audit.adaptive != "none" and cfg.audit.points > n_test:
        raise ValueError(f"audit.points must be at most the number of test points ({n_test}), got {cfg.audit.points}")
    check_audit(cfg, models)
    for group, tables in used.items():
        if not set(tables) & set(cfg.tables):
            continue
        g = getattr(cfg, group)
        extra = g.warmup_points if group == "rmc" else 0
        if g.points + extra > n_test:
            what = f"{group}.points" + (" + rmc.warmup_points" if extra else "")
            raise ValueError(f"{what} must be at most the number of test points ({n_test}), got {g.points + extra}")
        if g.train_points > n_train:
            raise ValueError(f"{group}.train_points must be at most the number of training points ({n_train}), "
                             f"got {g.train_points}")
    k = n_classes(models.standard, data.test.x)  # last: the one check that runs the model (one input)
    for name in ("train", "test"):
        check_labels(f"data.{name}.y", getattr(data, name).y, n_classes=k)


def prepared(models: Models, data: Data) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, str,
                                                    dict[str, str]]:
    """The splits as the standard model's input tensors and int64 labels on its device, the data's fingerprint and
    each model's (what the checkpoint keys depend on)."""
    from robustsuite_common.models import as_model_input, model_device

    dev = model_device(models.standard)
    xtr = as_model_input(models.standard, data.train.x)
    xte = as_model_input(models.standard, data.test.x)
    ytr = torch.as_tensor(data.train.y, dtype=torch.int64).to(dev)
    yte = torch.as_tensor(data.test.y, dtype=torch.int64).to(dev)
    data_fp = fingerprint(xtr, ytr, xte, yte)
    model_fp = {role: fingerprint(getattr(models, role)) for role in ("standard", "adversarial")}
    return xtr, ytr, xte, yte, data_fp, model_fp
