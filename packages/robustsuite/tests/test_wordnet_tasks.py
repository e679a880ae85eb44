"""WordNet task data and models of the Zéroe section (pairs, multi-label, POS tagging): shipped hashes,
accuracies against the build record, how labels are derived, and the tagger's token alignment."""

import numpy as np
import pytest
import torch
from scipy.stats import binomtest

from robustsuite import _wordnet_tasks as wt
from robustsuite import load_model, models
from robustsuite.data import BUILTIN_DATASETS

WORDNET = wt.Path("/usr/share/wordnet")
needs_wordnet = pytest.mark.skipif(not (WORDNET / "data.noun").is_file(), reason="WordNet 3.0 not installed "
                                   "(Debian wordnet-base); the shipped files are tested without it")


@pytest.fixture(scope="module")
def MANIFEST():  # noqa: N802
    return wt.manifest()


def test_every_shipped_task_file_matches_its_manifest(MANIFEST):
    from robustsuite._io import sha256_file

    present = {p.relative_to(wt.RESOURCES).as_posix() for p in wt.RESOURCES.rglob("*")
               if p.is_file() and p.name != "manifest.json" and "__pycache__" not in p.parts}
    assert present == set(MANIFEST["files"]), "re-run tools/build_wordnet_tasks.py"
    for rel, info in MANIFEST["files"].items():
        assert sha256_file(wt.RESOURCES / rel) == info["sha256"], rel
    assert MANIFEST["total_bytes"] == sum(i["bytes"] for i in MANIFEST["files"].values()) < 6_000_000
    # the shared tokenizer is the one the models were trained with
    assert sha256_file(wt.TOKENIZER_DIR / "tokenizer.json") == MANIFEST["tokenizer"]["sha256"]
    assert set(MANIFEST["models"]) == set(wt.TASK_RECIPES) == set(models.WORDNET_TASK_MODELS)
    for name, rec in MANIFEST["models"].items():
        assert rec["recipe"] == wt.recipe_dict(name), f"{name}: recipe changed since the build"


@pytest.mark.parametrize("name", sorted(wt.TASK_RECIPES))
def test_task_model_accuracy_agrees_with_the_build_record(name, MANIFEST):
    """Same weights, same shipped test split: the recorded accuracy lies in the Clopper-Pearson interval of the
    count measured here (another CPU may flip a few borderline predictions), far above chance."""
    rec = MANIFEST["models"][name]["test"]
    model = load_model(f"builtin:{name}")
    correct, n = wt.correct_total(name, model, "test")
    assert n == rec["n"]
    ci = binomtest(correct, n).proportion_ci(0.95, method="exact")
    assert ci.low <= rec["accuracy"] <= ci.high, (name, correct, rec)
    assert models.builtin_manifest(name)["test"] == rec


def test_accuracy_check_catches_a_wrong_input(MANIFEST):
    """Not vacuous: the pair model's classes read in the wrong order (a label-mapping error) fall far outside
    the recorded interval."""
    rec = MANIFEST["models"]["wordnet-pairs-roberta"]["test"]
    model = load_model("builtin:wordnet-pairs-roberta")
    x, y = wt.task_split("pairs", "test")
    wrong = int((torch.as_tensor(model(x)).argmax(1) == 1 - y).sum())
    ci = binomtest(wrong, len(y)).proportion_ci(0.95, method="exact")
    assert ci.high < rec["ci_low"]


