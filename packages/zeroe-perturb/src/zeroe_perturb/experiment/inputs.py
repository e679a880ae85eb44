"""What :func:`~zeroe_perturb.experiment.run` takes: the models and the data of each task type."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robustsuite_common.experiment import Split

TASK_TYPES = ("classification", "pairs", "multilabel", "tagging")


@dataclass(frozen=True)
class Models:
    """The models under attack, one per task type (``None``: that task type is skipped with a note).

    - ``classifier``: ``list[str] -> (N, K)`` logits (the TextAttack model-wrapper contract; a numpy array, a
      tensor, a tuple, a dict with ``"logits"`` or a ``ModelOutput``). Adversarial training needs one exposing a
      Hugging Face ``.model`` and ``.tokenizer``.
    - ``pairs``: ``list[(premise, hypothesis)] -> (N, K)`` logits.
    - ``multilabel``: ``list[str] -> (N, L)`` scores, one independent logit per label.
    - ``tagger``: ``list[list[str]] -> list[(n_i, K)]`` logits, one row per token.
    - ``names``: how the report names each model (e.g. its spec), by task type; ``skipped``: why a task type's
      model is missing, by task type (shown in the notes).
    """

    classifier: Callable[[list[str]], Any] | None = None
    pairs: Callable[[list[tuple[str, str]]], Any] | None = None
    multilabel: Callable[[list[str]], Any] | None = None
    tagger: Callable[[list[list[str]]], Any] | None = None
    names: Mapping[str, str] = field(default_factory=dict)
    skipped: Mapping[str, str] = field(default_factory=dict)

    def of(self, task: str) -> Any:
        return {"classification": self.classifier, "pairs": self.pairs, "multilabel": self.multilabel,
                "tagging": self.tagger}[task]

    def name(self, task: str) -> str:
        return str(self.names.get(task, ""))


@dataclass(frozen=True)
class Data:
    """The data of each task type, as :class:`robustsuite_common.experiment.Split` (inputs, labels, the user's row
    ids and label names; the experiment draws its seeded subset from each):

    - ``classification``: texts and integer labels (the test texts attacked); ``train``: texts and labels the
      defended models are fine-tuned on (adversarial training only);
    - ``pairs``: ``(premise, hypothesis)`` tuples and integer labels;
    - ``multilabel``: texts and a 0/1 label matrix ``(N, L)`` (``label_names``: the L labels);
    - ``tagging``: token lists and their tags, a list of per-sentence tag lists or a ``(N, max_len)`` matrix
      padded with -1 (tag -1: not scored).

    ``label_names`` (by task type, e.g. a dataset's class names) fills the ``label_names`` of a split that has none
    (``train`` takes the classification names), so per-sample records name the labels.
    """

    classification: Split | None = None
    pairs: Split | None = None
    multilabel: Split | None = None
    tagging: Split | None = None
    train: Split | None = None
    label_names: Mapping[str, Sequence[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for task in (*TASK_TYPES, "train"):
            split = getattr(self, task)
            names = self.label_names.get("classification" if task == "train" else task)
            if isinstance(split, Split) and split.label_names is None and names is not None:
                object.__setattr__(self, task, dataclasses.replace(split, label_names=tuple(names)))

    def of(self, task: str) -> Split | None:
        return getattr(self, task)


def _labels_array(y: Any) -> np.ndarray:
    return y.detach().cpu().numpy() if hasattr(y, "detach") else np.asarray(y)


def check_inputs(models: Any, data: Any) -> None:
    """Types of ``models`` and ``data`` (their contents are checked per task, before any model call)."""
    if not isinstance(models, Models):
        raise TypeError(f"models must be a zeroe_perturb.experiment.Models, got {type(models).__name__}")
    if not isinstance(data, Data):
        raise TypeError(f"data must be a zeroe_perturb.experiment.Data, got {type(data).__name__}")
    for task in TASK_TYPES:
        m, split = models.of(task), data.of(task)
        if m is not None and not callable(m):
            field = {"classification": "classifier", "tagging": "tagger"}.get(task, task)
            raise TypeError(f"models.{field} must be callable, got {type(m).__name__}")
        if split is not None and not isinstance(split, Split):
            raise TypeError(f"data.{task} must be a robustsuite_common.experiment.Split, got {type(split).__name__}")
    if data.train is not None and not isinstance(data.train, Split):
        raise TypeError(f"data.train must be a robustsuite_common.experiment.Split, got {type(data.train).__name__}")
