"""The random streams of the attackers: ``random.Random`` seeded and drawn from exactly as CPython does it, with
the Python layers skipped on the hot paths (one object reseeded per text, ``sample`` and ``_randbelow`` inlined).

Every function here consumes a stream draw for draw like its plain counterpart (``random.Random(seed)``,
``Random.sample``, ``protocol.target_count``), so results equal the recorded goldens bit for bit.
"""

from __future__ import annotations

import _random
import math
import random
from collections.abc import Callable, Iterable, Iterator, Sequence

from ..protocol import SeedLike, make_rng

try:  # the SHA-512 that random.Random.seed uses for str seeds (_sha2 or _sha512 by CPython version)
    from random import _sha512  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - another Python implementation
    from hashlib import sha512 as _sha512
_RANDOM = random.Random
_NEW_RANDOM = _random.Random.__new__  # an unseeded instance; _CSEED seeds it
_CSEED = _random.Random.seed  # the C ``_random.Random.seed`` (init_by_array), without the Python layer
_FROM_BYTES = int.from_bytes


def _make_rng(seed: SeedLike) -> random.Random:
    """:func:`~zeroe_perturb.protocol.make_rng` with a fast path for str seeds (the batch item seeds):
    ``random.Random(seed)`` state for state, its Python layer done here (version-2 str seeding: the UTF-8
    bytes followed by their SHA-512 digest, read as a big-endian int) and the C seeding called directly."""
    if type(seed) is str:
        b = seed.encode()
        rng = _NEW_RANDOM(_RANDOM)
        _CSEED(rng, _FROM_BYTES(b + _sha512(b).digest()))
        rng.gauss_next = None  # pyright: ignore[reportAttributeAccessIssue] - CPython's Random attribute
        return rng
    return make_rng(seed)


def item_stream(base: int, index: int) -> random.Random:
    """A new ``random.Random(item_seed(index, seed=base))``, state for state (see :func:`_make_rng`)."""
    b = b"zeroe:%d:%d" % (base, index)  # = item_seed(index, seed=base).encode()
    rng = _NEW_RANDOM(_RANDOM)
    _CSEED(rng, _FROM_BYTES(b + _sha512(b).digest()))
    rng.gauss_next = None  # pyright: ignore[reportAttributeAccessIssue] - CPython's Random attribute
    return rng


def reseeded(texts: Sequence[str], rng: random.Random | None, base: int,
             start: int) -> tuple[random.Random, Iterable[str]]:
    """The opening the loops over texts share: with ``rng``, the texts as they are, all drawn from ``rng``; without
    (``rng=None``), one private ``Random`` (it never leaves the loop) reseeded in place before text ``i`` is
    yielded with the stream of ``item_seed(start + i, seed=base)``."""
    if rng is not None:
        return rng, texts
    rng = _NEW_RANDOM(_RANDOM)
    rng.gauss_next = None  # pyright: ignore[reportAttributeAccessIssue] - CPython's Random attribute
    return rng, _reseeding(texts, rng, base, start)


def _reseeding(texts: Sequence[str], rng: random.Random, base: int, start: int) -> Iterator[str]:
    prefix = b"zeroe:%d:" % base
    seed, from_bytes, sha512 = _CSEED, _FROM_BYTES, _sha512
    for idx, text in enumerate(texts, start):
        b = prefix + b"%d" % idx  # = item_seed(idx, seed=base).encode(); Random(str) seeding
        seed(rng, from_bytes(b + sha512(b).digest()))
        yield text


def target(p: float, n: int, rand: Callable[[], float], cap: int) -> int:
    """:func:`~zeroe_perturb.protocol.target_count` (``p·n`` rounded at random, drawing from ``rand``) capped by
    ``cap`` (the changeable words)."""
    x = p * n
    k = int(x + 1e-9)  # = floor(x + 1e-9), x >= 0
    if x - k > 1e-9 and rand() < x - k:
        k += 1
    return k if k < cap else cap


