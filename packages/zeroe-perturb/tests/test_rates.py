"""Perturbation rates (issue 15, items 1-2): the reported rate is the rate of words actually changed,
p is a per-word probability (§3.1) and φ = p a per-character one where §3.2 says so — checked by
diffing input and output and with binomial / closed-form intervals."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats

import zeroe_perturb as zp
from zeroe_perturb._tokens import split_words

# words every character attacker can change (length ≥ 4, distinct letters, vowels and consonants)
CHANGEABLE = ["planet", "garden", "market", "window", "bright", "silver", "forest", "basket", "jungle",
              "candle", "winter", "rocket", "humble", "office", "number", "dragon"]
WORD_ATTACKS = ["inner-shuffle", "full-shuffle", "intrude", "disemvowel", "truncate", "keyboard-typo"]


def _corpus(n_texts: int, n_words: int, seed: int, pool=CHANGEABLE) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(pool) for _ in range(n_words)) for _ in range(n_texts)]


def _changed_words(orig: str, new: str) -> int:
    """Words that differ, found by diffing the space-separated tokens (no attacker output is used)."""
    a, b = orig.split(" "), new.split(" ")
    assert len(a) == len(b)
    return sum(x != y for x, y in zip(a, b, strict=True))


def _attacker(name: str):
    # intrude without the space symbol so the space-separated diff lines up
    return zp.Intrude(symbols="*:;") if name == "intrude" else zp.get_attacker(name)


@pytest.mark.parametrize("attack", [*WORD_ATTACKS, "segment", "natural-noise", "phonetic", "visual"])
def test_reported_rate_is_the_rate_of_changed_words(attack):
    """Item 1: words an attacker cannot change (``the`` for inner-shuffle, ``wood``…) are never counted."""
    texts = ["the cat sat on the wood floor and saw a bee", "I see you too", "Adversarial attacks are harmless.",
             "the movie was really great because the acting was good"]
    for t in texts:
        for p in (0.2, 0.5, 0.8, 1.0):
            for seed in range(15):
                r = zp.perturb(t, attack, p, seed=seed, report=True)
                g1, w1 = split_words(t)
                if attack == "segment":  # single spaces between words: each join removes one
                    assert r.perturbed.replace(" ", "") == t.replace(" ", "")
                    assert r.n_attacked == t.count(" ") - r.perturbed.count(" ")
                    continue
                if attack == "intrude":
                    continue  # inserted symbols split the word tokens; covered by the space diff below
                g2, w2 = split_words(r.perturbed)
                changed = [i for i, (a, b) in enumerate(zip(w1, w2, strict=True)) if a != b]
                assert list(r.attacked) == changed, (attack, t, p, seed, r.perturbed)
                assert r.fraction_attacked == pytest.approx(len(changed) / len(w1))


def test_inner_shuffle_never_counts_unchangeable_words():
    r = zp.perturb("the cat see wood noon bee", "inner-shuffle", 1.0, seed=0, report=True)
    assert r.n_attacked == 0 and r.perturbed == "the cat see wood noon bee"


@pytest.mark.parametrize("attack", WORD_ATTACKS)
@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_word_rate_equals_p(attack, p):
    """Item 2: each word is attacked with probability p (§3.1), so the pooled changed share of words
    has p inside its Clopper-Pearson interval (the count per text is less variable than a binomial,
    so the interval is conservative)."""
    texts = _corpus(300, 7, seed=11)
    att = _attacker(attack)
    changed = sum(_changed_words(t, att(t, p, seed=zp.item_seed(i, seed=5)).perturbed) for i, t in enumerate(texts))
    ci = stats.binomtest(changed, 7 * len(texts)).proportion_ci(0.999)
    assert ci.low <= p <= ci.high, (attack, p, changed / (7 * len(texts)), ci)


def _zero_truncated_binomial(m: int, phi: float) -> tuple[float, float]:
    """Mean and variance of Bin(m, φ) conditioned on ≥ 1 success (the ensure-change draw)."""
    q = 1 - (1 - phi) ** m
    mean = m * phi / q
    second = (m * phi * (1 - phi) + (m * phi) ** 2) / q
    return mean, second - mean**2


@pytest.mark.parametrize("attack", ["keyboard-typo", "intrude"])
@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_character_rate_is_phi(attack, p):
    """§3.2: keyboard-typo replaces each character, intrude fills each slot between two characters,
    with probability φ = p, i.i.d.; an attacked word is conditioned on at least one edit, so the edits
    per attacked word follow a zero-truncated binomial, whose mean must lie within 4 standard errors."""
    texts = _corpus(300, 7, seed=3)
    att = _attacker(attack)
    edits = []
    for i, t in enumerate(texts):
        new = att(t, p, seed=zp.item_seed(i, seed=9)).perturbed
        for a, b in zip(t.split(" "), new.split(" "), strict=True):
            if a != b:
                edits.append(len(b) - len(a) if attack == "intrude" else sum(x != y for x, y in zip(a, b, strict=True)))
    m = 6 - 1 if attack == "intrude" else 6  # all words have 6 letters
    mean, var = _zero_truncated_binomial(m, p)
    se = math.sqrt(var / len(edits))
    assert abs(np.mean(edits) - mean) < 4 * se, (attack, p, np.mean(edits), mean, se)


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_visual_replaces_each_letter_with_probability_p(p):
    """§3.2 visual: "we replace each character in the input sequence … i.i.d. with probability φ" —
    the share of replaceable letters that changed has φ = p inside its Clopper-Pearson interval."""
    att = zp.get_attacker("visual")
    texts = _corpus(120, 7, seed=4)
    changed = total = 0
    for i, t in enumerate(texts):
        new = att(t, p, seed=zp.item_seed(i, seed=1)).perturbed
        assert len(new) == len(t)
        for a, b in zip(t, new, strict=True):
            if a in att.neighbours:
                total += 1
                changed += a != b
    ci = stats.binomtest(changed, total).proportion_ci(0.999)
    assert ci.low <= p <= ci.high, (p, changed / total, ci)


def test_rate_tests_detect_a_wrong_rate():
    """The word-rate check fails for a protocol attacking at 0.8·p (guards the test's power)."""
    texts = _corpus(300, 7, seed=11)
    att = zp.get_attacker("truncate")
    changed = sum(_changed_words(t, att(t, 0.8 * 0.5, seed=zp.item_seed(i, seed=5)).perturbed)
                  for i, t in enumerate(texts))
    ci = stats.binomtest(changed, 7 * len(texts)).proportion_ci(0.999)
    assert not ci.low <= 0.5 <= ci.high
