"""Issue 36's zeroe-perturb cases: each refused by name before work, or the right result."""

from __future__ import annotations

import numpy as np
import pytest

import zeroe_perturb as zp
from zeroe_perturb.benchmark import evaluate, predict_logits

TEXTS = ["the movie was wonderful", "the movie was boring", "a lovely film", "a dull plot"]
LABELS = [1, 0, 1, 0]


def _keyword(texts):
    return np.array([[0.0, 2.0] if {"wonderful", "lovely"} & set(t.split()) else [2.0, 0.0] for t in texts])


def test_single_output_classifier_is_refused_not_scored():
    def one_output(texts):
        return _keyword(texts)[:, 1:]

    with pytest.raises(ValueError, match="at least 2 classes, got 1"):
        evaluate(one_output, TEXTS, [0, 0, 0, 0], attacks=["truncate"], levels=[0.5])


def test_probabilities_refused_on_a_one_text_batch():
    def softmax(texts):
        z = _keyword(texts)
        return np.exp(z) / np.exp(z).sum(1, keepdims=True)

    with pytest.raises(ValueError, match="probabilities"):
        predict_logits(softmax, TEXTS[:1])
    with pytest.raises(ValueError, match="probabilities"):
        predict_logits(softmax, TEXTS, batch_size=1)


def test_auroc_with_one_class_is_refused_before_any_query():
    calls = []

    def spy(texts):
        calls.append(len(texts))
        return _keyword(texts)

    with pytest.raises(ValueError, match=r"labels must hold both classes for metric='auroc'.*\[1\]"):
        evaluate(spy, TEXTS, [1, 1, 1, 1], attacks=["truncate"], levels=[0.5], metric="auroc")
    assert calls == []
    res = evaluate(spy, TEXTS, LABELS, attacks=["truncate"], levels=[0.5], metric="auroc")
    assert res.clean_score == 1.0


def test_classifier_changing_its_column_count_is_refused_naming_the_batch():
    def drifting(texts):
        k = 3 if any("lovely" in t for t in texts) else 2
        return np.tile(np.arange(k, dtype=float) * 3, (len(texts), 1))

    with pytest.raises(ValueError, match=r"2 columns for texts\[0:2\] and 3 for texts\[2:4\]"):
        predict_logits(drifting, TEXTS, batch_size=2)


@pytest.mark.parametrize(("start", "error"), [(1.9, TypeError), (-1, ValueError), (True, TypeError)])
def test_perturb_batch_refuses_a_start_that_is_not_a_non_negative_int(start, error):
    with pytest.raises(error, match="^start"):
        zp.perturb_batch(TEXTS, "truncate", 0.5, seed=0, start=start)


def test_kendall_tau_at_a_level_not_run_names_the_levels():
    res = evaluate(_keyword, TEXTS, LABELS, attacks=["truncate", "intrude", "segment"], levels=[0.5])
    with pytest.raises(ValueError, match=r"^p must be one of the levels run \[0\.5\], got 0\.8"):
        zp.kendall_tau_vs_paper(res, p=0.8)
