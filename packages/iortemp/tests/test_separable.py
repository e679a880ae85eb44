"""Defect 1: a perfectly classified validation set must not blind the detector (NLL calibration -> T -> 0)."""

import math

import torch

import iortemp
from robustsuite_common.intervals import proportion_of


def _separable_val(net, xv, yv):
    ok = net(xv).argmax(1) == yv
    assert ok.float().mean() < 1  # the full validation split is not separable ...
    return xv[ok], yv[ok]  # ... its correctly classified part is


def test_fit_temperature_reports_the_separable_case_and_bounds_t(digits_model):
    net, (xv, yv), _ = digits_model
    xs, ys = _separable_val(net, xv, yv)
    z = iortemp.logits64(iortemp.TemperatureScaled(net, temperature=0.005), xs)
    fit = iortemp.fit_temperature(z, ys.numpy())
    assert fit.separable
    # the unbounded NLL optimum sits at the search edge; the bounded T makes the mean confidence equal the
    # one-sided 95 % lower bound of the accuracy a perfectly classified set of this size supports
    n = len(ys)
    assert math.isclose(iortemp.confidence_stats(z, temperature=fit.temperature).mean, 0.05 ** (1 / n), rel_tol=1e-9)
    assert fit.temperature > 1.0  # served logits are 200x too sharp: the bound undoes most of it
    # scale equivariance: the same set served at T_d = 1 gives a 200x smaller bounded T
    fit1 = iortemp.fit_temperature(iortemp.logits64(net, xs), ys.numpy())
    assert math.isclose(fit1.temperature * 200, fit.temperature, rel_tol=1e-6)
    # a non-separable set keeps the exact NLL optimum
    full = iortemp.fit_temperature(iortemp.logits64(net, xv), yv.numpy())
    assert not full.separable
    assert full.temperature == iortemp.calibrate_temperature(iortemp.logits64(net, xv), yv.numpy())
    assert fit.to_dict()["separable"] is True


def test_detector_flags_overconfident_model_on_separable_validation_set(digits_model):
    net, (xv, yv), (xt, yt) = digits_model
    xs, ys = _separable_val(net, xv, yv)
    pgd = iortemp.PGDLinf(eps=0.15, steps=10, random_start=False)
    up = iortemp.TemperatureScaled(net, temperature=0.005)
    base = iortemp.evaluate_attack(net, xt, yt, pgd)
    for optimise in (False, True):
        rep = iortemp.detect_ior(up, xt, yt, pgd, val_inputs=xs, val_labels=ys, optimise=optimise,
                                 max_evaluations=6)
        assert rep.separable and "separable" in rep.verdict
        assert rep.opt is not None  # the separable case falls back to an attack-optimised temperature
        plain = proportion_of(rep.plain.correct_adversarial)
        best = proportion_of(min(rep.cal, rep.opt, key=lambda e: e.adversarial_accuracy).correct_adversarial)
        assert plain.above(proportion_of(base.correct_adversarial))  # the illusion is there ...
        assert plain.above(best)  # ... and the adversary's temperature removes it
        assert rep.illusion
    # the base model on the same separable set: no illusion
    rep = iortemp.detect_ior(net, xt, yt, pgd, val_inputs=xs, val_labels=ys, max_evaluations=6)
    assert rep.separable and not rep.illusion
    assert torch.equal(xs, _separable_val(net, xv, yv)[0])
