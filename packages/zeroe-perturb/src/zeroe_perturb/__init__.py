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
from .visual import load_neighbours

__version__ = _version("zeroe-perturb")
__all__ = [
    "ATTACKS",
    "INTRUDE_SYMBOLS",
    "LEVELS",
    "Attacker",
    "Disemvowel",
    "FullShuffle",
    "InnerShuffle",
    "Intrude",
    "KeyboardTypo",
    "NaturalNoise",
    "Perturbation",
    "Phonetic",
    "PhoneticRespeller",
    "Segment",
    "Truncate",
    "Visual",
    "__version__",
    "get_attacker",
    "item_seed",
    "levenshtein",
    "load_codespell_lexicon",
    "load_default_lexicon",
    "load_lexicon",
    "load_natural_lexicon",
    "load_neighbours",
    "parse_codespell",
    "parse_lexicon",
    "perturb",
    "perturb_batch",
    "phonetic_similarity",
    "select_tokens",
    "target_count",
]
