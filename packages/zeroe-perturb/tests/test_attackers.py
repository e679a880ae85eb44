"""Property tests (hypothesis) of the ten attackers (§3.2) under the §3.1 protocol."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zeroe_perturb as zp
from zeroe_perturb._tokens import split_words
from zeroe_perturb.keyboard import QWERTY_NEIGHBOURS

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=1, max_size=12)
SEP = st.sampled_from([" ", "  ", ", ", ". ", "\n", " - ", "! ", "\t"])


@st.composite
def sentences(draw):
    words = draw(st.lists(WORD, min_size=0, max_size=25))
    seps = draw(st.lists(SEP, min_size=len(words) + 1, max_size=len(words) + 1))
    return "".join(s + w for s, w in zip(seps, words, strict=False)) + seps[-1]


LEXICON_WORDS = ["the", "movie", "was", "really", "great", "because", "acting", "and", "story", "boring"]


@st.composite
def lexicon_sentences(draw):
    words = draw(st.lists(st.sampled_from(LEXICON_WORDS + ["zzq", "Movie", "THE"]), max_size=20))
    return " ".join(words) + "."


P = st.sampled_from([0.0, 0.1, 0.2, 0.5, 0.8, 1.0])
SEED = st.integers(0, 2**32 - 1)
FAST = settings(max_examples=60, deadline=None)


def _within_budget(r, p: float) -> bool:
    """§3.1 attacks p·n words rounded at random (floor or ceil); visual (text scope) has no word budget."""
    return r.attack == "visual" or r.n_attacked <= math.ceil(p * r.n_tokens - 1e-9)


def _pairs(orig: str, new: str):
    g1, w1 = split_words(orig)
    g2, w2 = split_words(new)
    assert g1 == g2, "gaps (whitespace, punctuation) must be preserved"
    return list(zip(w1, w2, strict=True))


@FAST
@given(sentences(), P, SEED)
def test_inner_shuffle_keeps_ends_and_letters(text, p, seed):
    r = zp.perturb(text, "inner-shuffle", p, seed=seed, report=True)
    for a, b in _pairs(text, r.perturbed):
        assert len(a) == len(b) and Counter(a) == Counter(b)
        assert a[0] == b[0] and a[-1] == b[-1]
    assert _within_budget(r, p)


@FAST
@given(sentences(), P, SEED)
def test_full_shuffle_keeps_letter_multiset(text, p, seed):
    r = zp.perturb(text, "full-shuffle", p, seed=seed, report=True)
    pairs = _pairs(text, r.perturbed)
    for a, b in pairs:
        assert Counter(a) == Counter(b)
    for i in r.attacked:
        assert len(pairs[i][0]) >= 2
    assert _within_budget(r, p)


# word-wise attackers: (the words they may attack, what an attacked word becomes); every other word stays
WORD_WISE = {
    "disemvowel": (lambda a: len(a) > 3, lambda a: "".join(c for c in a if c.lower() not in "aeiou")),
    "truncate": (lambda a: len(a) >= 3, lambda a: a[:-1]),  # exactly one letter removed
}


@FAST
@pytest.mark.parametrize("attack", sorted(WORD_WISE))
@given(text=sentences(), p=P, seed=SEED)
def test_word_wise_attackers_change_only_eligible_attacked_words(attack, text, p, seed):
    eligible, change = WORD_WISE[attack]
    r = zp.perturb(text, attack, p, seed=seed, report=True)
    for k, (a, b) in enumerate(_pairs(text, r.perturbed)):
        assert b == (change(a) if k in r.attacked else a)
        if k in r.attacked:
            assert eligible(a) and b
    if attack == "truncate":
        assert r.edit_distance == r.n_attacked
    assert _within_budget(r, p)


@FAST
@given(sentences(), P, SEED)
def test_intrude_inserts_one_symbol_kind_per_word(text, p, seed):
    r = zp.perturb(text, "intrude", p, seed=seed, report=True)
    assert len(r.perturbed) - len(text) == r.edit_distance
    assert r.edit_distance >= r.n_attacked  # at least one insertion per attacked word
    extra = Counter(r.perturbed) - Counter(text)
    assert set(extra) <= set(zp.INTRUDE_SYMBOLS)
    assert len(extra) <= r.n_attacked
    assert _within_budget(r, p)


@FAST
@given(sentences(), P, SEED)
def test_segment_only_removes_whitespace(text, p, seed):
    r = zp.perturb(text, "segment", p, seed=seed, report=True)
    assert "".join(r.perturbed.split()) == "".join(text.split())
    assert len(split_words(r.perturbed)[1]) == r.n_tokens - r.n_attacked
    assert len(text) - len(r.perturbed) == r.edit_distance
    assert _within_budget(r, p)


@FAST
@given(sentences(), P, SEED)
def test_keyboard_typo_uses_adjacent_keys(text, p, seed):
    r = zp.perturb(text, "keyboard-typo", p, seed=seed, report=True)
    for a, b in _pairs(text, r.perturbed):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            if x != y:
                assert y.lower() in QWERTY_NEIGHBOURS[x.lower()] and x.isupper() == y.isupper()
    assert _within_budget(r, p)


@FAST
@given(lexicon_sentences(), P, SEED)
def test_natural_noise_uses_lexicon(text, p, seed):
    lex = zp.get_attacker("natural-noise").lexicon  # codespell when installed, else the shipped list
    r = zp.perturb(text, "natural-noise", p, seed=seed, report=True)
    g, orig = split_words(text)
    new = r.perturbed[:-1].split(" ") if text != "." else []
    assert len(new) == len(orig)
    for k, (a, b) in enumerate(zip(orig, new, strict=True)):
        if k in r.attacked:
            assert b.lower() in lex[a.lower()]
        else:
            assert a == b
    assert _within_budget(r, p)


@FAST
@given(sentences(), P, SEED)
def test_visual_replaces_with_neighbours(text, p, seed):
    table = zp.load_neighbours()
    r = zp.perturb(text, "visual", p, seed=seed, report=True)
    assert len(r.perturbed) == len(text)
    for x, y in zip(text, r.perturbed, strict=True):
        if x != y:
            assert y in table[x][:20]
    assert _within_budget(r, p)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(zp.ATTACKS), st.text(max_size=60), P, SEED)
def test_every_attacker_handles_arbitrary_unicode_deterministically(attack, text, p, seed):
    a = zp.perturb(text, attack, p, seed=seed, report=True)
    b = zp.perturb(text, attack, p, seed=seed, report=True)
    assert a == b
    assert _within_budget(a, p)
    assert a.edit_distance >= zp.levenshtein(text, a.perturbed)
    if a.n_attacked == 0:
        assert a.perturbed == text


@pytest.mark.parametrize("attack", zp.ATTACKS)
def test_p_zero_and_empty_text_are_identity(attack):
    text = "The movie was really great because the acting was wonderful."
    assert zp.perturb(text, attack, 0.0, seed=3) == text
    assert zp.perturb("", attack, 0.8, seed=3) == ""
    assert zp.perturb("   \n", attack, 0.8, seed=3) == "   \n"


@pytest.mark.parametrize("attack", zp.ATTACKS)
def test_high_level_attacks_most_eligible_tokens(attack):
    text = ("the movie was really great because the story and the acting were wonderful and never "
            "boring although the ending was weird")
    reports = [zp.perturb(text, attack, 0.8, seed=s, report=True) for s in range(20)]
    mean = np.mean([r.n_attacked for r in reports])
    assert all(_within_budget(r, 0.8) for r in reports)
    assert mean > 2  # every attacker finds something to attack in a plain English sentence
    assert all(r.changed for r in reports) or attack in ("inner-shuffle", "full-shuffle")


def test_single_token_edit_distance_is_exact():
    for attack in ("truncate", "inner-shuffle", "keyboard-typo", "visual", "intrude"):
        r = zp.perturb("wonderful", attack, 1.0, seed=5, report=True)
        assert r.edit_distance == zp.levenshtein("wonderful", r.perturbed)


def test_case_preserved_by_lexicon_attack():
    out = zp.perturb("Because", "natural-noise", 1.0, seed=0)
    assert out[0] == "B" and out.lower() in zp.get_attacker("natural-noise").lexicon["because"]


def test_phi_parameter_controls_character_rate():
    text = " ".join(["keyboard"] * 200)
    lo = zp.KeyboardTypo(phi=0.1, ensure_change=False)(text, 1.0, seed=0).edit_distance
    hi = zp.KeyboardTypo(phi=0.9, ensure_change=False)(text, 1.0, seed=0).edit_distance
    # 1600 letters: binomial expectations 160 vs 1440 substitutions
    assert 100 < lo < 230 and 1300 < hi < 1560


def test_segment_at_p1_joins_every_whitespace_gap_but_not_punctuation():
    r = zp.perturb("a b  c, d e", "segment", 1.0, seed=0, report=True)
    assert r.perturbed == "abc, de"
    assert r.attacked == (1, 2, 4) and r.edit_distance == 4


PHONETIC_WORDS = ["attacks", "harmless", "night", "phone", "really", "weather", "people", "because", "tonight"]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(PHONETIC_WORDS + ["a", "of"]), max_size=15), P, SEED)
def test_phonetic_replaces_words_by_kept_respellings(words, p, seed):
    resp = zp.PhoneticRespeller()
    text = " ".join(words)
    r = zp.perturb(text, "phonetic", p, seed=seed, report=True)
    new = r.perturbed.split(" ") if words else []
    assert len(new) == len(words)
    for k, (a, b) in enumerate(zip(words, new, strict=True)):
        if k in r.attacked:
            assert b in resp.respellings(a) and b != a
        else:
            assert a == b
    assert _within_budget(r, p)
