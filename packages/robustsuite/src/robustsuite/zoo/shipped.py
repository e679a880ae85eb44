"""The shipped-model registry: every ``builtin:<name>`` model is a file in the package, loaded without training.

``resources/manifest.json`` (and ``resources_wordnet_tasks/manifest.json`` for the Zéroe section's task models)
record the SHA-256 of every shipped file and, per model, its recipe and the accuracy the build measured, which
the tests compare against with a Clopper-Pearson interval. All of them are rebuilt byte-identical from Debian's
``dataset-fashion-mnist`` and ``wordnet-base`` and scikit-learn's digits by ``tools/build/`` (one intra-op
thread, fixed seeds); nothing here trains.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

ROOT = Path(__file__).parents[1]
RESOURCES = ROOT / "resources"
MODELS_DIR = RESOURCES / "models"
TASKS_DIR = ROOT / "resources_wordnet_tasks"
# name: (kind, the builtin dataset it was trained on, description); kind "vision" | "text" | a WordNet task
SHIPPED = {
    "fashion-cnn": ("vision", "fashion-mnist", "CNN on Fashion-MNIST, standard training"),
    "fashion-cnn-at": ("vision", "fashion-mnist", "the same CNN, PGD adversarial training, L∞ eps 0.1"),
    "fashion-cnn-noise-0.25": ("vision", "fashion-mnist", "the same CNN, Gaussian noise training σ=0.25"),
    "fashion-cnn-noise-0.5": ("vision", "fashion-mnist", "the same CNN, Gaussian noise training σ=0.5"),
    "fashion-osr-cnn": ("vision", "fashion-mnist-osr", "the same CNN on the known classes 0–5 of "
                        "builtin:fashion-mnist-osr"),
    "fashion-osr-cnn-at": ("vision", "fashion-mnist-osr", "the open-set CNN, PGD adversarial training, L∞ eps 0.1"),
    "wordnet-roberta": ("text", "wordnet-topics", "tiny RoBERTa + byte-level BPE on builtin:wordnet-topics"),
    "wordnet-pairs-roberta": ("pairs", "wordnet-pairs", "tiny RoBERTa (wordnet-roberta's tokenizer and encoder) "
                              "fine-tuned on builtin:wordnet-pairs: premise/hypothesis pairs"),
    "wordnet-multilabel-roberta": ("multilabel", "wordnet-multilabel", "the same, multi-label over 8 topics on "
                                   "builtin:wordnet-multilabel"),
    "wordnet-pos-roberta": ("tagging", "wordnet-pos", "the same, token tagger (NOUN/VERB/ADJ/ADV) on "
                            "builtin:wordnet-pos"),
    "digits-cnn": ("vision", "digits", "CNN on 8×8 digits, standard training"),
    "digits-cnn-at": ("vision", "digits", "the same CNN, PGD adversarial training, L∞ eps 0.1"),
    "digits-osr-cnn": ("vision", "digits-osr", "the same CNN trained on the known classes 0–7 of builtin:digits-osr"),
    "text-tiny": ("text", "sentiment-mini", "tiny BERT + WordPiece tokenizer on builtin:sentiment-mini"),
}
MAX_LENGTH = {"text-tiny": 48}  # tokens; the other text models: 64 (their recipes' max_length)


@functools.cache
def manifest(tasks: bool = False) -> dict:
    """The build record of the shipped files (``tasks=True``: of the WordNet task models)."""
    return json.loads(((TASKS_DIR if tasks else RESOURCES) / "manifest.json").read_text(encoding="utf-8"))


def record(name: str) -> dict | None:
    """The manifest record (recipe, measured test accuracy) of shipped model ``name``."""
    return manifest(SHIPPED[name][0] not in ("vision", "text"))["models"].get(name)


def adversarial_eps(name: str) -> float | None:
    """The L∞ ε shipped model ``name`` was adversarially trained at (its recipe), else ``None``."""
    recipe = (record(name) or {}).get("recipe", {})
    trained = recipe.get("adversarial", recipe.get("eps", 0) > 0)
    return float(recipe["eps"]) if trained and recipe.get("eps") else None


def load_vision(name: str, directory: Path = MODELS_DIR):
    """A shipped vision model from ``<directory>/<name>.safetensors`` (no pickle involved); the architecture is the
    file's ``architecture`` metadata."""
    from safetensors import safe_open
    from safetensors.torch import load_file

    from .nets import ARCHITECTURES, DigitsCNN

    path = directory / f"{name}.safetensors"
    with safe_open(str(path), "pt") as f:
        arch = (f.metadata() or {}).get("architecture", "fashion-cnn")
    state = load_file(str(path))
    k = state["head.weight"].shape[0]
    model = DigitsCNN(k) if arch == "digits-cnn" else ARCHITECTURES[arch](k, in_channels=state["features.0.weight"].shape[1])
    model.load_state_dict(state)
    return model.eval()


def load(name: str, directory: Path | None = None):
    """The shipped model ``name``: a vision ``nn.Module``, a text classifier
    (:class:`robustsuite_common.text.TextClassifier`) or a WordNet task model wrapped by its task's wrapper
    (:data:`zeroe_perturb.hf.TASK_WRAPPERS`)."""
    if name not in SHIPPED:
        raise KeyError(f"no shipped model {name!r}; known: {sorted(SHIPPED)}")
    kind = SHIPPED[name][0]
    if kind == "vision":
        return load_vision(name, directory or MODELS_DIR)
    from transformers import (
        AutoModelForSequenceClassification,
        AutoModelForTokenClassification,
        AutoTokenizer,
    )

    if kind == "text":  # a save_pretrained directory: model and tokenizer
        from robustsuite_common.text import TextClassifier

        path = str((directory or MODELS_DIR) / name)
        model = AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True)
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        return TextClassifier(model, tokenizer, max_length=MAX_LENGTH.get(name, 64))
    from zeroe_perturb.hf import TASK_WRAPPERS

    auto = AutoModelForTokenClassification if kind == "tagging" else AutoModelForSequenceClassification
    model = auto.from_pretrained(str((directory or TASKS_DIR / "models") / name), local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(str(MODELS_DIR / "wordnet-roberta"), local_files_only=True)
    tokenizer.model_max_length = 64
    return TASK_WRAPPERS[kind](model, tokenizer, max_length=64)
