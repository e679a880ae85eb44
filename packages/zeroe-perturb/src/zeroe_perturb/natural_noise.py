"""Typo lexicons for the natural-noise attacker (§3.2).

The format is the one of Belinkov & Bisk's (2017) Wikipedia edit-history lists: one line per word,
the correct word followed by its observed misspellings, separated by whitespace (tabs or spaces);
lines starting with ``#`` are comments.  The package ships a small English lexicon written by this
project (``data/natural_noise_en.txt``, CC0); :func:`load_lexicon` reads the full lists when the
user has them (e.g. ``load_lexicon(["en.natural", "more.txt"])``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path

from ._tokens import WORD_RE


def parse_lexicon(lines: Iterable[str], *, lowercase: bool = True) -> dict[str, tuple[str, ...]]:
    """Parse lexicon lines into ``word -> misspellings``.

    Keys that are not a single word token (e.g. ``don't``, split by the tokenizer into two tokens)
    can never be matched and are dropped; misspellings equal to the word are dropped; entries of
    repeated words are merged in order.
    """
    out: dict[str, list[str]] = {}
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        word, *miss = line.split()
        if lowercase:
            word = word.lower()
        if not WORD_RE.fullmatch(word):
            continue
        bucket = out.setdefault(word, [])
        for m in miss:
            if m != word and m not in bucket:
                bucket.append(m)
    return {w: tuple(m) for w, m in out.items() if m}


def load_lexicon(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> dict[str, tuple[str, ...]]:
    """Read and merge one or more lexicon files in Belinkov & Bisk's format."""
    if isinstance(paths, str | os.PathLike):
        paths = [paths]
    lines: list[str] = []
    for p in paths:
        path = Path(p)
        if not path.is_file():
            raise FileNotFoundError(f"lexicon file not found: {path}")
        lines.extend(path.read_text(encoding="utf-8").splitlines())
    return parse_lexicon(lines)


@lru_cache(maxsize=1)
def load_default_lexicon() -> dict[str, tuple[str, ...]]:
    """The project's shipped English lexicon (offline, cached)."""
    text = resources.files("zeroe_perturb").joinpath("data/natural_noise_en.txt").read_text(encoding="utf-8")
    return parse_lexicon(text.splitlines())
