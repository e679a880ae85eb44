"""Functional entry points: ``perturb`` and ``perturb_batch`` over the ten attackers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np

from robustsuite_common.checks import check_int, check_texts

from .attackers import ATTACKER_CLASSES, Attacker
from .protocol import Perturbation, SeedLike, check_p

#: The ten attackers of §3.2, in the paper's order.
ATTACKS: tuple[str, ...] = (
    "inner-shuffle",
    "full-shuffle",
    "intrude",
    "disemvowel",
    "truncate",
    "segment",
    "keyboard-typo",
    "natural-noise",
    "phonetic",
    "visual",
)

_DEFAULTS: dict[str, Attacker] = {}


def get_attacker(attack: str | Attacker, **kwargs: Any) -> Attacker:
    """The attacker named ``attack`` (one of :data:`ATTACKS`), built with keyword hyper-parameters.

    Without keyword arguments the default instance is shared (its resources load once).

    Paper: one of the ten attackers of §3.2 (Table 1).
    """
    if isinstance(attack, Attacker):
        if kwargs:
            raise TypeError("hyper-parameters cannot be passed together with an Attacker instance")
        return attack
    if not isinstance(attack, str) or attack not in ATTACKER_CLASSES:
        raise ValueError(f"attack must be one of {', '.join(ATTACKS)}; got {attack!r}")
    if kwargs:
        return ATTACKER_CLASSES[attack](**kwargs)
    if attack not in _DEFAULTS:
        _DEFAULTS[attack] = ATTACKER_CLASSES[attack]()
    return _DEFAULTS[attack]


@overload
def perturb(text: str, attack: str | Attacker, p: float, *, seed: SeedLike = ...,
            report: Literal[False] = ...) -> str: ...
@overload
def perturb(text: str, attack: str | Attacker, p: float, *, seed: SeedLike = ...,
            report: Literal[True]) -> Perturbation: ...
def perturb(text: str, attack: str | Attacker, p: float, *, seed: SeedLike = None,
            report: bool = False) -> str | Perturbation:
    """Attack ``text`` with ``attack`` at perturbation probability ``p`` (§3.1 protocol, φ = p).

    ``seed`` (int, str, ``random.Random``, numpy ``SeedSequence``/``Generator`` or ``None``) makes the result
    reproducible; the global numpy state is never used.  With ``report=True`` a
    :class:`Perturbation` (tokens attacked, character edit distance, …) is returned instead of the
    string.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    p = check_p(p)
    result = get_attacker(attack)(text, p, seed=seed)
    return result if report else result.perturbed


@overload
def perturb_batch(texts: Sequence[str], attack: str | Attacker, p: float, *, seed: int | None = ...,
                  report: Literal[False] = ..., start: int = ...) -> list[str]: ...
@overload
def perturb_batch(texts: Sequence[str], attack: str | Attacker, p: float, *, seed: int | None = ...,
                  report: Literal[True], start: int = ...) -> list[Perturbation]: ...
def perturb_batch(texts: Sequence[str], attack: str | Attacker, p: float, *, seed: int | None = None,
                  report: bool = False, start: int = 0) -> list[str] | list[Perturbation]:
    """Attack every text of ``texts``; item ``i`` uses the seed ``item_seed(start + i, seed=seed)``.

    So an item's perturbation depends only on ``(seed, start + i)``, not on the rest of the batch:
    ``perturb_batch(texts, a, p, seed=s)[i] == perturb(texts[i], a, p, seed=item_seed(start + i, seed=s))``.
    ``seed=None`` draws fresh entropy once for the whole batch.

    Paper: the attack protocol of §3.1 (each word attacked with probability p).
    """
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of str, got a single str (use perturb() for a single text)")
    texts = check_texts("texts", texts, allow_empty=True)
    p = check_p(p)
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int | np.integer)):
        raise TypeError(f"seed must be an int or None for a batch, got {type(seed).__name__}")
    start = check_int("start", start, ge=0)
    attacker = get_attacker(attack)
    # a fresh SeedSequence's entropy is an int (numpy's stub says int | Sequence[int] | None)
    base = int(np.random.SeedSequence().entropy) if seed is None else int(seed)  # pyright: ignore[reportArgumentType]
    # = [attacker(t, p, seed=item_seed(start + i, seed=base)) for i, t in enumerate(texts)], state for state
    results = attacker._batch(texts, p, base, start)
    return results if report else [r.perturbed for r in results]
