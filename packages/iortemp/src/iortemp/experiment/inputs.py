"""What ``experiment.run`` takes: the models (:class:`Models`) and the data (:class:`Data`), checked before work."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from robustsuite_common.checks import check_images, check_labels, check_texts
from robustsuite_common.experiment import Split

from .config import Config

__all__ = ["Data", "Models", "check_inputs", "named_splits"]


@dataclass(frozen=True)
class Models:
    """``text``: a text classifier ``list[str] -> (N, K)`` logits (the TextAttack ``ModelWrapper`` contract,
    e.g. :class:`iortemp.HFTextClassifier`); DDi-AT and the ``wordswap`` attack also need its ``.model`` (a
    transformers sequence classifier) and ``.tokenizer``. ``vision``: an optional ``torch.nn.Module`` taking
    ``(N, C, H, W)`` images in [0, 1] and returning logits (a tensor, a tuple, a dict with ``"logits"`` or a
    ``ModelOutput``); without it the vision part is skipped. The audit preset (``audit.only``) needs ``vision``
    only (``text`` may be ``None``)."""

    text: Any = None
    vision: Any = None


@dataclass(frozen=True)
class Data:
    """``test`` / ``val``: text :class:`~robustsuite_common.experiment.Split` s (lists of strings, integer
    labels, the user's row ``ids`` and ``label_names``); ``train``: texts for DDi-AT (needed when it is
    enabled); ``vision_test`` / ``vision_val``: image splits (``(N, C, H, W)`` float tensors in [0, 1]) for the
    vision part (needed with a vision model)."""

    test: Split | None = None  # None only with the audit preset (``audit.only``: no text part)
    val: Split | None = None
    train: Split | None = None
    vision_test: Split | None = None
    vision_val: Split | None = None

    @classmethod
    def from_datasets(cls, *, text: Any = None, vision: Any = None) -> Data:
        """The data of two datasets (objects with ``train``, ``val``, ``test`` splits and ``classes``, e.g. the
        umbrella's): ``text`` gives ``train``/``val``/``test``, ``vision`` gives ``vision_val``/``vision_test``;
        a split without label names gets its dataset's ``classes``."""
        train = val = test = vision_val = vision_test = None
        if text is not None:
            train, val, test = named_splits(text)
        if vision is not None:
            _, vision_val, vision_test = named_splits(vision)
        return cls(test=test, val=val, train=train, vision_test=vision_test, vision_val=vision_val)


def named_splits(dataset: Any) -> tuple[Split, Split, Split]:
    """``dataset``'s ``(train, val, test)`` splits, each with the dataset's ``classes`` as label names where the
    split names none (the names the user wrote win)."""
    def name(split: Split) -> Split:
        return split if split.label_names is not None else replace(split, label_names=tuple(dataset.classes))

    return name(dataset.train), name(dataset.val), name(dataset.test)


def _split(name: str, split: Any, *, images: bool) -> None:
    if not isinstance(split, Split):
        raise TypeError(f"data.{name} must be a robustsuite_common.experiment.Split, got {type(split).__name__}")
    if images:
        check_images(f"data.{name}.x", split.x)
    else:
        check_texts(f"data.{name}.x", split.x)
    check_labels(f"data.{name}.y", split.y, length=len(split.x))


def check_inputs(models: Any, data: Any, config: Any) -> None:
    """Refuse bad inputs before any work: ``TypeError``/``ValueError`` naming the argument."""
    if not isinstance(config, Config):
        raise TypeError(f"config must be an iortemp.experiment.Config (e.g. preset('demo')), got "
                        f"{type(config).__name__}")
    if not isinstance(models, Models):
        raise TypeError(f"models must be an iortemp.experiment.Models, got {type(models).__name__}")
    if not isinstance(data, Data):
        raise TypeError(f"data must be an iortemp.experiment.Data, got {type(data).__name__}")
    import torch

    if config.audit.only:  # the audit preset: the vision model and its test images only
        if not isinstance(models.vision, torch.nn.Module):
            raise TypeError("models.vision must be a torch.nn.Module for the audit (audit.only), got "
                            f"{type(models.vision).__name__}")
        if data.vision_test is None:
            raise ValueError("data.vision_test must hold images for the audit (audit.only)")
        _split("vision_test", data.vision_test, images=True)
        return
    if not callable(models.text) or isinstance(models.text, torch.nn.Module):
        raise TypeError("models.text must be a text classifier: a callable list[str] -> logits (N, K), e.g. "
                        f"iortemp.HFTextClassifier(model, tokenizer); got {type(models.text).__name__}")
    _split("test", data.test, images=False)
    _split("val", data.val, images=False)
    needs_train = config.ddi_at.enabled or config.ablation.enabled
    if needs_train:
        if data.train is None:
            raise ValueError("data.train must hold training texts when ddi_at or ablation is enabled")
        _split("train", data.train, images=False)
        for attr in ("model", "tokenizer"):
            if getattr(models.text, attr, None) is None:
                raise TypeError(f"models.text must have .{attr} (a transformers classifier and its tokenizer) for "
                                "DDi-AT")
    if "wordswap" in config.text.attacks.names and (getattr(models.text, "model", None) is None
                                                    or getattr(models.text, "tokenizer", None) is None):
        raise TypeError("the wordswap attack needs models.text with .model and .tokenizer (a transformers classifier)")
    if models.vision is not None:
        if not isinstance(models.vision, torch.nn.Module):
            raise TypeError(f"models.vision must be a torch.nn.Module, got {type(models.vision).__name__}")
        for name in ("vision_test", "vision_val"):
            if getattr(data, name) is None:
                raise ValueError(f"data.{name} must hold images when models.vision is given")
            _split(name, getattr(data, name), images=True)
