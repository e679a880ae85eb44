"""Zéroe: ten low-level adversarial text attackers and their benchmark protocol (Eger & Benz, 2020).

>>> from zeroe_perturb import perturb
>>> perturb("Adversarial attacks are harmless.", "disemvowel", 0.8, seed=0)  # doctest: +SKIP
'dvrsrl ttcks are hrmlss.'
"""

from importlib.metadata import version as _version

from ._api import ATTACKS, get_attacker, perturb, perturb_batch
from ._edit import levenshtein
from .attackers import (
    INTRUDE_SYMBOLS,
    Attacker,
    Disemvowel,
    FullShuffle,
    InnerShuffle,
    Intrude,
    KeyboardTypo,
    NaturalNoise,
    Phonetic,
    Segment,
    Truncate,
    Visual,
)
from .audit import noise_check
from .benchmark import (
    BenchmarkResult,
    chance_score,
    evaluate,
    evaluate_seeds,
)
from .natural_noise import (
    load_codespell_lexicon,
    load_default_lexicon,
    load_lexicon,
    load_natural_lexicon,
    parse_codespell,
    parse_lexicon,
)
from .phonetic import PhoneticRespeller, phonetic_similarity
from .protocol import LEVELS, Perturbation, item_seed, select_tokens, target_count
from .ranking import PAPER_TABLE5, kendall_tau_vs_paper, ranking_table
from .tasks import TAGGING_ATTACKS, attack_sentences, evaluate_pairs, evaluate_tagging, tagging_chance_score
from .visual import load_neighbours

__version__ = _version("zeroe-perturb")


def __getattr__(name: str):
    """``zeroe_perturb.experiment`` (the paper's experiment: typed config, presets, ``run``) and ``zeroe_perturb.hf``
    (Hugging Face models as the task contracts) are imported on first use, so ``import zeroe_perturb`` stays light
    (no pydantic, no scipy)."""
    if name in ("experiment", "hf"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "ATTACKS",
    "Attacker",
    "BenchmarkResult",
    "Disemvowel",
    "FullShuffle",
    "INTRUDE_SYMBOLS",
    "InnerShuffle",
    "Intrude",
    "KeyboardTypo",
    "LEVELS",
    "NaturalNoise",
    "PAPER_TABLE5",
    "Perturbation",
    "Phonetic",
    "PhoneticRespeller",
    "Segment",
    "TAGGING_ATTACKS",
    "Truncate",
    "Visual",
    "__version__",
    "attack_sentences",
    "chance_score",
    "evaluate",
    "evaluate_pairs",
    "evaluate_seeds",
    "evaluate_tagging",
    "experiment",
    "get_attacker",
    "hf",
    "item_seed",
    "kendall_tau_vs_paper",
    "levenshtein",
    "load_codespell_lexicon",
    "load_default_lexicon",
    "load_lexicon",
    "load_natural_lexicon",
    "load_neighbours",
    "noise_check",
    "parse_codespell",
    "parse_lexicon",
    "perturb",
    "perturb_batch",
    "phonetic_similarity",
    "ranking_table",
    "select_tokens",
    "tagging_chance_score",
    "target_count",
]
