"""Public API, determinism, batch form and bad-input errors."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import zeroe_perturb as zp

TEXT = "Adversarial attacks are harmless, the movie was really great!"


def test_public_names_are_pinned():
    assert sorted(zp.__all__) == sorted([
        "ATTACKS", "INTRUDE_SYMBOLS", "LEVELS", "Attacker", "Disemvowel", "FullShuffle", "InnerShuffle",
        "Intrude", "KeyboardTypo", "NaturalNoise", "Perturbation", "Phonetic", "PhoneticRespeller",
        "Segment", "Truncate", "Visual", "__version__", "get_attacker", "item_seed", "levenshtein",
        "load_codespell_lexicon", "load_default_lexicon", "load_lexicon", "load_natural_lexicon",
        "load_neighbours", "parse_codespell", "parse_lexicon", "perturb",
        "perturb_batch", "phonetic_similarity", "select_tokens", "target_count",
        # the §4 benchmark, s*(p) over attack seeds and Table 5 (what the robustsuite runner calls)
        "BenchmarkResult", "PAPER_TABLE5", "TAGGING_ATTACKS", "chance_score", "evaluate",
        "evaluate_pairs", "evaluate_seeds", "evaluate_tagging", "kendall_tau_vs_paper",
        "ranking_table", "tagging_chance_score", "attack_sentences",
        # the paper's experiment (typed config, presets, run, figures) and the Hugging Face task wrappers,
        # imported on first use
        "experiment", "hf",
        # the verdict's lens (robustsuite audit): the zeroe-noise check
        "noise_check",
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
    singles = [zp.perturb(t, attack, 0.5, seed=zp.item_seed(i, seed=7)) for i, t in enumerate(texts)]
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


def test_every_seed_kind_is_reproducible():
    for make in (lambda: np.random.default_rng(3), lambda: np.random.SeedSequence(3), lambda: random.Random(3),
                 lambda: 3, lambda: "three"):
        assert zp.perturb(TEXT, "intrude", 0.5, seed=make()) == zp.perturb(TEXT, "intrude", 0.5, seed=make())
    assert zp.item_seed(2, seed=7) != zp.item_seed(0, seed=72) != zp.item_seed(20, seed=7)


def _dp_levenshtein(a, b):
    d = np.zeros((len(a) + 1, len(b) + 1), dtype=int)
    d[:, 0], d[0, :] = np.arange(len(a) + 1), np.arange(len(b) + 1)
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + (a[i - 1] != b[j - 1]))
    return int(d[-1, -1])


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abc", max_size=9), st.text(alphabet="abc", max_size=9))
def test_levenshtein_equals_full_table(a, b):
    assert zp.levenshtein(a, b) == _dp_levenshtein(a, b) == zp.levenshtein(b, a)


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
        zp.perturb(TEXT, "truncate", 0.5, seed=1.5)
    with pytest.raises(TypeError, match="texts must be a sequence"):
        zp.perturb_batch(TEXT, "truncate", 0.5)
    with pytest.raises(TypeError, match="texts .*position 1"):
        zp.perturb_batch(["a", 3], "truncate", 0.5)
    with pytest.raises(ValueError, match="phi"):
        zp.Visual(phi=2.0)
    with pytest.raises(ValueError, match="symbols"):
        zp.Intrude(symbols=["ab"])


def test_protocol_target_and_selection():
    assert zp.target_count(10, 0.2) == 2 and zp.target_count(3, 0.5) == 1 and zp.target_count(5, 0.0) == 0
    rng = random.Random(0)
    out = zp.select_tokens(10, 1.0, lambda i: True, generator=rng)
    assert sorted(out) == list(range(10))
    # unchangeable tokens are never attacked
    out = zp.select_tokens(10, 1.0, lambda i: i % 2 == 0, generator=rng)
    assert sorted(out) == [0, 2, 4, 6, 8]
    # p·n rounded at random: at n = 7, p = 0.5 the count is 3 or 4, each with probability 1/2 (exact
    # binomial interval over 4000 draws), so every token is attacked with probability p
    counts = [len(zp.select_tokens(7, 0.5, lambda i: True, generator=random.Random(s))) for s in range(4000)]
    assert set(counts) == {3, 4}
    ci = stats.binomtest(sum(c == 4 for c in counts), len(counts)).proportion_ci(0.999)
    assert ci.low <= 0.5 <= ci.high
    # every token equally likely: per-index counts are inside their binomial intervals around p
    per_index = np.zeros(7)
    for s in range(4000):
        per_index[zp.select_tokens(7, 0.5, lambda i: True, generator=random.Random(s))] += 1
    for c in per_index:
        ci = stats.binomtest(int(c), 4000).proportion_ci(0.999)
        assert ci.low <= 0.5 <= ci.high


def test_levenshtein_reference_values():
    assert zp.levenshtein("kitten", "sitting") == 3
    assert zp.levenshtein("", "abc") == 3
    assert zp.levenshtein("flaw", "lawn") == 2
    assert zp.levenshtein(["AH", "B"], ["AH", "B"]) == 0


def test_old_keywords_keep_working_one_release_with_a_deprecation_warning():
    """Issue 34: ``rng`` is ``generator``, ``classifier`` is ``model``, ``n_resamples`` is ``n_boot``."""
    import warnings

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        old = zp.select_tokens(10, 0.5, lambda i: True, rng=random.Random(3))
        count = zp.target_count(7, 0.5, rng=random.Random(3))
    assert old == zp.select_tokens(10, 0.5, lambda i: True, generator=random.Random(3))
    assert count == zp.target_count(7, 0.5, generator=random.Random(3))
    assert [w.category for w in seen] == [DeprecationWarning, DeprecationWarning]
    clf = lambda texts: np.array([[2.0, -1.0] if "good" in t else [-1.0, 2.0] for t in texts])  # noqa: E731
    with pytest.warns(DeprecationWarning, match="classifier"):
        res = zp.evaluate(classifier=clf, texts=["good day", "bad day"], labels=[0, 1], attacks=["truncate"],
                          levels=[0.5])
    assert res == zp.evaluate(clf, ["good day", "bad day"], [0, 1], attacks=["truncate"], levels=[0.5])


def test_the_old_config_key_n_resamples_reads_as_n_boot_with_a_warning():
    """Issue 34: ``seeds.n_resamples`` is ``seeds.n_boot``; a TOML or ``--set`` with the old key still works."""
    from robustsuite_common.config import override
    from zeroe_perturb import experiment as ex

    with pytest.warns(DeprecationWarning, match="'n_resamples' is deprecated; use 'n_boot'"):
        cfg = override(ex.preset("demo"), {"seeds.n_resamples": 300})
    assert cfg.seeds.n_boot == 300 and cfg == override(ex.preset("demo"), {"seeds.n_boot": 300})
