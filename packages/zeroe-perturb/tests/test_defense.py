"""§4.3 adversarial training (Eq. 2) on a tiny BERT built in the test, and the paper's effects."""

from __future__ import annotations

import json

import numpy as np
import pytest

from zeroe_perturb import ATTACKS
from zeroe_perturb.benchmark import evaluate

pytest.importorskip("torch")
pytest.importorskip("transformers")

from zeroe_perturb.defense import (  # noqa: E402
    FineTuneConfig,
    adversarial_training_set,
    fine_tune,
    leave_one_out_defense,
    one_one_defense,
)
from zeroe_perturb.hf import HFTextClassifier  # noqa: E402

CFG = FineTuneConfig(epochs=6, lr=3e-3, batch_size=32, max_length=48)


@pytest.fixture(scope="module")
def clean_model(tiny_bert, corpus):
    model, tok = tiny_bert
    (tr, ytr), _ = corpus
    before = [p.detach().clone() for p in model.parameters()]
    m = fine_tune(model, tok, tr, ytr, config=CFG, seed=0)
    assert all(np.array_equal(a.numpy(), b.detach().numpy()) for a, b in zip(before, model.parameters(), strict=True))
    return m


def test_fine_tune_is_deterministic_and_learns(tiny_bert, corpus, clean_model):
    model, tok = tiny_bert
    (tr, ytr), (te, yte) = corpus
    m2 = fine_tune(model, tok, tr, ytr, config=CFG, seed=0)
    for a, b in zip(clean_model.parameters(), m2.parameters(), strict=True):
        assert np.array_equal(a.detach().numpy(), b.detach().numpy())
    clf = HFTextClassifier(clean_model, tok)
    assert np.mean(clf(te).argmax(1) == np.array(yte)) > 0.9


def test_attacks_degrade_tiny_bert_more_at_higher_levels(tiny_bert, corpus, clean_model):
    """§4.2: every attacker lowers the score, more so at higher p; Fig. 5: degradation grows with edits."""
    _, tok = tiny_bert
    _, (te, yte) = corpus
    attacks = [a for a in ATTACKS if a != "phonetic"]
    res = evaluate(HFTextClassifier(clean_model, tok), te, yte, attacks=attacks, seed=0)
    for a in attacks:
        assert res.relative(a, 0.8) < 0.95, a
        assert res.relative(a, 0.8) <= res.relative(a, 0.2), a
    _, slope, r = res.edit_distance_fit()
    assert slope < 0 and r < -0.3


def test_adversarial_training_set_mixes_attackers_and_levels(corpus):
    (tr, ytr), _ = corpus
    adv, y = adversarial_training_set(tr[:90], ytr[:90], ["truncate", "segment", "intrude"], seed=0)
    assert len(adv) == 90 and list(y) == ytr[:90]
    assert sum(a != t for a, t in zip(adv, tr[:90], strict=True)) > 45
    adv2, _ = adversarial_training_set(tr[:90], ytr[:90], ["truncate", "segment", "intrude"], seed=0)
    assert adv == adv2


def test_one_one_diagonal_improves_and_eq2(tiny_bert, corpus, clean_model):
    """Fig. 2: 1-1 (α, α) adversarial training raises the attacked score (Δ > 0 at high p)."""
    model, tok = tiny_bert
    (tr, ytr), (te, yte) = corpus
    res = one_one_defense(model, tok, tr, ytr, te, yte, train_attacks=["disemvowel"],
                          test_attacks=["disemvowel", "truncate"], config=CFG, seed=0, clean_model=clean_model)
    assert res.delta("disemvowel", "disemvowel", 0.8) > 0.1
    for (tr_a, te_a, p), v in res.defended.items():
        base = 1.0 if p == 0 else res.baseline[(te_a, p)]
        assert res.delta(tr_a, te_a, p) == pytest.approx(v - base)  # Eq. 2
    d = res.to_dict()
    assert json.loads(json.dumps(d)) == d and d["strategy"] == "1-1"


