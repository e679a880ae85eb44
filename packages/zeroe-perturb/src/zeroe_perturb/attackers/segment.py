"""The segment attacker (§3.2): adjacent words joined by removing the whitespace between them."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from ..protocol import Perturbation
from .base import _SPLIT, FastPath, _report_template, report
from .streams import _bit_steps, draw_picks, target


class Segment(FastPath):
    """Join adjacent words (§3.2): an attacked word is glued to its left neighbour, the following
    words are appended with probabilities φ², φ³, … to avoid giant words.

    Only whitespace-only gaps are removed, so punctuation stays exactly where it was (words
    separated by punctuation are never joined).  The attacked tokens are the words that lose their
    preceding whitespace; §3.1 attacks ``p·n`` of them (rounded at random, see
    :func:`~zeroe_perturb.protocol.target_count`), or every joinable one when fewer exist.
    """

    name = "segment"

    def eligible(self, word: str) -> bool:  # decided per position (the gap before the word), see _run
        return True

    def perturb_word(self, word: str, phi: float, rng: random.Random) -> str:
        return word

    @staticmethod
    def joinable_gap(gap: str) -> bool:
        """Whether the text between two words may be removed (non-empty and whitespace only)."""
        return gap != "" and gap.isspace()

    def _run(self, texts: Sequence[str], p: float, rng: random.Random | None, base: int,
             start: int) -> list[Perturbation]:
        """The segment attack over ``texts``.

        Draws, in order: the §3.1 rounding of ``p·n``, a uniform permutation of the joinable gaps
        (``Random.sample`` of all of them, pool branch, draw for draw), then one ``random()`` per
        attempted extension of a join to the next word (probability φ², φ³, …)."""
        phi = p if self.phi is None else self.phi
        powers: list[float] = []
        rng, entries = self._entries(texts, rng, base, start)
        rand = rng.random
        out: list[Perturbation] = []
        append = out.append
        for text, (parts, n, open_gaps, cand, nc, steps, template, gap_len) in entries:
            if n >= len(powers):  # powers[k] = phi**k for the k <= n + 1 of this text
                powers = [phi**k for k in range(2 * n + 2)]
            budget = target(p, n, rand, nc)  # target_count(n, p, generator=rng), capped by the joinable gaps
            if not budget:
                append(report(template, p, text, None, [], 0))
                continue
            # the permutation sample(rng, cand, nc): all of it is drawn before any extension draw
            perm = draw_picks(rng, cand, nc, steps, nc)
            attacked = _joins(perm, open_gaps, budget, powers, rand)
            new = parts.copy()  # the memoised list stays the original text's
            removed = 0
            for i in attacked:
                removed += gap_len[i]
                new[2 * i] = ""
            append(report(template, p, text, new, attacked, removed))
        return out

    def _entry(self, text: str, rng: random.Random) -> tuple[Any, ...]:
        """The per-text memo entry (it draws nothing from ``rng``): tokens, joinable gaps (``joinable[i]``: the gap before word i), the
        candidates, the sample's draw steps, the report template, the gaps' lengths."""
        parts = _SPLIT(text)
        n = len(parts) // 2
        joinable = [g != "" and g.isspace() for g in parts[0::2]]
        cand = [i for i in range(1, n) if joinable[i]]
        joinable[n] = False  # no word after the last gap
        return (parts, n, joinable, cand, len(cand), _bit_steps(len(cand)), _report_template(self.name, text, n),
                [len(g) for g in parts[0::2]])


def _joins(perm: list[int], open_gaps: list[bool], budget: int, powers: list[float], rand: Any) -> list[int]:
    """The gaps removed: each gap of ``perm`` in turn starts a join while ``budget`` lasts, the join extended to
    the next word with probability φ², φ³, … (``powers``)."""
    # free[j]: the gap before word j is joinable and not removed yet (free[n] is False, so the test stands for
    # "j < n and not joined[j] and joinable[j]")
    free = open_gaps.copy()
    attacked = []
    used = 0
    for i in perm:
        if used >= budget:
            break
        if not free[i]:
            continue
        free[i] = False
        attacked.append(i)
        used, k, j = used + 1, 2, i + 1
        while used < budget and free[j] and rand() < powers[k]:
            free[j] = False
            attacked.append(j)
            used, k, j = used + 1, k + 1, j + 1
    return attacked
