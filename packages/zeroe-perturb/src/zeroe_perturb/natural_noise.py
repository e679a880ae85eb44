"""Typo lexicons for the natural-noise attacker (§3.2).

The format is the one of Belinkov & Bisk's (2017) Wikipedia edit-history lists: one line per word,
the correct word followed by its observed misspellings, separated by whitespace (tabs or spaces);
lines starting with ``#`` are comments.  The package ships a small English lexicon written by this
project (``data/natural_noise_en.txt``, CC0); :func:`load_lexicon` reads the full lists when the
user has them (e.g. ``load_lexicon(["en.natural", "more.txt"])``).

The default of the natural-noise attacker is a large real typo resource read at run time:
``codespell``'s list of misspellings observed in real text (``codespell_lib/data/dictionary.txt``, lines
``misspelling->correction[, correction…]``), inverted to ``correct word -> its misspellings``
(:func:`load_codespell_lexicon`; extra ``zeroe-perturb[typos]``).  Without codespell the shipped small
lexicon is used, with a warning saying so (:func:`load_natural_lexicon`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from functools import lru_cache
from importlib import resources
from pathlib import Path

from robustsuite_common.extras import optional_import

from ._tokens import WORD_RE


def _check_lines(lines: object) -> None:
    """``lines`` must be an iterable of lines; a bare string (a whole file's text) is refused: iterating it would
    read one character per line (pass ``text.splitlines()``)."""
    if isinstance(lines, str | bytes):
        raise TypeError("lines must be an iterable of lines, got a single string (use text.splitlines())")
    if not hasattr(lines, "__iter__"):
        raise TypeError(f"lines must be an iterable of lines, got {type(lines).__name__}")


def parse_lexicon(lines: Iterable[str], *, lowercase: bool = True) -> dict[str, tuple[str, ...]]:
    """Parse lexicon lines into ``word -> misspellings``.

    Keys that are not a single word token (e.g. ``don't``, split by the tokenizer into two tokens)
    can never be matched and are dropped; misspellings equal to the word are dropped; entries of
    repeated words are merged in order.
    """
    _check_lines(lines)
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


CODESPELL_FILE = "dictionary.txt"


def codespell_dictionary_path() -> Path:
    """Path of codespell's main misspellings list; ImportError naming the extra if codespell is missing."""
    codespell_lib = optional_import("codespell_lib", extra="zeroe-perturb[typos]",
                                    feature="the codespell typo lexicon")
    path = Path(str(codespell_lib.__file__)).parent / "data" / CODESPELL_FILE
    if not path.is_file():
        raise FileNotFoundError(f"codespell is installed but its misspellings list is missing: {path}")
    return path


def parse_codespell(lines: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Invert codespell lines ``misspelling->correction[, correction…][, reason]`` into
    ``correct word -> misspellings`` (lower case, sorted for a stable order).

    Only single word tokens are kept on both sides (multi-word corrections such as ``a lot`` and
    entries with apostrophes cannot be matched by the tokenizer); a misspelling with several
    possible corrections is listed under each of them.
    """
    _check_lines(lines)
    inv: dict[str, set[str]] = {}
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or "->" not in line:
            continue
        wrong, _, right = line.partition("->")
        wrong = wrong.strip().lower()
        if not WORD_RE.fullmatch(wrong):
            continue
        for corr in right.split(","):
            corr = corr.strip().lower()
            if corr and corr != wrong and WORD_RE.fullmatch(corr):
                inv.setdefault(corr, set()).add(wrong)
    return {w: tuple(sorted(m)) for w, m in sorted(inv.items())}


@lru_cache(maxsize=1)
def load_codespell_lexicon() -> dict[str, tuple[str, ...]]:
    """codespell's real misspellings, inverted to ``correct word -> misspellings`` (read at run time, cached)."""
    path = codespell_dictionary_path()
    return parse_codespell(path.read_text(encoding="utf-8").splitlines())


def load_natural_lexicon(*, source: str = "auto") -> tuple[dict[str, tuple[str, ...]], str]:
    """The natural-noise lexicon and its name: ``"codespell"``, ``"shipped"`` (the small project list),
    or ``"auto"`` (codespell when installed, else the shipped list with a warning)."""
    if source not in ("auto", "codespell", "shipped"):
        raise ValueError(f"source must be one of auto, codespell, shipped; got {source!r}")
    if source == "shipped":
        return load_default_lexicon(), "shipped"
    try:
        return load_codespell_lexicon(), "codespell"
    except ImportError:
        if source == "codespell":
            raise
        warnings.warn("codespell is not installed: the natural-noise attacker falls back to the small shipped "
                      "lexicon (244 words); install 'zeroe-perturb[typos]' for codespell's real misspellings",
                      RuntimeWarning, stacklevel=3)
        return load_default_lexicon(), "shipped"
