"""The ten Zéroe attackers (§3.2), each applied under the §3.1 protocol, one family per module behind the base
class :class:`~.base.Attacker` (as foolbox arranges its attacks):

- :mod:`.base`: the protocol loop (:class:`Attacker`) and :class:`~.base.FastPath` (an attacker with its own loop);
  :mod:`.streams`: the random streams, seeded and drawn from as CPython does;
- :mod:`.shuffle` (inner-shuffle, full-shuffle), :mod:`.intrude`, :mod:`.deletion` (disemvowel, truncate),
  :mod:`.segment`, :mod:`.typo` (keyboard-typo), :mod:`.lexical` (natural-noise, phonetic), :mod:`.visual`.

Every attacker is a class with keyword-only hyper-parameters; calling ``attacker(text, p, seed=...)``
returns a :class:`~zeroe_perturb.protocol.Perturbation`.  ``p`` is the per-word attack probability
of §3.1 and, where §3.2 says so (intrude, keyboard-typo, visual), φ = p is a per-character one,
unless ``phi`` is given.  ``eligible(word)`` is true exactly when the attacker can change ``word``,
so the reported rate is the rate of words actually changed.
"""

from __future__ import annotations

from .base import Attacker, FastPath
from .deletion import VOWELS, Disemvowel, Truncate
from .intrude import INTRUDE_SYMBOLS, Intrude
from .lexical import NaturalNoise, Phonetic
from .segment import Segment
from .shuffle import FullShuffle, InnerShuffle
from .streams import _make_rng as _make_rng  # the str-seed fast path (tests compare it with random.Random)
from .streams import char_hits, sample
from .typo import KeyboardTypo
from .visual import Visual

ATTACKER_CLASSES: dict[str, type[Attacker]] = {
    cls.name: cls
    for cls in (InnerShuffle, FullShuffle, Intrude, Disemvowel, Truncate, Segment, KeyboardTypo,
                NaturalNoise, Phonetic, Visual)
}

__all__ = [
    "ATTACKER_CLASSES",
    "INTRUDE_SYMBOLS",
    "VOWELS",
    "Attacker",
    "Disemvowel",
    "FastPath",
    "FullShuffle",
    "InnerShuffle",
    "Intrude",
    "KeyboardTypo",
    "NaturalNoise",
    "Phonetic",
    "Segment",
    "Truncate",
    "Visual",
    "char_hits",
    "sample",
]
