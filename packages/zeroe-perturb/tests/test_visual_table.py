"""The shipped BMP-wide visual table (issue 15, item 6) and VIPER's similarity-weighted choice."""

from __future__ import annotations

import unicodedata
from collections import Counter

import pytest
from scipy import stats

import zeroe_perturb as zp
from zeroe_perturb._tokens import WORD_RE
from zeroe_perturb.visual import load_neighbour_weights, load_table_metadata


def test_unifont_table_covers_latin_greek_cyrillic_with_bmp_neighbours():
    nb = zp.load_neighbours()  # default: the Unifont table
    sims = load_neighbour_weights()
    meta = load_table_metadata()
    assert meta["fonts"] == ["unifont.otf"] and meta["n_glyphs"] > 40_000 and meta["k"] == 20
    assert len(nb) > 1000  # was 156 source characters
    for c in "aeiouAEIOUxyzXYZ0123456789éßçñøαβγабвгд":
        assert c in nb and len(nb[c]) == 20
    scripts = Counter()
    for c, v in nb.items():
        assert c not in v and len(set(v)) == len(v)
        assert all(len(x) == 1 and ord(x) <= 0xFFFF and x.isprintable() and WORD_RE.fullmatch(x) for x in v)
        s = sims[c]
        assert len(s) == len(v) and all(a >= b for a, b in zip(s, s[1:], strict=False)) and 0 < s[-1] <= 1
        scripts.update(unicodedata.name(x, "?").split()[0] for x in v)
    assert len(scripts) > 20  # neighbours come from across the BMP, not one script


def test_visual_attacker_uses_the_unifont_table_and_picks_by_similarity():
    """VIPER draws a neighbour with probability proportional to its similarity: the frequency of each
    of the top three neighbours of 'a' lies in its Clopper-Pearson interval around sim_j / Σ sim."""
    att = zp.Visual()
    assert att.embedding == "unifont" and att.neighbours["a"] == zp.load_neighbours()["a"]
    sims = load_neighbour_weights()["a"]
    out = Counter()
    for s in range(80):
        out.update(att(" ".join(["a"] * 50), 1.0, seed=s).perturbed.split())
    total = sum(out.values())
    assert total == 4000
    for j in range(3):
        k = out[att.neighbours["a"][j]]
        ci = stats.binomtest(k, total).proportion_ci(0.999)
        assert ci.low <= sims[j] / sum(sims) <= ci.high
    with pytest.raises(ValueError, match="scope"):
        zp.Visual(scope="sentence")
