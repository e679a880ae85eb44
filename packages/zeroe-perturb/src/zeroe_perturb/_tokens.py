"""Tokenisation used by the §3.1 protocol: a text is an alternation of gaps and word tokens.

A *word token* is a maximal run of Unicode letters and digits (``[^\\W_]+``) together with the combining marks
(Unicode categories Mn, Mc, Me) that follow its letters; everything else (whitespace, punctuation, symbols)
lives in the gaps and is never touched by a word-level attacker, so ``"".join(gaps[i] + words[i]) + gaps[-1]``
reproduces the text exactly.

Characters are **grapheme clusters** here: a letter or digit with the combining marks that follow it
(``"e\\u0301"``, a decomposed ``é``, is one character; so is a Devanagari consonant with its vowel sign). An
attacker that removes, cuts, shuffles or separates characters moves whole clusters, so an accent never lands
on another letter ("cafe\\u0301" truncated is "caf", not "caf\\u0301"). A text in NFD form is attacked as its
NFC form would be (the same words, clusters and draws), without the package rewriting the user's bytes. Hangul
syllables written as conjoining jamo and emoji sequences are not joined (jamo are letters, emoji live in gaps).
"""

from __future__ import annotations

import re
import unicodedata

WORD_RE = re.compile(r"[^\W_]+")
_category = unicodedata.category


def is_mark(c: str) -> bool:
    """Whether ``c`` is a combining mark (Unicode general category Mn, Mc or Me)."""
    return _category(c)[0] == "M"


def _leading_marks(s: str) -> int:
    n = 0
    for c in s:
        if _category(c)[0] != "M":
            break
        n += 1
    return n


_SPLIT_RE = re.compile(r"([^\W_]+)")
_split = _SPLIT_RE.split


def split_parts(text: str) -> list[str]:
    """``[gap_0, word_0, gap_1, …, word_{n-1}, gap_n]``; ``"".join(parts) == text``.

    One C call (``re.split`` with a group) for ASCII text; otherwise the combining marks that begin a gap after
    a word are moved onto that word (and a gap made of marks only joins the two words around it)."""
    parts = _split(text)
    if len(parts) == 1 or text.isascii():
        return parts
    return _attach(parts)


def _attach(parts: list[str]) -> list[str]:
    out = [parts[0]]
    k = 1
    n = len(parts)
    while k < n:
        word = parts[k]
        gap = parts[k + 1]
        m = _leading_marks(gap) if gap else 0
        while m and m == len(gap) and k + 2 < n:  # marks only, then another word: one word
            word = word + gap + parts[k + 2]
            k += 2
            gap = parts[k + 1]
            m = _leading_marks(gap) if gap else 0
        if m:
            word, gap = word + gap[:m], gap[m:]
        out.append(word)
        out.append(gap)
        k += 2
    return out


def split_words(text: str) -> tuple[list[str], list[str]]:
    """Return ``(gaps, words)`` with ``len(gaps) == len(words) + 1``."""
    parts = split_parts(text)
    return parts[0::2], parts[1::2]


def join_words(gaps: list[str], words: list[str]) -> str:
    """Inverse of :func:`split_words`."""
    out = []
    for g, w in zip(gaps, words, strict=False):
        out.append(g)
        out.append(w)
    out.append(gaps[-1])
    return "".join(out)


def clusters(word: str) -> list[str]:
    """The grapheme clusters of ``word``: each character with the combining marks that follow it (a mark at the
    start stands alone). ``list(word)`` for a word without marks."""
    if word.isascii():
        return list(word)
    out: list[str] = []
    for c in word:
        if out and _category(c)[0] == "M":
            out[-1] += c
        else:
            out.append(c)
    return out


def has_marks(word: str) -> bool:
    """Whether ``word`` contains a combining mark (then its clusters differ from its characters)."""
    return not word.isascii() and any(_category(c)[0] == "M" for c in word)


def match_case(template: str, word: str) -> str:
    """Give ``word`` the capitalisation pattern of ``template`` (all caps, title case or as is)."""
    if len(template) > 1 and template.isupper():
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word
