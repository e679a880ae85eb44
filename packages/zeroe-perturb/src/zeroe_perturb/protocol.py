"""The Zéroe attack protocol (§3.1) and the change report every attack returns."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from robustsuite_common.contract import renamed

#: The paper's attack levels (§4.2): low, mid and high perturbation probability p.
LEVELS: dict[str, float] = {"low": 0.2, "mid": 0.5, "high": 0.8}

SeedLike = int | str | random.Random | np.random.SeedSequence | np.random.Generator | None


@dataclass(frozen=True)
class Perturbation:
    """What one attack call changed.

    ``attacked`` holds the indices (into the original text's word tokens) of the tokens the attack
    actually changed (for *segment*: the words that lost the whitespace before them), so
    ``fraction_attacked`` is the rate of changed words; ``edit_distance`` is the character Levenshtein distance summed over the
    attacked tokens (and, for *segment*, the removed whitespace) — an upper bound of the
    whole-string distance that equals it whenever the edits do not overlap.
    """

    attack: str
    p: float
    original: str
    perturbed: str
    n_tokens: int
    attacked: tuple[int, ...]
    edit_distance: int

    @property
    def n_attacked(self) -> int:
        return len(self.attacked)

    @property
    def fraction_attacked(self) -> float:
        """Share of the word tokens that were changed (expected value ``p`` when enough words are changeable)."""
        return self.n_attacked / self.n_tokens if self.n_tokens else 0.0

    @property
    def changed(self) -> bool:
        return self.perturbed != self.original

    def to_dict(self) -> dict[str, Any]:
        return {
            "attack": self.attack,
            "p": float(self.p),
            "original": self.original,
            "perturbed": self.perturbed,
            "n_tokens": int(self.n_tokens),
            "attacked": [int(i) for i in self.attacked],
            "n_attacked": int(self.n_attacked),
            "fraction_attacked": float(self.fraction_attacked),
            "edit_distance": int(self.edit_distance),
        }


def check_p(p: float, name: str = "p") -> float:
    """Validate a perturbation probability."""
    if isinstance(p, bool) or not isinstance(p, int | float | np.floating | np.integer):
        raise TypeError(f"{name} must be a float in [0, 1], got {type(p).__name__}")
    p = float(p)
    if not 0.0 <= p <= 1.0 or math.isnan(p):
        raise ValueError(f"{name} must be in [0, 1], got {p}")
    return p


def make_rng(seed: SeedLike) -> random.Random:
    """A private ``random.Random`` stream from ``seed`` (never a global RNG state).

    The attackers draw scalars one at a time, for which Python's Mersenne Twister is an order of
    magnitude cheaper than a numpy ``Generator``; its sequence for a given int/str seed is stable
    across Python versions.  ``None`` draws fresh OS entropy; a numpy ``Generator`` or
    ``SeedSequence`` is turned into a 128-bit seed; a ``random.Random`` is used as is.
    """
    if isinstance(seed, random.Random):
        return seed
    if seed is None:
        return random.Random()
    if isinstance(seed, np.random.Generator):
        return random.Random(int(seed.integers(0, 2**63)))
    if isinstance(seed, np.random.SeedSequence):
        words = seed.generate_state(4, dtype=np.uint32)
        return random.Random(int(sum(int(w) << (32 * k) for k, w in enumerate(words))))
    if isinstance(seed, str):
        return random.Random(seed)
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"seed must be an int, str, random.Random, numpy SeedSequence/Generator or None, "
                        f"got {type(seed).__name__}")
    return random.Random(int(seed))


def item_seed(index: int, *, seed: int) -> str:
    """The seed of item ``index`` of a batch attacked with ``seed`` (a string key ``"zeroe:<seed>:<index>"``).

    Used by the batch form, the datasets mapper, the CLI and the benchmark so that an item's
    perturbation depends only on ``(seed, index)``, not on the other items of its batch.
    """
    return f"zeroe:{int(seed)}:{int(index)}"


@renamed(rng="generator")
def target_count(n_tokens: int, p: float, *, generator: random.Random | None = None) -> int:
    """Number of tokens §3.1 attacks in a text of ``n_tokens`` words: ``p·n`` rounded at random.

    ``floor(p·n)`` plus one more with probability ``frac(p·n)`` (drawn from ``generator``), so that the
    expected count is exactly ``p·n`` and every word is attacked with probability ``p`` — the paper's "goal is to
    attack p·100 % of all tokens".  Without ``generator`` the floor is returned.
    """
    x = p * n_tokens
    k = int(math.floor(x + 1e-9))
    if generator is not None and x - k > 1e-9 and generator.random() < x - k:
        k += 1
    return k


@renamed(rng="generator")
def select_tokens(n_tokens: int, p: float, eligible: Callable[[int], bool], *,
                  generator: random.Random) -> list[int]:
    """Run the §3.1 protocol: the indices of the tokens to attack, in the order drawn.

    The paper draws indices without replacement and flips a coin of probability ``p`` for each until
    ``p·100 %`` of the tokens are attacked.  Repeating those draws until the target is met makes the
    chosen set a uniformly random subset of the target size, which is what is drawn here directly:
    ``target_count(n, p, generator=generator)`` indices among those the attacker can change (``eligible``), or
    all of them when fewer are changeable ("no more indices left").  So each changeable token is attacked
    with probability ``p`` whenever enough of the text is changeable.
    """
    cand = [i for i in range(n_tokens) if eligible(i)]
    k = min(target_count(n_tokens, p, generator=generator), len(cand))
    if k == 0:
        return []
    return generator.sample(cand, k)
