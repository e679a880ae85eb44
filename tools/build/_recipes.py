"""The recipes of every shipped model (recorded in the manifests; a test checks that they still agree).

The build must fit a shared 2-core machine, so the derived Fashion-MNIST models fine-tune the standard one (see
the comment at :data:`FASHION_RECIPES`). Every recipe trains on one intra-op thread with fixed seeds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class FashionRecipe:
    """How a shipped Fashion-MNIST model is trained (recorded in its ``<name>.json``)."""

    name: str
    init_from: str | None = None   # fine-tune from this shipped model's weights (None: from scratch); a head
                                   # of another class count is re-initialised
    known: int = 10                # classes 0..known-1 (6 for the open-set model)
    epochs: int = 5
    lr: float = 3e-3               # peak of a one-cycle schedule, AdamW
    batch_size: int = 128
    weight_decay: float = 5e-4
    noise_sigma: float = 0.0       # Gaussian data augmentation N(0, σ²I) (Cohen et al. 2019, Sec. 3)
    eps: float = 0.0               # > 0: PGD adversarial training, L∞ (Madry et al. 2018)
    pgd_steps: int = 3
    pgd_step_size: float = 0.04
    seed: int = 0


# The build must fit a shared 2-core machine, so the derived models fine-tune the standard one (Departures:
# Madry et al. train PGD-AT from scratch with many steps; here 1 epoch of 2-step PGD with a random start and
# step 0.06 = 0.6 ε, close to Wong et al. 2020's FGSM-RS. Cohen et al. train the noise models from scratch.)
FASHION_RECIPES = {
    "fashion-cnn": FashionRecipe("fashion-cnn", epochs=3),
    "fashion-cnn-at": FashionRecipe("fashion-cnn-at", init_from="fashion-cnn", epochs=1, lr=1e-3, eps=0.1,
                                    pgd_steps=2, pgd_step_size=0.06),
    "fashion-cnn-noise-0.25": FashionRecipe("fashion-cnn-noise-0.25", init_from="fashion-cnn", epochs=1, lr=1e-3,
                                            noise_sigma=0.25),
    "fashion-cnn-noise-0.5": FashionRecipe("fashion-cnn-noise-0.5", init_from="fashion-cnn", epochs=1, lr=1e-3,
                                           noise_sigma=0.5),
    "fashion-osr-cnn": FashionRecipe("fashion-osr-cnn", init_from="fashion-cnn", known=6, epochs=2, lr=2e-3),
    # paper 001's Table V ranks adversarially trained open-set models beside undefended ones: the open-set CNN
    # fine-tuned with the same PGD adversarial training as fashion-cnn-at, two epochs
    "fashion-osr-cnn-at": FashionRecipe("fashion-osr-cnn-at", init_from="fashion-osr-cnn", known=6, epochs=2, lr=1e-3,
                                        eps=0.1, pgd_steps=2, pgd_step_size=0.06),
}


@dataclass(frozen=True)
class RobertaRecipe:
    name: str = "wordnet-roberta"
    vocab_size: int = 4096
    hidden_size: int = 64
    layers: int = 2
    heads: int = 2
    intermediate_size: int = 128
    max_length: int = 64
    epochs: int = 8
    lr: float = 2e-3
    batch_size: int = 32
    seed: int = 0


TEXT_RECIPES = {"wordnet-roberta": RobertaRecipe()}


@dataclass(frozen=True)
class DigitsRecipe:
    """How a shipped 8×8-digits model is trained (these models used to be trained on first use; the fields and
    their values are those of that recipe, so the shipped weights are the ones the cache held)."""

    name: str
    dataset: str = "digits"   # a key of robustsuite.data.builtin.BUILTIN_DATASETS
    epochs: int = 40
    lr: float = 2e-3
    batch_size: int = 64
    weight_decay: float = 5e-4
    adversarial: bool = False
    eps: float = 0.1          # L∞ budget for PGD adversarial training (inputs in [0, 1])
    pgd_steps: int = 7
    pgd_step_size: float = 0.03
    seed: int = 0
    version: int = 2  # 2: trained single-threaded (bit-identical across machines)


DIGITS_RECIPES = {
    "digits-cnn": DigitsRecipe("digits-cnn"),
    "digits-cnn-at": DigitsRecipe("digits-cnn-at", epochs=40, adversarial=True),
    # open-set recognition: trained on the known classes 0–7 of builtin:digits-osr only
    "digits-osr-cnn": DigitsRecipe("digits-osr-cnn", dataset="digits-osr"),
}


@dataclass(frozen=True)
class TextRecipe:
    name: str
    dataset: str = "sentiment-mini"
    vocab_size: int = 2000
    hidden_size: int = 64
    layers: int = 2
    heads: int = 2
    intermediate_size: int = 128
    max_length: int = 48
    epochs: int = 10
    lr: float = 2e-3
    batch_size: int = 32
    seed: int = 0
    version: int = 3  # 2: deterministic WordPiece vocabulary; 3: trained single-threaded


TINY_RECIPES = {"text-tiny": TextRecipe("text-tiny")}


@dataclass(frozen=True)
class TaskRecipe:
    """A tiny RoBERTa (the ``builtin:wordnet-roberta`` architecture) fine-tuned on one WordNet task.

    ``init_from``: the encoder starts from that shipped model's weights (our stand-in for the paper's pre-trained
    RoBERTa: trained on 14,000 WordNet glosses, so it knows the vocabulary and the topics); the task head is new.
    """

    name: str
    task: str                  # "pairs" | "multilabel" | "tagging"
    init_from: str | None = "wordnet-roberta"
    hidden_size: int = 64
    layers: int = 2
    heads: int = 2
    intermediate_size: int = 128
    max_length: int = 64       # = builtin:wordnet-roberta's (its position embeddings are reused)
    epochs: int = 4
    lr: float = 1e-3
    batch_size: int = 32
    n_train: int = 4000        # the first n_train items of the shipped train split (CPU budget of the build)
    seed: int = 0


TASK_RECIPES = {
    # the whole train split (issue 35): the topic-claim pairs reach 0.84 test accuracy, about 0.33 above chance
    "wordnet-pairs-roberta": TaskRecipe("wordnet-pairs-roberta", "pairs", n_train=6000),
    "wordnet-multilabel-roberta": TaskRecipe("wordnet-multilabel-roberta", "multilabel"),
    # the whole train split for 10 epochs (issue 35): token accuracy 0.70 -> 0.81 on the test split, 0.26 above the
    # NOUN share (4 epochs on 4,000 sentences left it 0.18 above, outside the Zéroe headline's 0.2 margin)
    "wordnet-pos-roberta": TaskRecipe("wordnet-pos-roberta", "tagging", epochs=10, n_train=5000),
}
TASK_DATASETS = {"pairs": "wordnet-pairs", "multilabel": "wordnet-multilabel", "tagging": "wordnet-pos"}


ALL = {**FASHION_RECIPES, **TEXT_RECIPES, **DIGITS_RECIPES, **TINY_RECIPES, **TASK_RECIPES}


def recipe_dict(name: str) -> dict:
    return asdict(ALL[name])
