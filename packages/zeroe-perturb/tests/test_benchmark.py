"""§4 benchmark protocol: Eq. 1, Table 5 ranking, Fig. 5, and the paper's effects on a tiny BERT."""

from __future__ import annotations

import json

import numpy as np
import pytest

import zeroe_perturb as zp
from zeroe_perturb.benchmark import BenchmarkResult, accuracy, attack_texts, auroc, evaluate

POSITIVE = {"good", "great", "wonderful", "excellent", "brilliant", "lovely", "enjoyable", "charming",
            "beautiful", "amazing", "delightful", "superb"}


def keyword_classifier(texts: list[str]) -> np.ndarray:
    """Exact-word lookup: positive iff a positive word occurs verbatim (brittle to any misspelling)."""
    return np.array([[0.0, 2.0] if POSITIVE & set(t.split()) else [2.0, 0.0] for t in texts])


def test_evaluate_matches_independent_computation(corpus):
    _, (texts, labels) = corpus
    res = evaluate(keyword_classifier, texts, labels, attacks=["truncate", "visual"], levels=[0.0, 0.5], seed=3)
    y = np.array(labels)
    s0 = accuracy(y, keyword_classifier(texts))
    assert res.clean_score == pytest.approx(s0) and s0 == 1.0
    for a in ("truncate", "visual"):
        assert res.relative(a, 0.0) == 1.0  # p = 0 leaves the data clean
        adv, dist, _ = attack_texts(texts, a, 0.5, seed=3)
        assert res.relative(a, 0.5) == pytest.approx(accuracy(y, keyword_classifier(adv)) / s0)
        cell = [s for s in res.scores if s.attack == a and s.p == 0.5][0]
        assert cell.mean_edit_distance == pytest.approx(dist.mean())
    again = evaluate(keyword_classifier, texts, labels, attacks=["truncate", "visual"], levels=[0.0, 0.5], seed=3)
    assert again == res


def test_auroc_matches_sklearn_with_ties():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    logits = np.round(rng.normal(size=(300, 2)) + y[:, None] * [0, 0.7], 1)  # rounding creates ties
    assert auroc(y, logits) == pytest.approx(roc_auc_score(y, logits[:, 1] - logits[:, 0]), abs=1e-12)
    Y = rng.integers(0, 2, (300, 4))
    Z = rng.normal(size=(300, 4)) + Y
    assert auroc(Y, Z) == pytest.approx(roc_auc_score(Y, Z, average="macro"), abs=1e-12)


def test_ranking_table_and_json():
    scores = tuple(zp.benchmark.AttackScore(a, p, r * 0.9, r, d, p) for a, r, d in
                   [("visual", 0.3, 9.0), ("intrude", 0.3, 8.0), ("phonetic", 0.95, 1.0), ("truncate", 0.8, 2.0)]
                   for p in (0.8,))
    res = BenchmarkResult("accuracy", 0.9, 10, 0, scores, (0.8,))
    assert res.ranking(0.8) == [(1, "intrude", 0.3), (1, "visual", 0.3), (3, "truncate", 0.8), (4, "phonetic", 0.95)]
    cols, rows = res.table()
    assert cols == ["attack", "s*(0.8)"] and rows[0] == ["visual", 0.3]
    a, b, r = res.edit_distance_fit()
    assert b < 0 and r < -0.9
    d = res.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert BenchmarkResult.from_dict(d) == res


def test_bad_benchmark_inputs():
    with pytest.raises(ValueError, match="labels must have one label per input"):
        evaluate(keyword_classifier, ["a", "b"], [1])
    with pytest.raises(ValueError, match="attacks must be names from"):
        evaluate(keyword_classifier, ["a"], [1], attacks=["typo"])
    with pytest.raises(ValueError, match="metric must be one of"):
        evaluate(keyword_classifier, ["a"], [1], metric="f1")
    with pytest.raises(ValueError, match="levels must be in"):
        evaluate(keyword_classifier, ["a"], [1], levels=[2.0])


def test_plot_edit_distance_returns_figure(corpus):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    _, (texts, labels) = corpus
    res = evaluate(keyword_classifier, texts[:40], labels[:40], attacks=["truncate", "intrude"], seed=0)
    fig = res.plot_edit_distance()
    assert len(fig.axes[0].collections) == 2
    matplotlib.pyplot.close(fig)


def test_seeds_chance_line_and_figure(corpus):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from robustsuite_common.intervals import seed_interval
    from zeroe_perturb.benchmark import chance_score, evaluate_seeds, plot_relative_scores

    (_, _), (texts, labels) = corpus
    texts, labels = texts[:80], labels[:80]
    res = evaluate_seeds(keyword_classifier, texts, labels, seeds=[0, 1, 2], attacks=["visual", "truncate"],
                         levels=[0.2, 0.8])
    assert [r.seed for r in res] == [0, 1, 2]
    # the keyword model is wiped out by visual at p = 0.8: s* at the chance line, far below truncate at 0.2
    ch = chance_score(labels)
    assert ch == pytest.approx(max(np.mean(labels), 1 - np.mean(labels)))
    vis = seed_interval([r.relative("visual", 0.8) for r in res], bounds=(0.0, None))
    trunc = seed_interval([r.relative("truncate", 0.2) for r in res], bounds=(0.0, None))
    assert vis.high < trunc.low
    fig = plot_relative_scores(res, chance=ch)
    assert any(line.get_linestyle() == "--" for line in fig.axes[0].lines)
    assert len(fig.axes[0].collections) == 2  # one interval band per attacker (three seeds)
    matplotlib.pyplot.close(fig)
    fig = plot_relative_scores(res[:2], chance=ch)
    assert not fig.axes[0].collections and "fewer than 3 seeds" in fig.axes[0].get_title()
    matplotlib.pyplot.close(fig)
    with pytest.raises(ValueError, match="seeds"):
        evaluate_seeds(keyword_classifier, texts, labels, seeds=[1, 1])


@pytest.mark.parametrize("attack", ["segment", "truncate", "intrude", "visual", "natural-noise"])
def test_attack_texts_is_the_per_text_definition(corpus, attack):
    """attack_texts runs the batch loops; each text must still get item_seed(i, seed=level_seed(...))'s stream."""
    from zeroe_perturb import get_attacker
    from zeroe_perturb.benchmark import level_seed
    from zeroe_perturb.protocol import item_seed

    _, (texts, _) = corpus
    adv, dist, frac = attack_texts(texts, attack, 0.5, seed=7)
    a = get_attacker(attack)
    base = level_seed(7, attack, 0.5)
    reps = [a(t, 0.5, seed=item_seed(i, seed=base)) for i, t in enumerate(texts)]
    assert adv == [r.perturbed for r in reps]
    assert dist.tolist() == [float(r.edit_distance) for r in reps]
    assert frac.tolist() == [float(r.fraction_attacked) for r in reps]
