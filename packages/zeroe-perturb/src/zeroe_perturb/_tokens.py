"""Tokenisation used by the §3.1 protocol: a text is an alternation of gaps and word tokens.

A *word token* is a maximal run of Unicode letters and digits (``[^\\W_]+``); everything else
(whitespace, punctuation, symbols) lives in the gaps and is never touched by a word-level attacker,
so ``"".join(gaps[i] + words[i]) + gaps[-1]`` reproduces the text exactly.
"""

from __future__ import annotations

import re

WORD_RE = re.compile(r"[^\W_]+")


def split_words(text: str) -> tuple[list[str], list[str]]:
    """Return ``(gaps, words)`` with ``len(gaps) == len(words) + 1``."""
    gaps: list[str] = []
    words: list[str] = []
    pos = 0
    for m in WORD_RE.finditer(text):
        gaps.append(text[pos : m.start()])
        words.append(m.group())
        pos = m.end()
    gaps.append(text[pos:])
    return gaps, words


_SPLIT_RE = re.compile(r"([^\W_]+)")


def split_parts(text: str) -> list[str]:
    """``[gap_0, word_0, gap_1, …, word_{n-1}, gap_n]`` in one C call (``re.split`` with a group):
    the same tokens as :func:`split_words`, interleaved; ``"".join(parts) == text``."""
    return _SPLIT_RE.split(text)


def join_words(gaps: list[str], words: list[str]) -> str:
    """Inverse of :func:`split_words`."""
    out = []
    for g, w in zip(gaps, words, strict=False):
        out.append(g)
        out.append(w)
    out.append(gaps[-1])
    return "".join(out)


def match_case(template: str, word: str) -> str:
    """Give ``word`` the capitalisation pattern of ``template`` (all caps, title case or as is)."""
    if len(template) > 1 and template.isupper():
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word