def test_leave_one_out_runs_and_is_well_formed(tiny_bert, corpus, clean_model):
    model, tok = tiny_bert
    (tr, ytr), (te, yte) = corpus
    res = leave_one_out_defense(model, tok, tr, ytr, te[:100], yte[:100],
                                attacks=["disemvowel", "truncate", "keyboard-typo"], held_out=["truncate"],
                                levels=[0.8], config=CFG, seed=0, clean_model=clean_model)
    assert set(res.defended) == {("loo-truncate", "truncate", 0.0), ("loo-truncate", "truncate", 0.8)}
    # training on disemvowel + keyboard-typo also shields against truncation (the paper's group (1))
    assert res.delta("loo-truncate", "truncate", 0.8) > 0.0
    with pytest.raises(ValueError, match="at least two"):
        leave_one_out_defense(model, tok, tr, ytr, te, yte, attacks=["truncate"], clean_model=clean_model)


def test_adversarial_training_set_with_clean_copies(corpus):
    """Clean texts first, then the same attacked copies as without clean copies; labels repeated."""
    (tr, ytr), _ = corpus
    adv, y = adversarial_training_set(tr[:60], ytr[:60], ["intrude", "visual"], seed=0)
    both, y2 = adversarial_training_set(tr[:60], ytr[:60], ["intrude", "visual"], seed=0, clean_copies=True)
    assert both == list(tr[:60]) + adv and list(y2) == list(ytr[:60]) * 2
    with pytest.raises(TypeError, match="clean_copies"):
        adversarial_training_set(tr[:6], ytr[:6], ["intrude"], clean_copies="yes")


def test_the_experiments_defense_part_measures_the_paper_effects_row(tiny_bert, corpus, clean_model):
    """With ``defense.enabled`` (as in the paper and paper-cpu presets) the Table 3 row of paper_effects is
    measured from the run's own defense table, not "not tested"."""
    from robustsuite_common.config import override
    from robustsuite_common.effects import recheck_paper_effects
    from robustsuite_common.experiment import Split
    from zeroe_perturb import experiment as ex
    from zeroe_perturb.experiment.effects import defense_metrics, effects_spec, measure_effects

    _, tok = tiny_bert
    (tr, ytr), (te, yte) = corpus
    attacks = ["disemvowel", "truncate", "visual"]
    cfg = override(ex.preset("paper-cpu"), {
        "classification.n": 60, "attack.attacks": attacks, "attack.levels": [0.5, 0.8], "seeds.n_seeds": 1,
        "seeds.n_boot": 200, "pairs.enabled": False, "multilabel.enabled": False, "tagging.enabled": False,
        "defense.n_train": 200, "defense.epochs": 1, "defense.lr": 3e-3, "defense.max_length": 48,
        "defense.one_one": attacks, "defense.leave_one_out": attacks})
    models = ex.Models(classifier=HFTextClassifier(clean_model, tok, max_length=48))
    data = ex.Data(classification=Split(te, np.array(yte)), train=Split(tr, np.array(ytr)))
    res = ex.run(models, data, cfg, progress=False)
    assert "defense" in res.tables and "defense_ranking" in res.tables
    assert res.metrics["defense_one_one_minus_loo"] == defense_metrics(res.tables, seed=cfg.seed)[
        "defense_one_one_minus_loo"]
    rows = dict(zip((e.key for e in effects_spec()), res.tables["paper_effects"].records(), strict=True))
    assert rows["defense_ordering"]["verdict"] != "not tested"
    m = res.metric("defense_one_one_minus_loo")
    assert (rows["defense_ordering"]["low"], rows["defense_ordering"]["high"]) == m.interval.ci
    assert "6 attacked cells" in m.label and "defense_loo_minus_one_one_off" in res.metrics
    assert recheck_paper_effects(res.tables["paper_effects"], effects_spec(), measure_effects(res.metrics)) == []
