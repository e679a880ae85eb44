"""IOR check for vision models with PGD (gradient masking by a T_d = 0.005 wrapper), on sklearn digits."""

import numpy as np
import pytest
import torch

import iortemp
from robustsuite_common.intervals import proportion_of


def test_pgd_ior_on_overconfident_vision_model(digits_model):
    net, (xv, yv), (xt, yt) = digits_model
    pgd = iortemp.PGDLinf(eps=0.15, steps=10, random_start=False)
    up = iortemp.TemperatureScaled(net, temperature=0.005)
    rep = iortemp.detect_ior(up, xt, yt, pgd, val_inputs=xv, val_labels=yv, optimise=True, max_evaluations=6)
    base = iortemp.evaluate_attack(net, xt, yt, pgd)
    cp = proportion_of
    plain, cal, opt = (cp(e.correct_adversarial) for e in (rep.plain, rep.cal, rep.opt))
    assert plain.above(cp(base.correct_adversarial)) and plain.above(cal) and plain.above(opt)
    assert cal.overlaps(cp(base.correct_adversarial))
    # the search's optimum on the validation set is no worse than the calibrated temperature there
    q_cal = iortemp.evaluate_attack(up, xv, yv, pgd, temperature=rep.calibrated_temperature).adversarial_accuracy
    assert rep.search.adversarial_accuracy <= q_cal
    assert rep.illusion
    import json

    json.dumps(rep.to_dict())


def test_pgd_determinism_no_mutation_and_bounds(digits_model):
    net, _, (xt, yt) = digits_model
    x0 = xt.clone()
    pgd = iortemp.PGDLinf(eps=0.1, steps=5)
    a = pgd(net, xt, yt, seed=3)
    b = pgd(net, xt, yt, seed=3)
    assert torch.equal(a.adversarial, b.adversarial)
    assert torch.equal(xt, x0)
    assert (a.adversarial - xt).abs().max() <= 0.1 + 1e-6
    assert a.adversarial.min() >= 0 and a.adversarial.max() <= 1
    # a batch equals the samples attacked in two halves (no random start)
    det = iortemp.PGDLinf(eps=0.1, steps=5, random_start=False, batch_size=7)
    full = iortemp.PGDLinf(eps=0.1, steps=5, random_start=False)(net, xt, yt).adversarial
    assert torch.allclose(det(net, xt, yt).adversarial, full, atol=1e-6)


def test_pgd_bad_input(digits_model):
    net, _, (xt, yt) = digits_model
    with pytest.raises(ValueError, match="eps"):
        iortemp.PGDLinf(eps=0)
    with pytest.raises(ValueError, match="x"):
        iortemp.PGDLinf()(net, xt[:, 0], yt)
    with pytest.raises(ValueError, match="labels"):
        iortemp.PGDLinf()(net, xt, yt[:-1])
    assert np.isfinite(iortemp.logits64(iortemp.TemperatureScaled(net, temperature=1e7), xt)).all()


def test_robust_accuracy_defaults_to_standard_autoattack(digits_model):
    """Issue 27: a robust accuracy that names no attack is pyautoattack's standard evaluation with the same seed,
    and it is never above PGD's on the same points; PGD under an extreme temperature is fooled, AutoAttack not."""
    from robustsuite_common.autoattack import autoattack

    net, _, (xt, yt) = digits_model
    x, y = xt[:32], yt[:32]
    default = iortemp.robust_accuracy(net, x, y, eps=0.3, seed=1)
    direct = autoattack(net, x, y, eps=0.3, seed=1)
    assert default.robust == tuple(bool(v) for v in direct.robust) and "AutoAttack (standard" in default.attack
    pgd = iortemp.robust_accuracy(net, x, y, attack="pgd", eps=0.3, steps=10, seed=1)
    assert default.value <= pgd.value and pgd.attack.startswith("PGD-10")
    up = iortemp.TemperatureScaled(net, temperature=0.005)
    fooled = iortemp.robust_accuracy(up, x, y, attack="pgd", eps=0.3, steps=10, seed=1)
    assert fooled.interval.above(iortemp.robust_accuracy(up, x, y, eps=0.3, seed=1).interval)
    with pytest.raises(ValueError, match="attack"):
        iortemp.robust_accuracy(net, x, y, attack="fgsm")
