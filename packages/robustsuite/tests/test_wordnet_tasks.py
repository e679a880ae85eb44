"""WordNet task data and models of the Zéroe section (pairs, multi-label, POS tagging): shipped hashes,
accuracies against the build record, the documented shapes and the tagger's token alignment. (How the labels are
derived from WordNet is tested with the build, in tests/test_build.py.)"""

import numpy as np
import pytest
import torch
from scipy.stats import binomtest

from robustsuite import load_model
from robustsuite.data import wordnet
from robustsuite.data.builtin import BUILTIN_DATASETS
from robustsuite.zoo import shipped

TASKS = {n: kind for n, (kind, _, _) in shipped.SHIPPED.items() if kind in ("pairs", "multilabel", "tagging")}


@pytest.fixture(scope="module")
def MANIFEST():  # noqa: N802
    return shipped.manifest(tasks=True)


def correct_total(task: str, model, split: str = "test") -> tuple[int, int]:
    """pairs: accuracy; multilabel: exact match of the 8 sigmoid decisions; tagging: accuracy over tagged tokens."""
    x, y, _ = wordnet.task_split(task, split)
    out = model(x)
    if task == "pairs":
        return int((torch.as_tensor(out).argmax(1) == y).sum()), len(y)
    if task == "multilabel":
        return int(((torch.as_tensor(out) > 0).long() == y).all(1).sum()), len(y)
    tags = [t[:len(toks)].numpy() for t, toks in zip(y, x, strict=True)]
    right = sum(int((z.argmax(1)[t >= 0] == t[t >= 0]).sum()) for z, t in zip(out, tags, strict=True))
    return right, sum(int((t >= 0).sum()) for t in tags)


def test_every_shipped_task_file_matches_its_manifest(MANIFEST):
    from robustsuite._io import sha256_file

    root = shipped.TASKS_DIR
    present = {p.relative_to(root).as_posix() for p in root.rglob("*")
               if p.is_file() and p.name != "manifest.json" and "__pycache__" not in p.parts}
    assert present == set(MANIFEST["files"]), "re-run tools/build/build_wordnet_tasks.py"
    for rel, info in MANIFEST["files"].items():
        assert sha256_file(root / rel) == info["sha256"], rel
    assert MANIFEST["total_bytes"] == sum(i["bytes"] for i in MANIFEST["files"].values()) < 6_000_000
    # the shared tokenizer is the one the models were trained with
    assert sha256_file(shipped.MODELS_DIR / "wordnet-roberta" / "tokenizer.json") == MANIFEST["tokenizer"]["sha256"]
    assert set(MANIFEST["models"]) == set(TASKS)


@pytest.mark.parametrize("name", sorted(TASKS))
def test_task_model_accuracy_agrees_with_the_build_record(name, MANIFEST):
    """Same weights, same shipped test split: the recorded accuracy lies in the Clopper-Pearson interval of the
    count measured here (another CPU may flip a few borderline predictions), far above chance."""
    rec = MANIFEST["models"][name]["test"]
    model = load_model(f"builtin:{name}")
    correct, n = correct_total(TASKS[name], model, "test")
    assert n == rec["n"]
    ci = binomtest(correct, n).proportion_ci(0.95, method="exact")
    assert ci.low <= rec["accuracy"] <= ci.high, (name, correct, rec)
    assert shipped.record(name)["test"] == rec


def test_accuracy_check_catches_a_wrong_input(MANIFEST):
    """Not vacuous: the pair model's classes read in the wrong order (a label-mapping error) fall far outside
    the recorded interval."""
    rec = MANIFEST["models"]["wordnet-pairs-roberta"]["test"]
    model = load_model("builtin:wordnet-pairs-roberta")
    x, y, _ = wordnet.task_split("pairs", "test")
    wrong = int((torch.as_tensor(model(x)).argmax(1) == 1 - y).sum())
    ci = binomtest(wrong, len(y)).proportion_ci(0.95, method="exact")
    assert ci.high < rec["ci_low"]


def test_task_datasets_have_the_documented_shapes():
    pairs = BUILTIN_DATASETS["wordnet-pairs"][0]()
    assert pairs.classes == ("contradiction", "entailment") and isinstance(pairs.test.x[0], tuple) and len(pairs.test.x[0]) == 2
    # balanced classes: the share of label 1 lies in a 99 % binomial interval around 1/2
    ones = int(pairs.train.y.sum())
    assert binomtest(ones, len(pairs.train.y), 0.5).pvalue > 0.01
    ml = BUILTIN_DATASETS["wordnet-multilabel"][0]()
    assert ml.test.y.shape == (len(ml.test.x), 8) and set(ml.test.y.unique().tolist()) == {0, 1}
    assert (ml.train.y.sum(1) >= 1).all() and (ml.train.y.sum(1) >= 2).float().mean() > 0.3
    pos = BUILTIN_DATASETS["wordnet-pos"][0]()
    assert pos.classes == ("NOUN", "VERB", "ADJ", "ADV")
    for toks, y in zip(pos.test.x[:50], pos.test.y[:50], strict=True):
        assert (y[:len(toks)] >= 0).sum() >= 3 and (y[len(toks):] == -1).all()


def test_tagger_gives_one_row_per_token_even_when_an_attack_splits_it():
    tagger = load_model("builtin:wordnet-pos-roberta")
    sents = [["The", "cat", "sat", "."], ["h a r m", "less", "w@o@r@d"], ["word"] * 200]
    out = tagger(sents)
    assert [o.shape for o in out] == [(4, 4), (3, 4), (200, 4)]
    assert np.all(out[2][-1] == 0)  # cut off by max_length: no logits (a uniform guess), not a crash
    assert np.all(np.isfinite(np.concatenate(out)))
    with pytest.raises(TypeError, match="token lists"):
        tagger(["not", "tokenised"])


def test_the_tagger_clears_the_zeroe_headline_margin_over_the_majority_tag(MANIFEST):
    """Issue 35: the shipped tagger's recorded test token accuracy lies at least 0.2 (the Zéroe headline's
    ``headline.min_margin``) above the share of the most frequent tag among the test split's tagged tokens."""
    pos = BUILTIN_DATASETS["wordnet-pos"][0]()
    tags = np.concatenate([np.asarray(y[:len(t)]) for t, y in zip(pos.test.x, pos.test.y, strict=True)])
    tags = tags[tags >= 0]
    majority = np.bincount(tags).max() / len(tags)
    rec = MANIFEST["models"]["wordnet-pos-roberta"]["test"]
    assert rec["n"] == len(tags)
    assert rec["ci_low"] - majority >= 0.2
