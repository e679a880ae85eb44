"""Zéroe section: the ten low-level attackers on a text classifier and the paper's other task types (pairs,
multi-label, tagging), with the Table 5 ranking compared — all computed by ``zeroe_perturb.experiment``."""

from __future__ import annotations

from typing import Literal

from robustsuite_common.config import Str, config, param

NAME = "zeroe_perturb"
PAPER = "002"
EXPERIMENT = "zeroe_perturb.experiment"
#: zeroe_perturb.experiment.Result.title, written here because `robustsuite methods` lists the titles without importing the
#: experiment (and torch); tests/test_runner_titles.py holds them equal
TITLE = "Zéroe: low-level adversarial text attacks"
TASKS = ("pairs", "multilabel", "tagging")


@config
class Inputs:
    """The models and data of each task type (model: ``list[str] -> logits``; pairs: ``list[(premise, hypothesis)]``;
    tagger: ``list[list[str]] -> list[(n_i, K)]``)."""

    model: Str = param("builtin:wordnet-roberta", unit="model spec",
                       doc="text classifier attacked (byte-level BPE: accents and look-alike characters reach it)")
    dataset: Str = param("builtin:wordnet-topics", unit="dataset spec", doc="texts and labels")
    split: Literal["train", "val", "test"] = param("test", doc="split of the dataset attacked")
    pairs_model: Str = param("builtin:wordnet-pairs-roberta", unit="model spec", doc="sentence-pair classifier")
    pairs_dataset: Str = param("builtin:wordnet-pairs", unit="dataset spec", doc="(premise, hypothesis) pairs")
    multilabel_model: Str = param("builtin:wordnet-multilabel-roberta", unit="model spec",
                                  doc="multi-label classifier (one logit per label)")
    multilabel_dataset: Str = param("builtin:wordnet-multilabel", unit="dataset spec", doc="texts, 0/1 label matrix")
    tagging_model: Str = param("builtin:wordnet-pos-roberta", unit="model spec", doc="token tagger")
    tagging_dataset: Str = param("builtin:wordnet-pos", unit="dataset spec", doc="token lists and their tags")



def inputs(ctx, specs: Inputs, cfg):
    from zeroe_perturb.experiment import Data, Models

    ds = ctx.dataset(specs.dataset)
    models = {"classifier": ctx.model(specs.model)}
    data = {"classification": getattr(ds, specs.split)}
    label_names = {"classification": ds.classes}
    names, skipped = {"classification": specs.model}, {}
    if cfg.defense.enabled:
        data["train"] = ds.train
    allowed = getattr(ctx, "allowed_models", None)  # a user run names its models: default builtins are skipped
    for task in TASKS:
        spec = getattr(specs, f"{task}_model")
        if not getattr(cfg, task).enabled:
            continue
        if allowed is not None and spec.startswith("builtin:") and spec not in allowed:
            skipped[task] = (f"this run names its own models, not the builtin {spec}: name {task}_model, or set "
                             f"config.{task}.enabled = false")
            continue
        tds = ctx.dataset(getattr(specs, f"{task}_dataset"))
        models["tagger" if task == "tagging" else task] = ctx.model(spec)
        data[task] = tds.test
        label_names[task] = tds.classes
        names[task] = spec
    return Models(**models, names=names, skipped=skipped), Data(**data, label_names=label_names)
