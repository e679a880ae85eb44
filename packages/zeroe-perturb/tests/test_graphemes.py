"""Combining marks stay on their letters (issue 25, item 2): a decomposed accent ("e" + U+0301) is part of its
letter, so no attacker cuts it off or moves it onto another letter, and a text in NFD form is attacked as its NFC
form is (same words, clusters and draws)."""

from __future__ import annotations

import unicodedata
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

import zeroe_perturb as zp
from zeroe_perturb._tokens import clusters, split_words
from zeroe_perturb.tasks import perturb_tokens

ACUTE = "\u0301"
MARKS = "\u0300\u0301\u0302\u0303\u0308\u0327\u030a"
# attackers whose per-word rule only removes, cuts, shuffles or separates letters: they draw the same for a word
# and its NFC form, so the NFC of their outputs must agree
STRUCTURAL = ("inner-shuffle", "full-shuffle", "intrude", "disemvowel", "truncate", "segment")
CHARS = st.sampled_from(list("abcdeinouyAECNxz") + list(MARKS) + list("éèüçñÅ") + [" ", " ", ", ", ". "])
TEXT = st.lists(CHARS, max_size=40).map("".join)


def nfc(s: str) -> str:
    return unicodedata.normalize("NFC", s)


def nfd(s: str) -> str:
    return unicodedata.normalize("NFD", s)


def test_decomposed_accents_stay_on_their_letters():
    assert zp.perturb("cafe" + ACUTE, "disemvowel", 1.0, seed=0) == "cfe" + ACUTE  # like "café" -> "cfé"
    assert zp.perturb("café", "disemvowel", 1.0, seed=0) == "cfé"
    assert zp.perturb("cafe" + ACUTE, "truncate", 1.0, seed=0) == "caf"  # the accent goes with its e
    assert zp.perturb("café", "truncate", 1.0, seed=0) == "caf"
    r = zp.perturb("cafe" + ACUTE + " noir", "truncate", 1.0, seed=0, report=True)
    assert (r.perturbed, r.attacked, r.edit_distance) == ("caf noi", (0, 1), 3)  # e + U+0301: two code points
    # an accented e is not one of the vowels a, e, i, o, u (as "é" is not): "étés" has none, "étude" two
    assert not zp.get_attacker("disemvowel").eligible("e" + ACUTE + "te" + ACUTE + "s")
    assert zp.perturb("e" + ACUTE + "tude", "disemvowel", 1.0, seed=0) == "e" + ACUTE + "td"
    assert perturb_tokens(["cafe" + ACUTE, "noir"], "truncate", 1.0, seed=0) == ["caf", "noi"]


def test_devanagari_vowel_signs_are_part_of_their_word():
    text = "\u0915\u093e\u092e \u0915\u0930"  # काम कर: the vowel sign U+093E (Mc) is no word character for re
    gaps, words = split_words(text)
    assert words == ["\u0915\u093e\u092e", "\u0915\u0930"]
    assert clusters(words[0]) == ["\u0915\u093e", "\u092e"]


@settings(max_examples=150, deadline=None)
@given(TEXT, st.sampled_from(STRUCTURAL), st.sampled_from([0.2, 0.5, 0.8, 1.0]), st.integers(0, 2**31))
def test_an_nfd_text_is_attacked_as_its_nfc_form(text, attack, p, seed):
    a = zp.perturb(nfd(text), attack, p, seed=seed, report=True)
    b = zp.perturb(nfc(text), attack, p, seed=seed, report=True)
    assert nfc(a.perturbed) == nfc(b.perturbed)
    assert (a.n_tokens, a.attacked) == (b.n_tokens, b.attacked)


@settings(max_examples=150, deadline=None)
@given(TEXT, st.sampled_from(zp.ATTACKS), st.sampled_from([0.5, 1.0]), st.integers(0, 2**31))
def test_no_attacker_splits_a_letter_from_its_marks(text, attack, p, seed):
    """Every mark that follows a letter in the input follows a letter in the output; the shuffles keep the
    multiset of clusters of every word."""
    text = nfd(text)
    out = zp.perturb(text, attack, p, seed=seed)
    orphan = lambda s: sum(1 for i, c in enumerate(s) if unicodedata.category(c)[0] == "M"  # noqa: E731
                           and (i == 0 or not (s[i - 1].isalnum() or unicodedata.category(s[i - 1])[0] == "M")))
    assert orphan(out) <= orphan(text)
    if attack in ("inner-shuffle", "full-shuffle"):
        (g1, w1), (g2, w2) = split_words(text), split_words(out)
        assert g1 == g2
        assert [Counter(clusters(w)) for w in w1] == [Counter(clusters(w)) for w in w2]


def test_the_golden_texts_have_no_marks():
    """The byte-identical goldens (tests/test_goldens.py) pin the attackers on texts without combining marks, where
    a cluster is a character and every attacker takes the same path as before."""
    import json
    from pathlib import Path

    rows = json.loads((Path(__file__).parent / "data" / "goldens.json").read_text(encoding="utf-8"))["rows"]
    assert rows and all(clusters(w) == list(w) for r in rows for w in split_words(r["text"])[1])