def test_task_datasets_have_the_documented_shapes():
    pairs = BUILTIN_DATASETS["wordnet-pairs"][0]()
    assert pairs.classes == wt.PAIR_CLASSES and isinstance(pairs.test.x[0], tuple) and len(pairs.test.x[0]) == 2
    # balanced classes: the share of label 1 lies in a 99 % binomial interval around 1/2
    ones = int(pairs.train.y.sum())
    assert binomtest(ones, len(pairs.train.y), 0.5).pvalue > 0.01
    ml = BUILTIN_DATASETS["wordnet-multilabel"][0]()
    assert ml.test.y.shape == (len(ml.test.x), 8) and set(ml.test.y.unique().tolist()) == {0, 1}
    assert (ml.train.y.sum(1) >= 1).all() and (ml.train.y.sum(1) >= 2).float().mean() > 0.3
    pos = BUILTIN_DATASETS["wordnet-pos"][0]()
    assert pos.classes == wt.POS_TAGS
    for toks, y in zip(pos.test.x[:50], pos.test.y[:50], strict=True):
        assert (y[:len(toks)] >= 0).sum() >= 3 and (y[len(toks):] == -1).all()


def test_tagging_labels_follow_the_lexicon_rule():
    """On a toy lexicon: a form in exactly one index file gets that POS; function words, ambiguous forms,
    unknown forms and punctuation get -1."""
    syn = wt.Synset(1, "n", "artifact", ("cat",), (), 'a thing; "the quick cat runs fast , happily"')
    lemmas = {"noun": {"cat", "run", "the", "quick"}, "verb": {"run", "runs"}, "adj": {"quick", "fast"},
              "adv": {"fast", "happily"}}
    wt.SIZES["tagging"], saved = {"train": 1, "val": 0, "test": 0}, wt.SIZES["tagging"]
    try:
        out = wt.build_tagging([syn], lemmas)
    finally:
        wt.SIZES["tagging"] = saved
    toks, tags = out["train"]["tokens"][0], out["train"]["tags"][0]
    got = dict(zip(toks, tags, strict=True))
    assert got == {"the": -1, "quick": -1, "cat": 0, "runs": 1, "fast": -1, ",": -1, "happily": 3}


def test_tagger_gives_one_row_per_token_even_when_an_attack_splits_it():
    tagger = load_model("builtin:wordnet-pos-roberta")
    sents = [["The", "cat", "sat", "."], ["h a r m", "less", "w@o@r@d"], ["word"] * 200]
    out = tagger(sents)
    assert [o.shape for o in out] == [(4, 4), (3, 4), (200, 4)]
    assert np.all(out[2][-1] == 0)  # cut off by max_length: no logits (a uniform guess), not a crash
    assert np.all(np.isfinite(np.concatenate(out)))
    with pytest.raises(TypeError, match="token lists"):
        tagger(["not", "tokenised"])


@needs_wordnet
@pytest.mark.slow
def test_shipped_labels_follow_their_derivation_from_wordnet():
    """Every shipped pair / multi-label / tag is re-derived from Debian's WordNet files."""
    nouns = {s.offset: s for s in wt.parse_data(WORDNET / "data.noun")}
    defs = {o: wt.split_gloss(s.gloss)[0] for o, s in nouns.items()}
    t = wt.load_tasks()
    for split in ("train", "test"):
        d = t["pairs"][split]
        for (a, b), y, pre, hyp in zip(d["offsets"], d["label"], d["premise"], d["hypothesis"], strict=True):
            assert (defs[a], defs[b]) == (pre, hyp)
            assert (b in nouns[a].hypernyms) == bool(y)
            if not y:
                assert nouns[a].lex != nouns[b].lex
    lemmas = {pos: wt.parse_index(WORDNET / f"index.{pos}") for pos in wt.POS_FILES}
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    for toks, tags in zip(t["tagging"]["test"]["tokens"], t["tagging"]["test"]["tags"], strict=True):
        for tok, tag in zip(toks, tags, strict=True):
            hits = [k for k, pos in enumerate(wt.POS_FILES) if tok.lower() in lemmas[pos]]
            want = hits[0] if len(hits) == 1 and tok.lower() not in ENGLISH_STOP_WORDS else -1
            assert tag == want, (tok, tag)
    assert wt.encode(wt.build_tasks(WORDNET)) == wt.TASKS_FILE.read_bytes()  # the build is deterministic
