"""The keyboard-typo attacker (§3.2, Belinkov & Bisk): characters replaced by a neighbouring key."""

from __future__ import annotations

import random
from collections.abc import Mapping

from .base import _MEMO_MAX, Attacker
from .streams import char_hits, first_hit


class KeyboardTypo(Attacker):
    """Replace characters by QWERTY-adjacent keys, each with probability φ (§3.2, Belinkov & Bisk)."""

    name = "keyboard-typo"

    def __init__(self, *, phi: float | None = None, ensure_change: bool = True,
                 layout: Mapping[str, str] | None = None) -> None:
        super().__init__(phi=phi, ensure_change=ensure_change)
        from ..keyboard import QWERTY_NEIGHBOURS

        self.layout = dict(QWERTY_NEIGHBOURS if layout is None else layout)

    def eligible(self, word: str) -> bool:
        return any(c.lower() in self.layout for c in word)

    def _plan(self, word: str) -> tuple[list[int], list[tuple[str, ...]]]:
        """Positions of the word's keys and their neighbours in the character's case (memoised)."""
        plans = vars(self).setdefault("_plans", {})
        plan = plans.get(word)
        if plan is None:
            if len(plans) > _MEMO_MAX:
                plans.clear()
            idx = [k for k, c in enumerate(word) if c.lower() in self.layout]
            nbs = [tuple(r.upper() for r in self.layout[word[k].lower()]) if word[k].isupper()
                   else tuple(self.layout[word[k].lower()]) for k in idx]
            plan = plans[word] = (idx, nbs)
        return plan

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        plans = self.__dict__.get("_plans")
        plan = plans.get(word) if plans is not None else None
        idx, nbs = plan if plan is not None else self._plan(word)
        m = len(idx)
        if self.ensure_change and 0.0 < phi < 1.0 and m > 0:
            # char_hits(m, phi, rng, True) inlined draw for draw
            rand = rng.random
            first = first_hit(m, phi, rand)
            hit = [False] * first
            hit.append(True)
            hit.extend([rand() < phi for _ in range(m - first - 1)])
        else:
            hit = char_hits(m, phi, rng, self.ensure_change)
        chars = list(word)
        getrandbits = rng.getrandbits
        for k, h, nb in zip(idx, hit, nbs, strict=False):
            if h:
                m = len(nb)  # nb[rng.randrange(m)], randbelow inlined
                b = m.bit_length()
                j = getrandbits(b)
                while j >= m:
                    j = getrandbits(b)
                chars[k] = nb[j]
        return "".join(chars)