def sample(rng: random.Random, population: list, k: int) -> list:
    """``rng.sample(population, k)`` for a list, draw for draw (CPython's algorithm, without its
    argument handling), so results are identical to ``random.Random.sample``."""
    n = len(population)
    randbelow = rng._randbelow  # pyright: ignore[reportAttributeAccessIssue] - CPython's private draw
    result = [None] * k
    setsize = 21
    if k > 5:
        setsize += 4 ** math.ceil(math.log(k * 3, 4))
    if n <= setsize:
        pool = list(population)
        getrandbits = rng.getrandbits
        for i in range(k):
            m = n - i
            # randbelow(m) inlined (random.Random._randbelow_with_getrandbits)
            b = m.bit_length()
            j = getrandbits(b)
            while j >= m:
                j = getrandbits(b)
            result[i] = pool[j]
            pool[j] = pool[m - 1]
    else:
        selected: set[int] = set()
        for i in range(k):
            j = randbelow(n)
            while j in selected:
                j = randbelow(n)
            selected.add(j)
            result[i] = population[j]
    return result


def _pool_sample_ok(n: int, k: int) -> bool:
    """Whether ``Random.sample`` draws ``k`` of ``n`` items with its pool branch (``n <= setsize``)."""
    setsize = 21
    if k > 5:
        setsize += 4 ** math.ceil(math.log(k * 3, 4))
    return n <= setsize


def _bit_steps(n: int) -> tuple[tuple[int, int, int], ...]:
    """``((n, n.bit_length(), n - 1), …, (1, 1, 0))``: the range, bit count and last pool slot of the
    successive ``_randbelow`` draws of ``Random.sample``'s pool branch."""
    return tuple((m, m.bit_length(), m - 1) for m in range(n, 0, -1))


def draw_picks(rng: random.Random, cand: list[int], nc: int, steps: tuple[tuple[int, int, int], ...],
               k: int) -> list[int]:
    """``sample(rng, cand, k)`` (``nc = len(cand)``, ``steps = _bit_steps(nc)``), the pool branch inlined: all
    ``k`` drawn before any word is touched."""
    if not (nc <= 21 or _pool_sample_ok(nc, k)):
        return sample(rng, cand, k)
    getrandbits = rng.getrandbits
    pool = cand.copy()
    picks = []
    for m, bits, last in steps[:k]:
        j = getrandbits(bits)
        while j >= m:
            j = getrandbits(bits)
        picks.append(pool[j])
        pool[j] = pool[last]
    return picks


def char_hits(m: int, phi: float, rng: random.Random, ensure_change: bool) -> list[bool]:
    """Which of ``m`` positions are hit, each i.i.d. with probability ``phi`` (§3.2's character-level φ).

    With ``ensure_change`` the draw is conditioned on at least one hit (the zero-truncated
    binomial, sampled exactly: the first hit J has P(J = j) ∝ φ(1 − φ)^j, later positions are i.i.d.),
    so an attacked word always changes and each position is still hit with probability
    φ / (1 − (1 − φ)^m) given the word was attacked.  For φ = 0 one uniform position is hit.
    """
    rand = rng.random
    if not ensure_change or m == 0:
        return [rand() < phi for _ in range(m)]
    if phi <= 0.0:
        first = rng._randbelow(m)  # pyright: ignore[reportAttributeAccessIssue] - = rng.randrange(m), unchecked
    elif phi >= 1.0:
        first = 0
    else:
        first = first_hit(m, phi, rand)
    hits = [False] * first
    hits.append(True)
    hits.extend([rand() < phi for _ in range(m - first - 1)])
    return hits


def first_hit(m: int, phi: float, rand: Callable[[], float]) -> int:
    """The first of ``m`` positions hit given at least one is (0 < φ < 1): one ``rand()`` draw."""
    return min(int(math.log1p(-rand() * (1.0 - (1.0 - phi) ** m)) / math.log1p(-phi)), m - 1)


def randbelow(rng: random.Random, m: int) -> int:
    """``rng._randbelow(m)`` (m ≥ 1) with getrandbits, inlined draw for draw."""
    b = m.bit_length()
    getrandbits = rng.getrandbits
    j = getrandbits(b)
    while j >= m:
        j = getrandbits(b)
    return j
