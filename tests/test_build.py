"""tools/build/: the build-time code of the shipped artefacts (one WordNet parser, one tiny-transformer training
loop, the deterministic tokenizers, the data builders). Every shipped file rebuilds byte-identical: the data files
here (with Debian's files when installed), the small models in slow tests; the package's own tests check the files
against their manifests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

BUILD = Path(__file__).resolve().parents[1] / "tools" / "build"
sys.path.insert(0, str(BUILD))

import _data  # noqa: E402
import _recipes as R  # noqa: E402
import _train  # noqa: E402
import _wordnet as wn  # noqa: E402

from robustsuite.data import builtin, fashion, wordnet  # noqa: E402
from robustsuite.zoo import shipped  # noqa: E402

HAS_WORDNET = (wn.DEBIAN_DIR / "data.noun").is_file()
needs_wordnet = pytest.mark.skipif(not HAS_WORDNET, reason=f"WordNet not installed at {wn.DEBIAN_DIR} (Debian "
                                   "package wordnet-base); the shipped files are tested without it")
needs_fashion = pytest.mark.skipif(not fashion._has_idx(fashion.DEBIAN_DIR), reason="Fashion-MNIST IDX files not "
                                   f"installed at {fashion.DEBIAN_DIR} (Debian package dataset-fashion-mnist)")


def test_the_one_wordnet_parser_reads_the_data_format(tmp_path):
    p = tmp_path / "data.noun"
    p.write_text("  1 licence line\n"
                 "00001740 03 n 01 entity 0 003 ~ 00001930 n 0000 ~ 00002137 n 0000 @ 00000001 n 0000 | that which is "
                 "perceived  \n"
                 "02084071 05 n 02 dog 0 domestic_dog 0 000 | a member of the genus Canis; \"the dog barked\"\n",
                 encoding="utf-8")
    a, b = wn.parse_data(p)
    assert (a.offset, a.lex, a.words, a.hypernyms, a.gloss) == (1740, "Tops", ("entity",), (1,), "that which is perceived")
    assert (b.lex, b.words, b.gloss) == ("animal", ("dog", "domestic_dog"), 'a member of the genus Canis; "the dog barked"')
    assert wn.split_gloss(b.gloss) == ("a member of the genus Canis", ["the dog barked"])
    p.write_text("00001740 03 n zz entity\n", encoding="utf-8")
    with pytest.raises(wn.WordNetError, match="data.noun:1"):
        wn.parse_data(p)


@needs_wordnet
def test_wordnet_topics_rebuild_byte_identical():
    assert wn.encode(wn.build_topics(wn.DEBIAN_DIR)) == wordnet.TOPICS_FILE.read_bytes()


@needs_fashion
def test_fashion_subset_rebuild_reproduces_the_shipped_arrays():
    """The selection uses numpy's PCG64 Generator; uv.lock pins numpy, so CI rebuilds the same subset."""
    rebuilt = _data.subset_arrays(fashion.read_official(fashion.DEBIAN_DIR))
    ship = fashion.load_shipped()
    assert sorted(rebuilt) == sorted(ship)
    for k in ship:
        assert rebuilt[k].dtype == ship[k].dtype and np.array_equal(rebuilt[k], ship[k]), k


def test_sentiment_corpora_rebuild_byte_identical():
    assert wn.encode(_data.corpora()) == builtin.CORPORA_FILE.read_bytes()


def test_recipes_agree_with_the_manifests():
    for name in shipped.SHIPPED:
        assert shipped.record(name)["recipe"] == R.recipe_dict(name), f"{name}: recipe changed since the build"
    assert R.FASHION_RECIPES["fashion-cnn-at"].eps == 0.1


def test_tagging_labels_follow_the_lexicon_rule(monkeypatch):
    """On a toy lexicon: a form in exactly one index file gets that POS; function words, ambiguous forms,
    unknown forms and punctuation get -1."""
    syn = wn.Synset(1, "n", "artifact", ("cat",), (), 'a thing; "the quick cat runs fast , happily"')
    lemmas = {"noun": {"cat", "run", "the", "quick"}, "verb": {"run", "runs"}, "adj": {"quick", "fast"},
              "adv": {"fast", "happily"}}
    monkeypatch.setitem(wn.SIZES, "tagging", {"train": 1, "val": 0, "test": 0})
    out = wn.build_tagging([syn], lemmas)
    got = dict(zip(out["train"]["tokens"][0], out["train"]["tags"][0], strict=True))
    assert got == {"the": -1, "quick": -1, "cat": 0, "runs": 1, "fast": -1, ",": -1, "happily": 3}


