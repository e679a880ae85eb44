"""Illusion of robustness (paper 000): the umbrella resolves the model and dataset specs; ``iortemp.experiment``
does the work (served systems, adversary temperatures, DDi-AT, the vision check beside AutoAttack)."""

from __future__ import annotations

from robustsuite_common.config import Str, config, param

from ..errors import ConfigError

NAME = "iortemp"
PAPER = "000"
EXPERIMENT = "iortemp.experiment"
#: iortemp.experiment.Result.title, written here because `robustsuite methods` lists the titles without importing the
#: experiment (and torch); tests/test_runner_titles.py holds them equal
TITLE = "Illusion of robustness: extreme confidence, adversary temperature scaling, DDi-AT"



@config
class Inputs:
    """The text classifier and its data (Tables 1-5), and the optional vision model and images (PGD beside
    AutoAttack; an empty ``vision_model`` skips that part)."""

    model: Str = param("builtin:wordnet-roberta", doc="text classifier (DDi-AT needs a transformers model); an image "
                       "model with an image dataset and no vision_model: the vision part alone (the audit)",
                       unit="model spec")
    dataset: Str = param("builtin:wordnet-topics", doc="text data: test and validation texts, training texts for "
                                                        "DDi-AT (images with an image model)", unit="dataset spec")
    vision_model: Str = param("builtin:fashion-cnn", doc="vision model ('' skips the vision part)", unit="model spec")
    vision_dataset: Str = param("builtin:fashion-mnist", doc="images for the vision part", unit="dataset spec")


def checks_model(specs: Inputs) -> str:
    """The spec the temperature-illusion check is about: the vision model (``model`` itself when it is one)."""
    return specs.vision_model or specs.model


def inputs(ctx, specs: Inputs, cfg):
    from iortemp.experiment import Data, Models

    ds = ctx.dataset(specs.dataset)
    if ds.modality == "vision" and not specs.vision_model:  # an image model alone: the vision part (the audit)
        return Models(vision=ctx.model(specs.model)), Data.from_datasets(vision=ds)
    if ds.modality != "text":
        raise ConfigError(f"[methods.{NAME}] dataset must be a text dataset, got {specs.dataset} ({ds.modality})")
    vision = vds = None
    if specs.vision_model:
        vds = ctx.dataset(specs.vision_dataset)
        if vds.modality != "vision":
            raise ConfigError(f"[methods.{NAME}] vision_dataset must hold images, got {specs.vision_dataset} "
                              f"({vds.modality})")
        vision = ctx.model(specs.vision_model)
    models = Models(text=ctx.model(specs.model), vision=vision)
    return models, Data.from_datasets(text=ds, vision=vds)
