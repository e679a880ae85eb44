"""The specialised hot paths (issue 15, item 10) against the general algorithms, on random inputs.

Truncate and segment run a per-batch loop with the sampling inlined and the item seeds' ``Random``
seeded through the C seeding; these tests compare them, output, report and the number of draws taken
from a caller's ``random.Random``, with the plain algorithms (``Random.sample``, ``target_count``,
``split_words``) that the recorded goldens were produced by, and with the general
``Attacker.__call__``.  Exact equality: both sides make the same calls in the same order.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zeroe_perturb as zp
from zeroe_perturb import attackers as A
from zeroe_perturb._tokens import join_words, split_words

WORDS = ["a", "an", "to", "the", "cat", "Wood", "über", "naïve", "x1", "2024", "don", "t", "ÉCOLE", "straße",
         "sentence", "of", "brrr", "aaa", "AI"]
GAPS = [" ", "  ", "\t", "\n", ", ", ". ", "-", "'", "_", " (", ") ", "", " — "]


@st.composite
def texts(draw, max_words: int = 40) -> str:
    n = draw(st.integers(0, max_words))
    out = [draw(st.sampled_from(["", " ", "\n", "\"", "  "]))]
    for _ in range(n):
        out.append(draw(st.sampled_from(WORDS)))
        out.append(draw(st.sampled_from(GAPS)))
    return "".join(out)


seeds = st.one_of(st.integers(0, 2**70), st.text(max_size=12), st.builds(lambda i: f"zeroe:{i}:{i * 7}",
                                                                              st.integers(0, 10**6)))
probs = st.one_of(st.sampled_from([0.0, 0.1, 0.2, 0.5, 0.8, 1.0]), st.floats(0.0, 1.0))


def _reference_truncate(text: str, p: float, rng: random.Random) -> tuple[str, tuple[int, ...], int]:
    """Truncate as recorded in the goldens: §3.1 count, ``Random.sample`` of the eligible words."""
    gaps, words = split_words(text)
    cand = [i for i, w in enumerate(words) if len(w) >= 3]
    k = min(zp.target_count(len(words), p, generator=rng), len(cand))
    chosen = sorted(rng.sample(cand, k)) if k else []
    for i in chosen:
        words[i] = words[i][:-1]
    return join_words(gaps, words), tuple(chosen), len(chosen)


def _reference_segment(text: str, p: float, rng: random.Random,
                       phi: float | None = None) -> tuple[str, tuple[int, ...], int]:
    """Segment as recorded in the goldens (the pre-optimisation code, with ``Random.sample``)."""
    phi = p if phi is None else phi
    gaps, words = split_words(text)
    n = len(words)
    joinable = [g != "" and g.isspace() for g in gaps]
    cand = [i for i in range(1, n) if joinable[i]]
    budget = min(zp.target_count(n, p, generator=rng), len(cand))
    joined = [False] * n
    used = 0
    if budget:
        for i in rng.sample(cand, len(cand)):
            if used >= budget:
                break
            if joined[i]:
                continue
            joined[i] = True
            used, k, j = used + 1, 2, i + 1
            while used < budget and j < n and not joined[j] and joinable[j] and rng.random() < phi**k:
                joined[j] = True
                used, k, j = used + 1, k + 1, j + 1
    attacked = tuple(i for i in range(n) if joined[i])
    new_gaps = [("" if (0 < i < n and joined[i]) else g) for i, g in enumerate(gaps)]
    return join_words(new_gaps, words), attacked, sum(len(gaps[i]) for i in attacked)


def _key(r: zp.Perturbation) -> tuple[str, tuple[int, ...], int]:
    return r.perturbed, r.attacked, r.edit_distance


@settings(max_examples=150, deadline=None)
@given(seed=st.text(max_size=30))
def test_str_seed_fast_path_is_random_random_state_for_state(seed):
    fast, ref = A._make_rng(seed), random.Random(seed)
    assert type(fast) is random.Random
    assert fast.getstate() == ref.getstate()
    assert [fast.random() for _ in range(3)] == [ref.random() for _ in range(3)]


@settings(max_examples=250, deadline=None)
@given(text=texts(120), p=probs, seed=seeds)
def test_truncate_fast_path_equals_the_reference_and_the_general_path(text, p, seed):
    att = zp.Truncate()
    r = att(text, p, seed=seed)
    ref_rng = random.Random(seed)
    assert _key(r) == _reference_truncate(text, p, ref_rng)
    general = zp.Attacker.__call__(att, text, p, seed=seed)
    assert r == general
    assert (r.attack, r.p, r.original, r.n_tokens) == ("truncate", p, text, len(split_words(text)[1]))
    # a caller's Random: the same draws are taken from it
    mine, theirs = random.Random(seed), random.Random(seed)
    assert _key(att(text, p, seed=mine)) == _reference_truncate(text, p, theirs)
    assert mine.getstate() == theirs.getstate()


@settings(max_examples=250, deadline=None)
@given(text=texts(60), p=probs, seed=seeds, phi=st.one_of(st.none(), probs))
def test_segment_fast_path_equals_the_reference(text, p, seed, phi):
    att = zp.Segment(phi=phi)
    r = att(text, p, seed=seed)
    assert _key(r) == _reference_segment(text, p, random.Random(seed), phi)
    assert (r.attack, r.p, r.original, r.n_tokens) == ("segment", p, text, len(split_words(text)[1]))
    mine, theirs = random.Random(seed), random.Random(seed)
    assert _key(att(text, p, seed=mine)) == _reference_segment(text, p, theirs, phi)
    assert mine.getstate() == theirs.getstate()


@pytest.mark.parametrize("attack", ["truncate", "segment", "inner-shuffle", "keyboard-typo"])
@settings(max_examples=40, deadline=None)
@given(batch=st.lists(texts(25), max_size=12), p=probs, seed=st.integers(0, 2**40), start=st.integers(0, 10**9))
def test_batch_loops_equal_single_calls_with_item_seeds(attack, batch, p, seed, start):
    att = zp.get_attacker(attack)
    got = zp.perturb_batch(batch, att, p, seed=seed, report=True, start=start)
    fresh = type(att)()  # no memo shared with the batch
    assert got == [fresh(t, p, seed=zp.item_seed(start + i, seed=seed)) for i, t in enumerate(batch)]
    assert all(type(r) is zp.Perturbation and list(vars(r)) == [
        "attack", "p", "original", "perturbed", "n_tokens", "attacked", "edit_distance"] for r in got)


def test_a_subclass_overriding_the_word_rule_takes_the_general_path():
    class CutTwo(zp.Truncate):
        def perturb_word(self, word, phi, rng):
            return word[:-2]

        @staticmethod
        def word_distance(a, b):
            return len(a) - len(b)

    text = "Adversarial attacks are harmless, they said."
    r = CutTwo()(text, 1.0, seed=0)
    assert r.perturbed == "Adversari attac a harmle, th sa."
    assert r.edit_distance == 2 * len(r.attacked)
    batch = zp.perturb_batch([text], CutTwo(), 1.0, seed=0, report=True)
    assert batch == [CutTwo()(text, 1.0, seed=zp.item_seed(0, seed=0))]
    assert batch[0].perturbed == r.perturbed


@pytest.mark.parametrize("p", [0.02, 0.05, 0.3])
def test_truncate_on_long_texts_takes_samples_set_branch_like_random_sample(p):
    """With many candidates and few picks ``Random.sample`` switches to its set branch (p = 0.02, 0.05
    here: 200 candidates, k = 4 or 10); the fast and the general path must follow it."""
    rng = random.Random(5)
    text = " ".join(rng.choice(["word", "Sentence", "übermäßig", "cats"]) for _ in range(200))
    for seed in range(20):
        r = zp.Truncate()(text, p, seed=seed)
        assert _key(r) == _reference_truncate(text, p, random.Random(seed))
        assert zp.Attacker.__call__(zp.Truncate(), text, p, seed=seed) == r  # the general path's inlined sample
        assert len(r.attacked) == min(200, round(p * 200))


def _with_plain_word_rule(cls):
    class Plain(cls):  # overriding perturb_word switches the inlined option draw off
        def perturb_word(self, word, phi, rng):
            return super().perturb_word(word, phi, rng)

    return Plain


@pytest.mark.parametrize("name", ["natural-noise", "phonetic"])
@settings(max_examples=60, deadline=None)
@given(text=texts(30), p=probs, seed=seeds)
def test_inlined_option_draw_equals_perturb_word(name, text, p, seed):
    def make(cls):
        return cls(lexicon=zp.load_default_lexicon()) if name == "natural-noise" else cls(use_model=False)

    cls = zp.NaturalNoise if name == "natural-noise" else zp.Phonetic
    fast, plain = make(cls), make(_with_plain_word_rule(cls))
    assert fast._choice_table() is not None and plain._choice_table() is None
    assert _key(fast(text, p, seed=seed)) == _key(plain(text, p, seed=seed))
    mine, theirs = random.Random(seed), random.Random(seed)
    assert _key(fast(text, p, seed=mine)) == _key(plain(text, p, seed=theirs))
    assert mine.getstate() == theirs.getstate()
