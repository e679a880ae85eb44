"""The paper's task types beyond sentence classification (issue 15, item 8): sentence pairs (hypothesis or
both perturbed), multi-label classification (macro AUROC) and token tagging with aligned perturbations."""

from __future__ import annotations

import numpy as np
import pytest

import zeroe_perturb as zp
from zeroe_perturb.benchmark import evaluate
from zeroe_perturb.tasks import attack_pairs, evaluate_pairs, evaluate_tagging, perturb_tokens

PAIRS = [("a man plays a guitar outside", "a man plays music"), ("a dog runs in the park", "an animal is running"),
         ("two women are cooking dinner", "people prepare food"), ("a child sleeps on the sofa", "a kid is resting")]
VOCAB = {"a", "an", "is", "music", "animal", "running", "people", "prepare", "food", "kid", "resting", "plays"}


def pair_model(pairs):
    """Entailment iff the hypothesis words all occur verbatim in the vocabulary or the premise."""
    return np.array([[0.0, 2.0] if all(w in VOCAB or w in pre.split() for w in hyp.split()) else [2.0, 0.0]
                     for pre, hyp in pairs])


def test_pairs_hypothesis_only_and_both():
    adv, dist = attack_pairs(PAIRS, "truncate", 1.0, seed=0)
    assert [a[0] for a in adv] == [p[0] for p in PAIRS]  # premise untouched
    assert all(a[1] != p[1] for a, p in zip(adv, PAIRS, strict=True)) and (dist > 0).all()
    both, dist2 = attack_pairs(PAIRS, "truncate", 1.0, seed=0, target="both")
    assert [b[1] for b in both] == [a[1] for a in adv]  # same hypothesis stream
    assert all(b[0] != p[0] for b, p in zip(both, PAIRS, strict=True)) and (dist2 > dist).all()
    res = evaluate_pairs(pair_model, PAIRS, [1, 1, 1, 1], attacks=["truncate", "intrude"], levels=[0.8])
    assert res.clean_score == 1.0 and res.relative("truncate", 0.8) < 1.0
    with pytest.raises(ValueError, match="target must be one of"):
        attack_pairs(PAIRS, "truncate", 0.5, seed=0, target="premise")
    with pytest.raises(TypeError, match="pairs"):
        evaluate_pairs(pair_model, ["not a pair"], [1])


def test_token_perturbation_stays_aligned_and_segment_is_refused():
    toks = ["The", "cat", ",", "however", ",", "sat", "on", "the", "mat", "."]
    for attack in [a for a in zp.ATTACKS if a != "segment"]:
        for s in range(20):
            out = perturb_tokens(toks, attack, 0.8, seed=s)
            assert len(out) == len(toks)
            assert out[2] == "," and out[9] == "."  # punctuation tokens are never changed
            assert perturb_tokens(toks, attack, 0.8, seed=s) == out
    assert perturb_tokens(toks, "truncate", 1.0, seed=0)[3] == "howeve"
    with pytest.raises(ValueError, match="segment cannot be applied"):
        perturb_tokens(toks, "segment", 0.5, seed=0)


def test_tagging_benchmark_token_accuracy_drops_under_attack():
    lexicon = {"the": 0, "a": 0, "cat": 1, "dog": 1, "mat": 1, "sat": 2, "ran": 2, "on": 3, ".": 4}

    def tagger(sents):  # lookup tagger: unknown (perturbed) tokens get tag 1
        return [2 * np.eye(5)[[lexicon.get(t.lower(), 1) for t in s]] for s in sents]

    sents = [["The", "cat", "sat", "on", "the", "mat", "."], ["A", "dog", "ran", "on", "a", "mat", "."]] * 10
    tags = [[lexicon[t.lower()] for t in s] for s in sents]
    res = evaluate_tagging(tagger, sents, tags, attacks=["keyboard-typo", "visual"], levels=[0.2, 0.8])
    assert res.clean_score == 1.0 and res.metric == "token_accuracy"
    for a in ("keyboard-typo", "visual"):
        assert res.relative(a, 0.8) < res.relative(a, 0.2) < 1.0
    with pytest.raises(ValueError, match="one tag per token"):
        evaluate_tagging(tagger, sents, tags[:-1])


def test_multilabel_classification_with_macro_auroc():
    texts = ["toxic insult here", "a nice day", "insult only", "toxic words", "lovely people", "toxic insult again"]
    y = np.array([[1, 1], [0, 0], [0, 1], [1, 0], [0, 0], [1, 1]])

    def clf(ts):
        return np.array([[float("toxic" in t.split()), float("insult" in t.split())] for t in ts])

    res = evaluate(clf, texts, y, metric="auroc", attacks=["visual"], levels=[0.8])
    assert res.clean_score == 1.0 and res.relative("visual", 0.8) < 1.0


def test_token_accuracy_skips_unscored_tags():
    """Tags < 0 mark tokens that carry no gold tag (punctuation, ambiguous words): neither right nor wrong."""
    from zeroe_perturb.tasks import token_accuracy

    z = [np.array([[2.0, 0.0], [0.0, 2.0], [2.0, 0.0]]), np.array([[0.0, 1.0]])]
    assert token_accuracy([[0, -1, 0], [1]], z) == 1.0
    assert token_accuracy([[0, 1, 1], [1]], z) == 0.75
    assert np.isnan(token_accuracy([[-1, -1, -1], [-1]], z))


def test_attack_sentences_are_the_ones_evaluate_tagging_scores():
    from zeroe_perturb.benchmark import level_seed
    from zeroe_perturb.protocol import item_seed
    from zeroe_perturb.tasks import attack_sentences, evaluate_tagging, perturb_tokens

    sents = [["The", "cat", "sat", "on", "the", "mat", "."], ["Dogs", "bark", "loudly"]]
    tags = [[0, 1, 2, 3, 0, 1, -1], [1, 2, 3]]
    for a in ("intrude", "visual"):
        adv = attack_sentences(sents, a, 0.8, seed=5)
        base = level_seed(5, a, 0.8)
        assert adv == [perturb_tokens(s, a, 0.8, seed=item_seed(i, seed=base)) for i, s in enumerate(sents)]
    seen = []

    def tagger(batch):  # records what it is asked to tag; logits from the token lengths
        seen.append([list(s) for s in batch])
        return [2 * np.eye(4)[[len(t) % 4 for t in s]] for s in batch]

    evaluate_tagging(tagger, sents, tags, attacks=["visual"], levels=[0.8], seed=5)
    assert seen[1] == attack_sentences(sents, "visual", 0.8, seed=5)
