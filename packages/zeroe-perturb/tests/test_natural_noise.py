"""Natural noise from a large real typo resource (issue 15, item 7): codespell's misspellings,
inverted at run time, with a clear fallback when codespell is not installed."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from scipy import stats

import zeroe_perturb as zp
from zeroe_perturb import natural_noise
from zeroe_perturb._tokens import split_words

HAS_CODESPELL = importlib.util.find_spec("codespell_lib") is not None

# an ordinary English paragraph (written for this test)
PARAGRAPH = (
    "When people talk about the weather they usually mean what happens over a few days, but climate "
    "describes the average conditions over many years. Scientists measure temperature, rainfall and wind "
    "at thousands of stations around the world, and they compare the results with records that were "
    "written more than a hundred years ago. Because the government needs reliable information, it pays for "
    "new instruments and for the people who maintain them. The public often believes that a single cold "
    "winter proves something, although one season is too short to show a trend. Teachers should explain "
    "the difference between weather and climate to their students, since it is necessary for understanding "
    "the news and for making decisions about the environment, agriculture and energy."
)


def test_parse_codespell_inverts_and_keeps_single_words():
    lex = zp.parse_codespell(["teh->the", "hte->the", "recieve->receive", "alot->a lot", "thier->their, there",
                              "dont->don't", "# comment", "abotu->about,"])
    assert lex == {"about": ("abotu",), "receive": ("recieve",), "the": ("hte", "teh"),
                   "their": ("thier",), "there": ("thier",)}


@pytest.mark.skipif(not HAS_CODESPELL, reason="codespell (extra 'typos') not installed")
def test_codespell_lexicon_reaches_most_frequent_words():
    """Share of the paragraph's word tokens the attacker can change: codespell's list covers far
    more than the shipped lexicon (non-overlapping Clopper-Pearson intervals) and most tokens."""
    _, words = split_words(PARAGRAPH)
    big, small = zp.NaturalNoise(source="codespell"), zp.NaturalNoise(source="shipped")
    assert big.source == "codespell" and small.source == "shipped"
    k_big, k_small = sum(big.eligible(w) for w in words), sum(small.eligible(w) for w in words)
    ci_big = stats.binomtest(k_big, len(words)).proportion_ci(0.95)
    ci_small = stats.binomtest(k_small, len(words)).proportion_ci(0.95)
    assert ci_big.low > ci_small.high
    assert ci_big.low > 0.5
    assert len(zp.load_codespell_lexicon()) > 10_000
    # every replacement is a misspelling codespell lists for that word
    inv = zp.load_codespell_lexicon()
    r = big(PARAGRAPH, 0.8, seed=0)
    _, new = split_words(r.perturbed)
    for i in r.attacked:
        assert new[i].lower() in inv[words[i].lower()]


def test_fallback_without_codespell_warns_and_uses_the_shipped_lexicon(monkeypatch):
    natural_noise.load_codespell_lexicon.cache_clear()
    monkeypatch.setitem(sys.modules, "codespell_lib", None)  # as if the typos extra were not installed
    try:
        with pytest.warns(RuntimeWarning, match="codespell is not installed"):
            att = zp.NaturalNoise()
        assert att.source == "shipped" and att.lexicon.keys() == zp.load_default_lexicon().keys()
        with pytest.raises(ImportError, match=r"zeroe-perturb\[typos\]"):
            zp.NaturalNoise(source="codespell")
    finally:
        natural_noise.load_codespell_lexicon.cache_clear()
    with pytest.raises(ValueError, match="source must be one of"):
        zp.NaturalNoise(source="wikipedia")
