"""The audit's ``uncertainty-under-attack`` check: the standard digits CNN's entropy stops detecting its errors under
attack at ε = 0.1 (fail), the adversarially trained one keeps it at a small ε (pass); the AUROC is the one an
independent computation gives on the same attacked entropies; each rule's boundary; the ``audit`` preset."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from sklearn.metrics import roc_auc_score

import uncspan
from robustsuite_common.config import override
from robustsuite_common.experiment import Split
from robustsuite_common.intervals import Interval
from robustsuite_common.verdict import Check
from uncspan import experiment
from uncspan.audit import _status

N = 200


@pytest.fixture(scope="module")
def points(digits):
    _, _, xte, yte = digits
    return xte[:N], yte[:N]


def test_standard_model_fails_at_its_budget_the_trained_one_passes_a_small_one(std_model, at_model, points):
    x, y = points
    bad = uncspan.uncertainty_under_attack_check(std_model, x, y, eps=0.1)
    good = uncspan.uncertainty_under_attack_check(at_model, x, y, eps=0.01)
    assert bad.id == "uncertainty-under-attack" and bad.group == "lenses" and bad.n == N
    assert bad.status == "fail" and bad.interval[1] <= 0.5
    assert good.status == "pass" and good.statistic > 0.9
    assert Check.from_dict(json.loads(json.dumps(bad.to_dict()))) == bad


def test_statistic_is_the_auroc_of_the_attacked_entropies(std_model, points):
    """Recomputed here: the over-confidence attack on the misclassified points, the under-confidence attack on the
    correct ones, and scikit-learn's AUROC with the misclassified points positive."""
    x, y = points
    c = uncspan.uncertainty_under_attack_check(std_model, x, y, eps=0.03, n_boot=200)
    with torch.no_grad():
        correct = (std_model(x).argmax(1) == y).numpy()
    kw = dict(steps=20, keep_adv=False)
    under = uncspan.UnderConfidenceAttack(objective=uncspan.STRONGEST_UNDER_OBJECTIVES, **kw)(
        std_model, x[correct], 0.03, seed=1)
    over = uncspan.OverConfidenceAttack(**kw)(std_model, x[~correct], 0.03, seed=0)
    scores = np.concatenate([under.entropy_adv, over.entropy_adv])
    is_error = np.concatenate([np.zeros(correct.sum()), np.ones((~correct).sum())])
    assert c.statistic == pytest.approx(roc_auc_score(is_error, scores), abs=1e-12)
    assert 0.5 < c.statistic < 0.95  # between chance and the clean AUROC: a partial loss


def _iv(est, lo, hi):
    return Interval(est, lo, hi)


def test_rule_boundaries():
    ok = _iv(0.0, 0.0, 0.0)
    assert _status(_iv(0.4, 0.3, 0.5), ok) == "fail"  # upper bound at chance
    assert _status(_iv(0.4, 0.3, 0.5 + 1e-9), ok) == "pass"  # just above chance, no drop
    assert _status(_iv(0.8, 0.7, 0.9), _iv(0.1, 1e-9, 0.2)) == "warn"  # drop interval just above 0
    assert _status(_iv(0.8, 0.7, 0.9), _iv(0.1, 0.0, 0.2)) == "pass"  # drop interval touching 0
    assert _status(_iv(0.4, 0.3, 0.5), _iv(0.1, 0.05, 0.2)) == "fail"  # chance outranks the drop


def test_not_applicable_and_bad_arguments(std_model, points):
    x, y = points
    with torch.no_grad():
        pred = std_model(x[:20]).argmax(1)
    c = uncspan.uncertainty_under_attack_check(std_model, x[:20], pred, eps=0.1, steps=1)
    assert c.status == "not-applicable" and "at least two" in c.detail
    for kw, match in (({"norm": "L1"}, "norm"), ({"eps": 1.5}, "eps"), ({"eps": 0.0, "norm": "L2"}, "eps"),
                      ({"steps": 0}, "steps"), ({"n_boot": 0}, "n_boot"), ({"seed": None}, "seed")):
        with pytest.raises(ValueError, match=match):
            uncspan.uncertainty_under_attack_check(std_model, x, y, **({"eps": 0.1} | kw))


def test_audit_preset_runs_the_check_alone_and_the_result_round_trips(std_model, points):
    x, y = points
    cfg = override(experiment.preset("audit"), audit__n=60, audit__steps=5, metrics__auroc_n_boot=200)
    assert experiment.preset("audit").audit.only and not experiment.preset("demo").audit.enabled
    res = experiment.run(experiment.Models({"std": std_model}), experiment.Data(test=Split(x, y)), cfg,
                         progress=False)
    (c,) = res.checks
    assert c.id == "uncertainty-under-attack" and c.n == 60 and "model std" in c.evidence
    assert list(res.tables) == ["audit_checks"]
    again = experiment.Result.from_dict(json.loads(json.dumps(res.to_dict())))
    assert again.checks == res.checks and again.to_dict() == res.to_dict()
