"""Shipped offline resources: visual neighbours, natural-noise lexicon, phonetic models and table."""

from __future__ import annotations

import string
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import zeroe_perturb as zp
from zeroe_perturb.phonetic import load_models, load_respelling_table, pronounce
from zeroe_perturb.visual import load_table_metadata


def test_visual_table_covers_letters_digits_punctuation_with_20_real_glyphs():
    table = zp.load_neighbours(embedding="pca")  # the older DejaVu table (the default is Unifont)
    for c in string.ascii_letters + string.digits + string.punctuation:
        nb = table[c]
        assert len(nb) == 20 and len(set(nb)) == 20 and c not in nb
        for d in nb:
            assert unicodedata.category(d) not in {"Cc", "Cf", "Cn", "Co", "Cs", "Zs", "Mn", "Me", "Mc"}
            assert d != "\ufffd" and ord(d) <= 0xFFFF
    meta = load_table_metadata("pca")
    assert meta["fonts"] == ["DejaVuSans.ttf"] and meta["canvas"] == 24 and meta["k"] == 20
    assert meta["n_glyphs"] > 4000
    # visually obvious neighbours are found by the pixel embedding
    assert {"à", "á", "â", "ä"} & set(table["a"][:10])
    assert {"О", "Ο", "0"} & set(table["O"][:10]) or {"О", "Ο", "0"} & set(table["o"][:10])


def test_cae_table_is_shipped_and_selectable():
    cae = zp.load_neighbours(embedding="cae")
    assert load_table_metadata("cae")["embedding"] == "cae64"
    assert all(len(cae[c]) == 20 and c not in cae[c] for c in string.ascii_letters + string.digits)
    out = zp.Visual(embedding="cae")("abc", 1.0, seed=0).perturbed
    assert all(y == x or y in cae[x] for x, y in zip("abc", out, strict=True))
    with pytest.raises(ValueError, match="embedding must be one of unifont, pca, cae"):
        zp.load_neighbours(embedding="vaegan")


def test_visual_custom_table_and_errors(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('{"neighbours": {"a": "xyz"}}', encoding="utf-8")
    assert zp.load_neighbours(path=p) == {"a": ("x", "y", "z")}
    assert zp.Visual(neighbours=zp.load_neighbours(path=p))("aaa", 1.0, seed=0).perturbed[0] in "xyz"
    with pytest.raises(FileNotFoundError):
        zp.load_neighbours(path=tmp_path / "missing.json")


def test_natural_noise_lexicon_format_and_loader(tmp_path):
    lex = zp.load_default_lexicon()
    assert len(lex) > 200 and "becuase" in lex["because"] and "teh" in lex["the"]
    assert all(w.isalnum() for w in lex)  # keys the tokenizer can match
    f1 = tmp_path / "a.txt"
    f1.write_text("# comment\nhouse hosue huose\nHouse hous house\n", encoding="utf-8")
    f2 = tmp_path / "b.txt"
    f2.write_text("dog\tdgo\ncat\n", encoding="utf-8")
    assert zp.load_lexicon([f1, f2]) == {"house": ("hosue", "huose", "hous"), "dog": ("dgo",)}
    with pytest.raises(FileNotFoundError):
        zp.load_lexicon(tmp_path / "nope.txt")
    custom = zp.NaturalNoise(lexicon={"dog": ["dgo"]})
    assert custom("The dog.", 1.0, seed=0).perturbed == "The dgo."


def test_phonetic_similarity_eq3_reference_values():
    assert zp.phonetic_similarity(["K", "AE", "T"], ["K", "AE", "T"]) == 1.0
    assert zp.phonetic_similarity(["K", "AE", "T"], ["K", "AH", "T"]) == pytest.approx(2 / 3)
    # d = 2 (insert two phonemes), min length 3
    assert zp.phonetic_similarity(["K", "AE", "T"], ["K", "AE", "T", "S", "IY"]) == pytest.approx(1 - 2 / 3)
    assert zp.phonetic_similarity([], []) == 1.0


def test_g2p_model_pronounces_common_words():
    expected = {"cat": "K AE T", "dog": "D AA G", "night": "N AY T", "phone": "F OW N", "really": "R IY L IY",
                "adversarial": "AE D V ER S EH R IY AH L"}
    got = pronounce(list(expected))
    assert sum(" ".join(g) == e for g, e in zip(got, expected.values(), strict=True)) >= 5


@settings(max_examples=20, deadline=None)
@given(st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=10))
@example("av")  # decodes to max_len without EOS: beam search must return the truncated hypothesis too
def test_beam_width_one_equals_greedy(word):
    g2p, p2g = load_models()
    greedy = g2p.greedy([list(word)])[0]
    beam = g2p.beam([list(word)], width=1)[0]
    assert beam[0][0] == greedy
    # batching does not change a sequence's decoding (padding is masked)
    assert g2p.greedy([list(word), list("x" * 12)])[0] == greedy


def test_respelling_table_entries_pass_the_eq3_filter():
    table = load_respelling_table()
    assert len(table) > 50_000
    for word in ("attacks", "harmless", "phone", "night"):
        for r, s in table.get(word, ()):
            assert r != word and r.isalpha() and s >= 0.7
    r = zp.PhoneticRespeller()
    assert r.respellings("attacks") and "attacks" not in r.respellings("attacks")
    strict = zp.PhoneticRespeller(min_similarity=1.0)
    assert set(strict.respellings("attacks")) <= set(r.respellings("attacks"))


def test_out_of_table_words_go_through_the_models():
    r = zp.PhoneticRespeller()
    scored = r.scored("zorbleflax")
    kept = r.respellings("zorbleflax")
    assert kept == tuple(c for c, s in scored if s >= 0.7)
    assert kept and all(c != "zorbleflax" for c in kept)
    assert zp.PhoneticRespeller(use_model=False).respellings("zorbleflax") == ()


def test_phonetic_attack_uses_kept_respellings():
    text = "The attacks were really harmless tonight"
    rep = zp.perturb(text, "phonetic", 1.0, seed=0, report=True)
    resp = zp.PhoneticRespeller()
    old, new = text.split(), rep.perturbed.split()
    assert rep.n_attacked >= 4
    for k in rep.attacked:
        assert new[k].lower() in resp.respellings(old[k])
        assert new[k][0].isupper() == old[k][0].isupper()