def test_bpe_merges_rank_by_count_then_lexicographically():
    vocab, merges = _train.bpe_merges(["ab ab ab cd cd"], vocab_size=1000)
    # (a,b) occurs 3x; then (c,d), (Ġ,ab), (Ġ,c) tie at 2 and 'c' < 'Ġ'; then (Ġ,ab) < (Ġ,cd)
    assert merges == [("a", "b"), ("c", "d"), ("Ġ", "ab"), ("Ġ", "cd")]
    assert vocab["<s>"] == 0 and vocab["<pad>"] == 1 and vocab["</s>"] == 2 and vocab["<unk>"] == 3
    assert max(vocab.values()) == vocab["<mask>"] == len(vocab) - 1
    small, m2 = _train.bpe_merges(["ab ab ab cd cd"], vocab_size=4 + 256 + 1 + 2)
    assert m2 == merges[:2] and len(small) == 263


def test_wordpiece_vocab_falls_back_to_characters():
    vocab = _train.wordpiece_vocab(["the movie was great.", "the plot was dull!"], 100)
    assert list(vocab)[:5] == ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    assert {"the", "was", "t", "##t", "!"} <= set(vocab)
    assert list(vocab).index("the") < list(vocab).index("movie")  # by frequency, then alphabetically


def test_tokenizers_are_identical_across_processes():
    """Same corpus, same vocabulary and merges in every process (tokenizers' own WordPiece trainer is not: it breaks
    ties in hash-map order)."""
    code = (f"import hashlib, json, sys; sys.path.insert(0, {str(BUILD)!r}); import _train; "
            "from robustsuite.data.builtin import sentiment_mini, wordnet_topics; "
            "tok = _train.train_tokenizer(list(sentiment_mini().train.x), 2000); "
            "m = _train.bpe_merges(list(wordnet_topics().train.x)[:2000], 1200); "
            "print(hashlib.sha256(json.dumps([sorted(tok.get_vocab().items()), m]).encode()).hexdigest())")
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
            for _ in range(2)}
    assert len(outs) == 1


def _same_weights(a: dict, b: dict) -> bool:
    return sorted(a) == sorted(b) and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.slow
def test_small_models_rebuild_bit_identical_on_one_thread_whatever_the_caller_uses():
    """digits-cnn (the digits CNN loop) and text-tiny (the one transformer loop) retrained from their recipes give
    the shipped weights exactly; the caller's thread count is restored."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        digits = _train.train_digits(R.DIGITS_RECIPES["digits-cnn"], builtin.digits())
        ds = builtin.sentiment_mini()
        tiny = _train.train_text_tiny(R.TINY_RECIPES["text-tiny"], list(ds.train.x), ds.train.y, ds.classes)
    finally:
        torch.set_num_threads(before)
    assert _same_weights(digits.state_dict(), shipped.load("digits-cnn").state_dict())
    assert _same_weights(tiny.model.state_dict(), shipped.load("text-tiny").model.state_dict())
    assert tiny.tokenizer.get_vocab() == shipped.load("text-tiny").tokenizer.get_vocab()


@needs_wordnet
@pytest.mark.slow
def test_shipped_task_labels_follow_their_derivation_from_wordnet():
    """Every shipped pair / multi-label / tag is re-derived from Debian's WordNet files, and the whole task file
    rebuilds byte-identical."""
    nouns = {s.offset: s for s in wn.parse_data(wn.DEBIAN_DIR / "data.noun")}
    defs = {o: wn.split_gloss(s.gloss)[0] for o, s in nouns.items()}
    t = wordnet.tasks()
    for split in ("train", "test"):
        d = t["pairs"][split]
        for a, c, y, pre, hyp in zip(d["offset"], d["claim"], d["label"], d["premise"], d["hypothesis"], strict=True):
            assert (defs[a], f"It is {wn.CLAIMS[c]}.") == (pre, hyp)
            assert (nouns[a].lex == c) == bool(y) and c in wn.CLASSES
    lemmas = {pos: wn.parse_index(wn.DEBIAN_DIR / f"index.{pos}") for pos in wn.POS_FILES}
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    for toks, tags in zip(t["tagging"]["test"]["tokens"], t["tagging"]["test"]["tags"], strict=True):
        for tok, tag in zip(toks, tags, strict=True):
            hits = [k for k, pos in enumerate(wn.POS_FILES) if tok.lower() in lemmas[pos]]
            want = hits[0] if len(hits) == 1 and tok.lower() not in ENGLISH_STOP_WORDS else -1
            assert tag == want, (tok, tag)
    assert wn.encode(wn.build_tasks(wn.DEBIAN_DIR)) == wordnet.TASKS_FILE.read_bytes()
