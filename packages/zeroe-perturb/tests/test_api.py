"""Public API, determinism, batch form and bad-input errors."""

from __future__ import annotations

import numpy as np
import pytest
import zeroe_perturb as zp

TEXT = "Adversarial attacks are harmless, the movie was really great!"


def test_public_names_are_pinned():
    assert sorted(zp.__all__) == sorted([
        "ATTACKS", "INTRUDE_SYMBOLS", "LEVELS", "Attacker", "Disemvowel", "FullShuffle", "InnerShuffle",
        "Intrude", "KeyboardTypo", "NaturalNoise", "Perturbation", "Phonetic", "PhoneticRespeller",
        "Segment", "Truncate", "Visual", "__version__", "get_attacker", "item_seed", "levenshtein",
        "load_default_lexicon", "load_lexicon", "load_neighbours", "parse_lexicon", "perturb",
        "perturb_batch", "phonetic_similarity", "select_tokens", "target_count",
    ])
    for name in zp.__all__:
        assert hasattr(zp, name)


def test_attack_names_in_paper_order():
    assert zp.ATTACKS == ("inner-shuffle", "full-shuffle", "intrude", "disemvowel", "truncate", "segment",
                          "keyboard-typo", "natural-noise", "phonetic", "visual")
    assert zp.LEVELS == {"low": 0.2, "mid": 0.5, "high": 0.8}
    for a in zp.ATTACKS:
        assert zp.get_attacker(a).name == a


@pytest.mark.parametrize("attack", zp.ATTACKS)
def test_same_seed_same_output_and_global_rng_untouched(attack):
    state = np.random.get_state()[1].copy()  # noqa: NPY002 (checking the legacy global state is untouched)
    a = zp.perturb(TEXT, attack, 0.8, seed=11)
    b = zp.perturb(TEXT, attack, 0.8, seed=11)
    assert a == b
    assert np.array_equal(np.random.get_state()[1], state)  # noqa: NPY002 (checking the legacy global state is untouched)
    outs = {zp.perturb(TEXT, attack, 0.8, seed=s) for s in range(8)}
    assert len(outs) > 1 or attack in ("truncate", "disemvowel", "segment")


@pytest.mark.parametrize("attack", zp.ATTACKS)
def test_batch_equals_items_with_item_seeds(attack):
    texts = [TEXT, "", "the story was boring", "Great acting and a wonderful ending."]
    batch = zp.perturb_batch(texts, attack, 0.5, seed=7)
    singles = [zp.perturb(t, attack, 0.5, seed=zp.item_seed(7, i)) for i, t in enumerate(texts)]
    assert batch == singles
    reports = zp.perturb_batch(texts, attack, 0.5, seed=7, report=True)
    assert [r.perturbed for r in reports] == batch
    # an item does not depend on the rest of its batch
    assert zp.perturb_batch(texts[2:], attack, 0.5, seed=7, start=2) == batch[2:]


def test_report_is_json_safe():
    import json

    r = zp.perturb(TEXT, "visual", 0.5, seed=0, report=True)
    d = r.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["n_attacked"] == len(d["attacked"]) and d["edit_distance"] > 0


def test_generator_seed_is_consumed_not_global():
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    assert zp.perturb(TEXT, "intrude", 0.5, g1) == zp.perturb(TEXT, "intrude", 0.5, g2)


def test_bad_inputs_raise_named_errors():
    with pytest.raises(ValueError, match="attack must be one of inner-shuffle"):
        zp.perturb(TEXT, "shuffle", 0.5)
    with pytest.raises(ValueError, match="p must be in"):
        zp.perturb(TEXT, "truncate", 1.5)
    with pytest.raises(TypeError, match="p must be a float"):
        zp.perturb(TEXT, "truncate", "0.5")
    with pytest.raises(TypeError, match="text must be a str"):
        zp.perturb(["a"], "truncate", 0.5)
    with pytest.raises(TypeError, match="seed must be"):
        zp.perturb(TEXT, "truncate", 0.5, seed="x")
    with pytest.raises(TypeError, match="texts must be a sequence"):
        zp.perturb_batch(TEXT, "truncate", 0.5)
    with pytest.raises(TypeError, match="item 1"):
        zp.perturb_batch(["a", 3], "truncate", 0.5)
    with pytest.raises(ValueError, match="phi"):
        zp.Visual(phi=2.0)
    with pytest.raises(ValueError, match="symbols"):
        zp.Intrude(symbols=["ab"])


def test_protocol_target_and_selection():
    assert zp.target_count(10, 0.2) == 2 and zp.target_count(3, 0.5) == 1 and zp.target_count(5, 0.0) == 0
    rng = np.random.default_rng(0)
    hits = []
    out = zp.select_tokens(10, 1.0, rng, lambda i: True, lambda i, b: hits.append(i) or 1)
    assert sorted(out) == list(range(10)) and sorted(hits) == list(range(10))
    # ineligible tokens are never attacked
    out = zp.select_tokens(10, 1.0, rng, lambda i: i % 2 == 0, lambda i, b: 1)
    assert sorted(out) == [0, 2, 4, 6, 8]
    # coin flips: at p = 0.5 the expected attacked count with target 5 over 10 tokens is
    # E[min(Binomial(10, .5), 5)], computed exactly
    from math import comb
    exact = sum(comb(10, k) * 0.5**10 * min(k, 5) for k in range(11))
    counts = [len(zp.select_tokens(10, 0.5, np.random.default_rng(s), lambda i: True, lambda i, b: 1))
              for s in range(3000)]
    assert abs(np.mean(counts) - exact) < 0.06


def test_levenshtein_reference_values():
    assert zp.levenshtein("kitten", "sitting") == 3
    assert zp.levenshtein("", "abc") == 3
    assert zp.levenshtein("flaw", "lawn") == 2
    assert zp.levenshtein(["AH", "B"], ["AH", "B"]) == 0
