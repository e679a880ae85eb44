"""The audit's ``temperature-illusion`` check: a model whose logits are scaled ×1000 (extreme confidence, no
gradient for PGD) is flagged, the honest model is not; each rule's boundary; the ``audit`` preset of the
experiment carries the check in its Result."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from scipy.stats import binom

import iortemp
from iortemp import experiment as ex
from iortemp.audit import _one_sided_mcnemar
from robustsuite_common.config import override
from robustsuite_common.experiment import Split
from robustsuite_common.testing import transformed
from robustsuite_common.verdict import Check, apply_fdr

N = 60


def Scaled(model, factor):  # noqa: N802 (read as the model class it builds)
    """The model with its logits multiplied by ``factor`` (same predictions, extreme confidence)."""
    return transformed(model, outputs=lambda z: z * factor)


@pytest.fixture(scope="module")
def points(digits_model):
    net, _, (xt, yt) = digits_model
    return net, xt[:N], yt[:N]


@pytest.fixture(scope="module")
def checks(points):
    net, x, y = points
    return {name: iortemp.temperature_illusion_check(m, x, y, eps=0.1)
            for name, m in (("honest", net), ("x1000", Scaled(net, 1000.0)))}


def test_logits_scaled_x1000_are_flagged_and_the_honest_model_passes(checks, points):
    net, x, y = points
    bad, good = checks["x1000"], checks["honest"]
    assert bad.id == "temperature-illusion" and bad.group == "attack-strength" and bad.n == N
    # the plain attack is fooled: most points it leaves robust fall at the calibrated temperature
    assert bad.statistic > 0.3 and bad.interval[0] > 0.05 and bad.p_value < 1e-6
    assert bad.status == "warn"  # mean confidence ~1 before the p-value is read
    assert apply_fdr([bad])[0].status == "fail"
    assert abs(good.statistic) <= 0.05 and good.interval[0] <= 0 and good.p_value > 0.05
    assert apply_fdr([good])[0].status == "pass"
    # the statistic is the plain minus the best-temperature robust accuracy, computed independently here
    scaled, pgd = Scaled(net, 1000.0), iortemp.PGDLinf(eps=0.1, steps=10)
    plain = iortemp.evaluate_attack(scaled, x, y, pgd).adversarial_accuracy
    t_cal = iortemp.fit_temperature(iortemp.logits64(scaled, x), y).temperature
    cal = iortemp.evaluate_attack(scaled, x, y, pgd, temperature=t_cal).adversarial_accuracy
    assert plain - cal - 1e-12 <= bad.statistic <= plain  # best of cal/opt is at most cal's accuracy
    assert Check.from_dict(json.loads(json.dumps(bad.to_dict()))) == bad


def test_l2_threat_model_flags_the_scaled_model(points):
    net, x, y = points
    bad = iortemp.temperature_illusion_check(Scaled(net, 1000.0), x[:30], y[:30], eps=1.0, norm="L2", steps=5,
                                             max_evaluations=2)
    assert "L2" in bad.rule and bad.interval[0] > 0 and apply_fdr([bad])[0].status == "fail"


def test_rule_boundaries(points, checks):
    net, x, y = points
    bad = checks["x1000"]
    # the drop threshold: a significant drop just above it fails, one equal to it only warns
    above = iortemp.temperature_illusion_check(Scaled(net, 1000.0), x, y, eps=0.1, threshold=bad.statistic - 1e-6)
    at = iortemp.temperature_illusion_check(Scaled(net, 1000.0), x, y, eps=0.1, threshold=bad.statistic)
    assert above.status_if_significant == "fail" and at.status_if_significant == "warn"
    assert apply_fdr([at])[0].status == "warn"
    # the confidence limit: a mean clean confidence just above it warns, one equal to it passes
    conf = iortemp.confidence_stats(iortemp.logits64(net, x)).mean
    assert 0.5 < conf < 0.99
    over = iortemp.temperature_illusion_check(net, x, y, eps=0.1, confidence_limit=conf - 1e-9)
    equal = iortemp.temperature_illusion_check(net, x, y, eps=0.1, confidence_limit=conf)
    assert over.status == "warn" and equal.status == "pass"


def test_one_sided_mcnemar_is_the_exact_binomial_tail():
    for only_plain, only_best in ((5, 0), (7, 2), (0, 4), (3, 3)):
        m = only_plain + only_best
        want = binom.sf(only_plain - 1, m, 0.5)  # P(X >= only_plain)
        assert _one_sided_mcnemar(only_plain, only_best) == pytest.approx(want, rel=1e-12)
    assert _one_sided_mcnemar(0, 0) == 1.0


def test_not_applicable_without_a_correct_point_and_bad_arguments(points):
    net, x, y = points
    wrong = torch.as_tensor((iortemp.predict(net, x[:8]) + 1) % 10)
    c = iortemp.temperature_illusion_check(net, x[:8], wrong, eps=0.1, steps=2)
    assert c.status == "not-applicable" and c.statistic is None and c.n == 8
    for kw, match in (({"norm": "L1"}, "norm"), ({"eps": 1.5}, "eps"), ({"eps": 0.0, "norm": "L2"}, "eps"),
                      ({"threshold": 1.0}, "threshold"), ({"confidence_limit": 1.0}, "confidence_limit"),
                      ({"max_evaluations": 0}, "max_evaluations"), ({"val_inputs": x}, "val_inputs")):
        with pytest.raises(ValueError, match=match):
            iortemp.temperature_illusion_check(net, x, y, **({"eps": 0.1} | kw))
    with pytest.raises(TypeError, match="model"):
        iortemp.temperature_illusion_check(lambda t: t, x, y, eps=0.1)


def test_audit_preset_runs_the_check_alone_and_the_result_round_trips(points):
    net, x, y = points
    cfg = override(ex.preset("audit"), audit__n=24, audit__steps=3, audit__max_evaluations=2)
    assert ex.preset("audit").audit.only and ex.preset("demo").audit.enabled is False
    models = ex.Models(vision=Scaled(net, 1000.0))
    res = ex.run(models, ex.Data(vision_test=Split(x, y)), cfg, progress=False)
    (c,) = res.checks
    assert c.id == "temperature-illusion" and c.n == 24 and c.interval[0] > 0
    assert list(res.tables) == ["audit_checks"] and res.metric("temperature_illusion_drop").value == c.statistic
    again = ex.Result.from_dict(json.loads(json.dumps(res.to_dict())))
    assert again.checks == res.checks and again.to_dict() == res.to_dict()
    with pytest.raises(ValueError, match="eps"):
        override(ex.preset("audit"), audit__eps=2.0)
    assert override(ex.preset("audit"), audit__eps=2.0, audit__norm="L2").audit.eps == 2.0
    with pytest.raises(TypeError, match="models.vision"):
        ex.run(ex.Models(), ex.Data(vision_test=Split(x, y)), cfg, progress=False)
    assert np.isfinite(res.metric("temperature_illusion_p").value)
