"""Attacks used by the evaluation protocol, one family per module: :mod:`.text` (the package's offline greedy word
swap, and every Sec. 5.1 text attack by name), :mod:`.recipes` (TextAttack's recipes, offline where their
resources are local) and :mod:`.vision` (L∞ PGD and standard AutoAttack); :mod:`.output` holds what they return.

Every attack is an object whose hyper-parameters are keyword-only constructor arguments and whose call
``attack(model, inputs, labels, *, seed=0, progress=False) -> AttackOutput`` attacks ``model`` (which the
protocol sets to the temperature-modified model). Success is judged on that model; the protocol re-scores
the adversarial inputs on the unmodified model.
"""

from .output import AttackOutput
from .recipes import TextAttackRecipe
from .text import TEXT_ATTACKS, EmbeddingNeighbours, GreedyWordSwap, goal_probabilities, text_attack
from .vision import AutoAttackLinf, PGDLinf

__all__ = [
    "TEXT_ATTACKS",
    "AttackOutput",
    "AutoAttackLinf",
    "EmbeddingNeighbours",
    "GreedyWordSwap",
    "PGDLinf",
    "TextAttackRecipe",
    "goal_probabilities",
    "text_attack",
]
