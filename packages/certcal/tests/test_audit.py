"""The audit's ``calibration-under-attack`` check: the statistic is the ECE increase of the strongest β-ACE attack,
recomputed here from the attacks themselves; a budget that barely moves the ECE passes, one that moves it by tens of
points fails; each rule's boundary; the ``audit`` preset and the experiment's own β-ACE table give the check."""

from __future__ import annotations

import json

import pytest

import certcal
from certcal import experiment
from certcal.audit import FAIL_INCREASE, WARN_INCREASE, _status
from robustsuite_common.config import override
from robustsuite_common.experiment import Split
from robustsuite_common.verdict import Check

N = 100


@pytest.fixture(scope="module")
def points(digits):
    _, _, xte, yte = digits
    return xte[:N], yte[:N]


def test_statistic_is_the_worst_attacks_ece_increase(plain_model, points):
    x, y = points
    c = certcal.calibration_under_attack_check(plain_model, x, y, eps=0.1, steps=10, n_boot=200)
    assert c.id == "calibration-under-attack" and c.group == "lenses" and c.n == N
    clean = None
    attacked = []
    for name in certcal.ACE_CONFIGURATIONS:
        r = certcal.BetaACE.from_configuration(name, norm="linf", steps=10)(plain_model, x, y, 0.1)
        assert r.prediction_unchanged
        ece = certcal.expected_calibration_error
        clean = ece(r.clean_confidence, r.correct)
        attacked.append(ece(r.adv_confidence, r.correct))
    assert c.statistic == pytest.approx(max(attacked) - clean, abs=1e-12)
    assert c.statistic > FAIL_INCREASE and c.interval[0] > WARN_INCREASE and c.status == "fail"
    assert Check.from_dict(json.loads(json.dumps(c.to_dict()))) == c


def test_a_tiny_budget_passes_and_l2_runs(plain_model, points):
    x, y = points
    small = certcal.calibration_under_attack_check(plain_model, x, y, eps=0.002, steps=5, n_boot=200)
    assert small.status == "pass" and abs(small.statistic) < WARN_INCREASE
    l2 = certcal.calibration_under_attack_check(plain_model, x[:40], y[:40], eps=1.0, norm="L2", steps=5,
                                                configurations=("lower_label",), n_boot=100)
    assert "L2" in l2.rule and l2.statistic > 0


def test_rule_boundaries():
    w, f = WARN_INCREASE, FAIL_INCREASE
    assert _status(0.05, (w, 0.08), w, f) == "pass"  # interval touching the warn margin
    assert _status(0.05, (w + 1e-9, 0.08), w, f) == "warn"  # just above it
    assert _status(f, (0.05, 0.15), w, f) == "warn"  # increase equal to the fail limit
    assert _status(f + 1e-9, (0.05, 0.15), w, f) == "fail"  # just above it
    assert _status(0.3, (0.0, 0.5), w, f) == "pass"  # a large but unresolved increase
    assert _status(0.3, None, w, f) == "pass"  # no interval: nothing is shown
    assert _status(0.01, (1e-9, 0.02), 0.0, f) == "warn"  # warn_increase=0: the literal "interval above 0"


def test_bad_arguments(plain_model, points):
    x, y = points
    for kw, match in (({"norm": "L1"}, "norm"), ({"eps": 1.5}, "eps"), ({"eps": 0.0, "norm": "L2"}, "eps"),
                      ({"configurations": ()}, "configurations"), ({"configurations": ("lower",)}, "configurations"),
                      ({"fail_increase": 1.0}, "fail_increase"), ({"n_boot": 0}, "n_boot")):
        with pytest.raises(ValueError, match=match):
            certcal.calibration_under_attack_check(plain_model, x, y, **({"eps": 0.1} | kw))


def test_audit_preset_runs_the_check_alone_and_the_result_round_trips(plain_model, points):
    x, y = points
    cfg = override(experiment.preset("audit"), {"audit.n": 40, "ace.steps": 3, "calibration.n_boot": 100})
    assert experiment.preset("audit").audit.only and not experiment.preset("demo").audit.enabled
    res = experiment.run(experiment.Models(base=plain_model), experiment.Data(train=None, test=Split(x, y)), cfg,
                         progress=False)
    (c,) = res.checks
    assert c.id == "calibration-under-attack" and c.n == 40 and list(res.tables) == ["audit_checks"]
    assert res.value("ece_increase_under_attack") == c.statistic
    again = experiment.Result.from_dict(json.loads(json.dumps(res.to_dict())))
    assert again.checks == res.checks and again.to_dict() == res.to_dict()
    with pytest.raises(ValueError, match="data.train"):
        experiment.run(experiment.Models(base=plain_model), experiment.Data(train=None, test=Split(x, y)),
                       experiment.preset("demo"), progress=False)


def test_the_experiments_own_ace_table_gives_the_same_check(plain_model, points):
    from certcal.experiment.audit import check_of_benchmark

    x, y = points
    cfg = override(experiment.preset("audit"), {"ace.steps": 3, "calibration.n_boot": 100})
    bench = certcal.ace_benchmark(plain_model, x[:40], y[:40], eps={"linf": cfg.ace.eps_linf}, steps=3, n_boot=100)
    alone = certcal.calibration_under_attack_check(plain_model, x[:40], y[:40], eps=cfg.ace.eps_linf, steps=3,
                                                   n_boot=100)
    from_table = check_of_benchmark(bench, cfg)
    assert from_table.statistic == alone.statistic and from_table.interval == alone.interval
    assert from_table.status == alone.status
